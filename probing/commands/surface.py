"""``probing surface``: where each head's attention goes, regardless of syntax (Clark et al. 2019, sec. 3)."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import EngineCommand, add_engine_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "With --output S.json, also writes S-surface.png (the paper's Figure 2: attention to the first special "
        "token, to separators, to . and ,, to the previous/next token and itself) and S-entropy.png (Figure 4). "
        "Layers and heads count from 1 in figures and tables, from 0 in the JSON."
    )
    add_engine_options(parser)


def run(args: argparse.Namespace) -> int:
    from probing.analyses.surface.accumulator import SurfaceAccumulator
    from probing.analyses.surface.report import layer_table
    from probing.engine.readings import READINGS
    from probing.engine.token_roles import token_names
    from probing.report.figures import entropy_figure, surface_figure

    with EngineCommand(args, analysis="surface", figures=("surface", "entropy")) as command:
        loaded = command.loaded
        heads = READINGS[args.attention].heads(loaded.num_heads)
        surface = SurfaceAccumulator(loaded.num_layers, heads, causal=loaded.is_causal, token_names=token_names(loaded))
        stats = command.run([surface], "surface statistics")
        if not command.is_main:
            return 0
        result = command.result("surface", stats, surface, {})
        print(layer_table(result))
        if command.write(result):
            for path in (surface_figure(result, command.figure_path("surface")),
                         entropy_figure(result, command.figure_path("entropy"))):
                print(f"wrote {path}", file=sys.stderr)
        command.hint()
    return 0
