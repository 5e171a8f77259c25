"""Comparing two checkpoints' attention, head by head (Kovaleva et al. 2019).
"""

from probing.plugins import Analysis, register

register(Analysis(
    name="compare",
    accumulator="probing.analyses.compare.accumulator:CompareAccumulator",
    payload="probing.results.schema:PAYLOADS.compare",
))
