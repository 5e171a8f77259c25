"""``probing gradients``: how much the LM loss depends on attention to [SEP] (Clark et al. 2019, Fig. 3)."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import EngineCommand, add_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.gradients.options import OPTIONS

    parser.epilog = (
        "Needs a checkpoint with a trained LM head: a masked LM (a seeded 15% of each unit's non-special tokens "
        "masked) or a causal LM (every next token). Sentence-embedding checkpoints such as all-MiniLM-L6-v2 have "
        "none and get an error. The loss of a batch is the sum of each unit's mean cross-entropy. With --output "
        "G.json, G-gradients.png shows mean |dL/dA| per layer for attention to the first special token, "
        "separators, . and , and other tokens, beside the attention itself."
    )
    add_options(parser, OPTIONS)


def run(args: argparse.Namespace) -> int:
    from probing.analyses.gradients.options import GradientsOptions
    from probing.analyses.gradients.report import gradient_table
    from probing.analyses.gradients.run import gradients
    from probing.report.figures import gradient_figure

    with EngineCommand(args, analysis="gradients", figures=("gradients",), start=False) as command:
        result = gradients(*command.specs(GradientsOptions), start=command.start)
        if result is None:  # another process of a torchrun: rank 0 writes
            return 0
        print(gradient_table(result))
        if command.write(result):
            print(f"wrote {gradient_figure(result, command.figure_path('gradients'))}", file=sys.stderr)
        command.hint()
    return 0
