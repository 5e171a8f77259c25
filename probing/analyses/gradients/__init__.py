"""How much the language-model loss depends on attention to [SEP] and the sink (Clark et al. 2019, Figure 3).
"""

from probing.plugins import Analysis, register

register(Analysis(
    name="gradients",
    accumulator="probing.analyses.gradients.accumulator:GradientAccumulator",
    payload="probing.results.schema:PAYLOADS.gradients",
))
