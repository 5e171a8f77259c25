"""``probing patterns``: each head's attention pattern type (Kovaleva et al. 2019, section 4.1)."""

from __future__ import annotations

import argparse

from probing.commands.common import add_options, run_analysis


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.patterns.options import OPTIONS

    parser.epilog = (
        "Types follow the rules documented in probing/analyses/patterns/accumulator.py and docs/dark-secrets.md; 'block' "
        "needs --pairs. With --output P.json, P-patterns.png shows every head's type, and --maps N draws the "
        "first N units' maps, one figure per layer (P-maps-layerNN.png). Layers and heads count from 1 in tables "
        "and figures; the JSON counts from 0."
    )
    add_options(parser, OPTIONS)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from probing.analyses.patterns.options import PatternsOptions
    from probing.analyses.patterns.report import type_table
    from probing.analyses.patterns.run import patterns

    def show(result: dict) -> None:
        print(f"{result['model']['name']}: {result['units']} units ({result['paired_units']} pairs), "
              f"{result['input']['skipped']['too_long']} skipped as too long")
        print(type_table(np.array(result["types"], dtype=object)))
        if "agreement" in result:
            found = result["agreement"]
            print(f"agreement with {args.hand_labels}: {found['correct']}/{found['heads']} heads "
                  f"({100 * found['accuracy']:.0f}%)")

    return run_analysis(args, patterns, PatternsOptions, analysis="patterns", show=show)

