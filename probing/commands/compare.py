"""``probing compare``: per-head cosine similarity of two checkpoints' attention maps (Kovaleva et al. 2019, sec. 4.4)."""

from __future__ import annotations

import argparse

from probing.commands.common import AnalysisCommand


def show(result: dict, args: argparse.Namespace) -> None:
    """The similarity per layer, the second model named as untrained when --second-random-init made it so."""
    from probing.analyses.compare.report import layer_table

    print(layer_table(result, second_random_init=args.second_random_init))


COMMAND = AnalysisCommand(
    "compare", show=show,
    epilog=(
        "Every query row's attention distribution of --model (e.g. the pre-trained checkpoint) is compared with "
        "the same row of --second-model (e.g. the fine-tuned one): the cosine, padding excluded as rows and keys, "
        "averaged over rows per head and per layer. Both must give the same token ids and have the same shape. "
        "With --output C.json, C-compare.png is the layer x head map. Layers and heads count from 1 in tables."
    ),
)
add_arguments = COMMAND.add_arguments
run = COMMAND.run
