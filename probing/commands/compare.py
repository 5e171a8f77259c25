"""``probing compare``: per-head cosine similarity of two checkpoints' attention maps (Kovaleva et al. 2019, sec. 4.4)."""

from __future__ import annotations

import argparse

from probing.commands.common import add_options, run_analysis


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.compare.options import OPTIONS

    parser.epilog = (
        "Every query row's attention distribution of --model (e.g. the pre-trained checkpoint) is compared with "
        "the same row of --second-model (e.g. the fine-tuned one): the cosine, padding excluded as rows and keys, "
        "averaged over rows per head and per layer. Both must give the same token ids and have the same shape. "
        "With --output C.json, C-compare.png is the layer x head map. Layers and heads count from 1 in tables."
    )
    add_options(parser, OPTIONS)


def run(args: argparse.Namespace) -> int:
    from probing.analyses.compare.options import CompareOptions
    from probing.analyses.compare.report import layer_table
    from probing.analyses.compare.run import compare

    return run_analysis(args, compare, CompareOptions, analysis="compare",
                        show=lambda result: print(layer_table(result, second_random_init=args.second_random_init)))
