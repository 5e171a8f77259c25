"""Disabling heads: what a metric loses when chosen heads attend uniformly (Michel et al. 2019; Kovaleva et al. 2019).
"""

from probing.plugins import Analysis, register

register(Analysis(
    name="ablation",
    accumulator="probing.analyses.ablation.accumulator:AblationAccumulator",
    payload="probing.results.schema:PAYLOADS.ablation",
))
