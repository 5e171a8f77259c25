"""Comparing two checkpoints' attention, head by head (Kovaleva et al. 2019).
"""

from probing.plugins import Analysis, Command, register

register(Analysis(
    name="compare",
    accumulator="probing.analyses.compare.accumulator:CompareAccumulator",
    payload="probing.analyses.compare.payload:PAYLOAD",
    commands=(
        Command("compare", "per-head cosine similarity of two checkpoints' attention maps (Kovaleva et al. 2019)",
                "probing.commands.compare", order=120, library="probing.analyses.compare.run:compare",
                figures="probing.analyses.compare.report:figures"),
    ),
))
