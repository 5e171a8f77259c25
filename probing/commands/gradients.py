"""``probing gradients``: how much the LM loss depends on attention to [SEP] (Clark et al. 2019, Fig. 3)."""

from __future__ import annotations

import argparse

from probing.commands.common import add_options, run_analysis


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

    return run_analysis(args, gradients, GradientsOptions, analysis="gradients",
                        show=lambda result: print(gradient_table(result)))

