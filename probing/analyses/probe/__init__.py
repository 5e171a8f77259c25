"""The dependency-head probe (Clark et al. 2019, sections 4.1-4.2): counts, tables, plots, the Python API.
"""

from probing.plugins import Analysis, register

register(Analysis(
    name="probe",
    accumulator="probing.analyses.probe.accumulator:ProbeAccumulator",
    payload="probing.results.schema:PAYLOADS.probe",
    tables="probing.analyses.probe.leaderboard:leaderboard_tables",
    extra={"result": "probing.analyses.probe.result:ProbeResult"},  # what probing.read() gives for its files
))
