"""``probing patterns``: each head's attention pattern type (Kovaleva et al. 2019, section 4.1)."""

from __future__ import annotations

import argparse

from probing.commands.common import AnalysisCommand


def show(result: dict, args: argparse.Namespace) -> None:
    """What was read, every head's type and, with --hand-labels, how often the types agree with them."""
    import numpy as np

    from probing.analyses.patterns.report import type_table

    print(f"{result['model']['name']}: {result['units']} units ({result['paired_units']} pairs), "
          f"{result['input']['skipped']['too_long']} skipped as too long")
    print(type_table(np.array(result["types"], dtype=object)))
    if "agreement" in result:
        found = result["agreement"]
        print(f"agreement with {args.hand_labels}: {found['correct']}/{found['heads']} heads "
              f"({100 * found['accuracy']:.0f}%)")


COMMAND = AnalysisCommand(
    "patterns", show=show,
    epilog=(
        "Types follow the rules documented in probing/analyses/patterns/accumulator.py and docs/dark-secrets.md; 'block' "
        "needs --pairs. With --output P.json, P-patterns.png shows every head's type, and --maps N draws the "
        "first N units' maps, one figure per layer (P-maps-layerNN.png). Layers and heads count from 1 in tables "
        "and figures; the JSON counts from 0."
    ),
)
add_arguments = COMMAND.add_arguments
run = COMMAND.run
