"""Jensen-Shannon distances between heads and their map by behaviour (Clark et al. 2019, section 6).
"""

from probing.plugins import Analysis, register

register(Analysis(
    name="heads",
    accumulator="probing.analyses.heads.accumulator:HeadsAccumulator",
    payload="probing.results.schema:PAYLOADS.heads",
))
