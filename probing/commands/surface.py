"""``probing surface``: where each head's attention goes, regardless of syntax (Clark et al. 2019, sec. 3)."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import EngineCommand, add_options


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
    from probing.report.figures import entropy_figure, surface_figure

    with EngineCommand(args, analysis="surface", figures=("surface", "entropy"), start=False) as command:
        result = surface(*command.specs(SurfaceOptions), start=command.start)
        if result is None:  # another process of a torchrun: rank 0 writes
            return 0
        print(layer_table(result))
        if command.write(result):
            for path in (surface_figure(result, command.figure_path("surface")),
                         entropy_figure(result, command.figure_path("entropy"))):
                print(f"wrote {path}", file=sys.stderr)
        command.hint()
    return 0
