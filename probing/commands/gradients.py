"""``probing gradients``: how much the LM loss depends on attention to [SEP] (Clark et al. 2019, Fig. 3)."""

from __future__ import annotations

from probing.commands.common import AnalysisCommand

COMMAND = AnalysisCommand(
    "gradients", table="probing.analyses.gradients.report:gradient_table",
    epilog=(
        "Needs a checkpoint with a trained LM head: a masked LM (a seeded 15% of each unit's non-special tokens "
        "masked) or a causal LM (every next token). Sentence-embedding checkpoints such as all-MiniLM-L6-v2 have "
        "none and get an error. The loss of a batch is the sum of each unit's mean cross-entropy. With --output "
        "G.json, G-gradients.png shows mean |dL/dA| per layer for attention to the first special token, "
        "separators, . and , and other tokens, beside the attention itself."
    ),
)
add_arguments = COMMAND.add_arguments
run = COMMAND.run
