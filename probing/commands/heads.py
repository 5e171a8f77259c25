"""``probing heads``: how alike heads attend (Jensen-Shannon), mapped by MDS (Clark et al. 2019, sec. 6)."""

from __future__ import annotations

from probing.commands.common import AnalysisCommand

COMMAND = AnalysisCommand(
    "heads", table="probing.analyses.heads.report:behaviour_table",
    epilog=(
        "The result holds the mean Jensen-Shannon divergence of every pair of heads, in nats, after adding "
        "1e-10 to each real key's weight and renormalising; MDS coordinates; behaviour labels and their "
        "thresholds. With --output H.json, H-heads.png is the MDS map coloured by behaviour and by layer. With "
        "--probe, the best head of each relation in that probing score result is circled and named."
    ),
)
add_arguments = COMMAND.add_arguments
run = COMMAND.run
