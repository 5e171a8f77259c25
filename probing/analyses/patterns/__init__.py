"""Kovaleva et al.'s (2019) pattern type of every head.
"""

from probing.plugins import Analysis, Command, register

register(Analysis(
    name="patterns",
    accumulator="probing.analyses.patterns.accumulator:PatternAccumulator",
    payload="probing.analyses.patterns.payload:PAYLOAD",
    checks=("probing.analyses.patterns.payload:types_fit_the_model",),
    commands=(
        Command("patterns", "attention pattern type of every head: vertical, diagonal, block, ... (Kovaleva et al. 2019)",
                "probing.commands.patterns", order=100, library="probing.analyses.patterns.run:patterns",
                figures="probing.analyses.patterns.report:figures"),
    ),
))
