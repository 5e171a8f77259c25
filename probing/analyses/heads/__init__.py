"""Jensen-Shannon distances between heads and their map by behaviour (Clark et al. 2019, section 6).
"""

from probing.plugins import Analysis, Command, register

register(Analysis(
    name="heads",
    accumulator="probing.analyses.heads.accumulator:HeadsAccumulator",
    payload="probing.analyses.heads.payload:PAYLOAD",
    checks=("probing.analyses.heads.payload:check_heads",),
    commands=(
        Command("heads", "Jensen-Shannon distances between heads, MDS map coloured by behaviour (Clark et al. sec. 6)",
                "probing.commands.heads", order=80, library="probing.analyses.heads.run:heads",
                figures="probing.analyses.heads.report:figures"),
    ),
))
