"""How much the language-model loss depends on attention to [SEP] and the sink (Clark et al. 2019, Figure 3).
"""

from probing.plugins import Analysis, Command, register

register(Analysis(
    name="gradients",
    accumulator="probing.analyses.gradients.accumulator:GradientAccumulator",
    payload="probing.analyses.gradients.payload:PAYLOAD",
    checks=("probing.analyses.gradients.payload:check_gradients",),
    commands=(
        Command("gradients", "gradient of the LM loss w.r.t. attention to [SEP] vs other tokens (Clark et al. Fig. 3)",
                "probing.commands.gradients", order=90, library="probing.analyses.gradients.run:gradients",
                figures="probing.analyses.gradients.report:figures"),
    ),
))
