"""Kovaleva et al.'s (2019) pattern type of every head.
"""

from probing.plugins import Analysis, register

register(Analysis(
    name="patterns",
    accumulator="probing.analyses.patterns.accumulator:PatternAccumulator",
    payload="probing.results.schema:PAYLOADS.patterns",
))
