"""``probing surface``: where each head's attention goes, regardless of syntax (Clark et al. 2019, sec. 3)."""

from __future__ import annotations

from probing.commands.common import AnalysisCommand

COMMAND = AnalysisCommand(
    "surface", table="probing.analyses.surface.report:layer_table",
    epilog=(
        "With --output S.json, also writes S-surface.png (the paper's Figure 2: attention to the first special "
        "token, to separators, to . and ,, to the previous/next token and itself) and S-entropy.png (Figure 4). "
        "Layers and heads count from 1 in figures and tables, from 0 in the JSON."
    ),
)
add_arguments = COMMAND.add_arguments
run = COMMAND.run
