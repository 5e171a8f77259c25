"""Disabling heads: what a metric loses when chosen heads attend uniformly (Michel et al. 2019; Kovaleva et al. 2019).
"""

from probing.plugins import Analysis, Command, register

register(Analysis(
    name="ablation",
    accumulator="probing.analyses.ablation.accumulator:AblationAccumulator",
    payload="probing.analyses.ablation.payload:PAYLOAD",
    checks=("probing.analyses.ablation.payload:versus_matches_the_conditions",
            "probing.analyses.ablation.payload:heads_exist_in_the_model"),
    tables="probing.analyses.ablation.board:leaderboard_tables",
    derived="probing.analyses.ablation.versus:versus_disagreement",
    extra={"result": "probing.analyses.ablation.result:AblationResult"},  # what probing.read() gives for its files
    commands=(
        Command("ablate", "disable heads (uniform attention) and measure the change in a metric (Kovaleva et al. 2019)",
                "probing.commands.ablate", order=130, library="probing.analyses.ablation.run:ablation",
                figures="probing.analyses.ablation.figures:figures"),
    ),
))
