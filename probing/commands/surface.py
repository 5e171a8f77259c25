"""``probing surface``: where each head's attention goes, regardless of syntax (Clark et al. 2019, sec. 3)."""

from __future__ import annotations

import argparse

from probing.commands.common import add_options, run_analysis


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.surface.options import OPTIONS

    parser.epilog = (
        "With --output S.json, also writes S-surface.png (the paper's Figure 2: attention to the first special "
        "token, to separators, to . and ,, to the previous/next token and itself) and S-entropy.png (Figure 4). "
        "Layers and heads count from 1 in figures and tables, from 0 in the JSON."
    )
    add_options(parser, OPTIONS)


def run(args: argparse.Namespace) -> int:
    from probing.analyses.surface.options import SurfaceOptions
    from probing.analyses.surface.report import layer_table
    from probing.analyses.surface.run import surface

    return run_analysis(args, surface, SurfaceOptions, analysis="surface", show=lambda result: print(layer_table(result)))

