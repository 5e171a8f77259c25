"""The dependency-head probe (Clark et al. 2019, sections 4.1-4.2): counts, tables, plots, the Python API.
"""

from probing.plugins import Analysis, Command, register

register(Analysis(
    name="probe",
    accumulator="probing.analyses.probe.accumulator:ProbeAccumulator",
    payload="probing.analyses.probe.payload:PAYLOAD",
    checks=("probing.analyses.probe.payload:counts_within_totals",),
    tables="probing.analyses.probe.leaderboard:leaderboard_tables",
    upgrade="probing.analyses.probe.payload:upgrade",
    extra={"result": "probing.analyses.probe.result:ProbeResult"},  # what probing.read() gives for its files
    commands=(
        Command("score", "score every attention head on a dependency treebank (Clark et al. 2019, sec. 4)",
                "probing.commands.score", order=10, library="probing.analyses.probe.heldout:probe"),
        Command("transfer", "one model's heads across languages: transfer matrices per relation and the atlas figure",
                "probing.commands.transfer", order=40, writes_result=False),
        Command("plot", "layer x head heatmaps of a result's accuracy per relation and direction (png, svg, pdf)",
                "probing.commands.plot", order=50, writes_result=False),
    ),
))
