"""``probing patterns``: each head's attention pattern type (Kovaleva et al. 2019, section 4.1)."""

from __future__ import annotations

import argparse
import csv
import sys

from probing.commands.common import EngineCommand, add_engine_options, non_negative_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Types follow the rules documented in probing/analyses/patterns/accumulator.py and docs/dark-secrets.md; 'block' "
        "needs --pairs. With --output P.json, P-patterns.png shows every head's type, and --maps N draws the "
        "first N units' maps, one figure per layer (P-maps-layerNN.png). Layers and heads count from 1 in tables "
        "and figures; the JSON counts from 0."
    )
    add_engine_options(parser)
    parser.add_argument("--maps", type=map_count, default=0, metavar="N",
                        help=f"also draw the first N units' maps, one figure per layer, at most {MAX_MAPS} "
                             "(default: 0)")
    parser.add_argument("--hand-labels", metavar="CSV",
                        help="CSV of hand labels (model,layer,head,label; counted from 1) to report agreement with")
    parser.add_argument("--label-model", metavar="NAME",
                        help="the model's name in --hand-labels (default: the model folder's name)")


MAX_MAPS = 32
"""The most units whose maps a layer's figure draws, side by side: already a figure some 70 inches wide, and
every kept unit holds all its heads' maps until the end of the pass."""


def map_count(text: str) -> int:
    """``--maps``: 0 to :data:`MAX_MAPS` units.

    >>> map_count("1000000000")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be 0 to 32 units, got 1000000000
    """
    value = non_negative_int(text)
    if value > MAX_MAPS:
        raise argparse.ArgumentTypeError(f"must be 0 to {MAX_MAPS} units, got {value}")
    return value


def read_hand_labels(path: str, model: str) -> list[dict]:
    """The labelled heads of ``model`` in a hand-label CSV, read before any model time."""
    from probing.analyses.patterns.payload import TYPES
    from probing.errors import ProbingError

    rows = []
    try:
        with open(path, encoding="utf-8", newline="") as stream:
            reader = csv.DictReader(stream)
            for row in reader:
                if row.get("model") != model:
                    continue
                for column in ("layer", "head"):  # counted from 1, as the file's header says
                    value = row.get(column) or ""
                    if not (value.isascii() and value.isdigit() and int(value) >= 1):
                        raise ProbingError(f"{column} must be a number from 1, got {value!r}", source=path,
                                           line=reader.line_num)
                if row.get("label") not in TYPES:
                    raise ProbingError(f"label must be one of {', '.join(TYPES)}, got {row.get('label')!r}",
                                       source=path, line=reader.line_num)
                rows.append({**row, "line": reader.line_num})
    except OSError as error:
        raise ProbingError(f"cannot read hand labels: {error.strerror}", source=f"--hand-labels {path}") from None
    except (UnicodeDecodeError, csv.Error) as error:
        raise ProbingError(f"not a readable CSV file ({error})", source=f"--hand-labels {path}") from None
    if not rows:
        raise ProbingError(f"no labelled head of model {model!r} (set --label-model)", source=f"--hand-labels {path}")
    return rows


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from probing.analyses.patterns.accumulator import PatternAccumulator
    from probing.analyses.patterns.report import add_agreement, check_labels_fit, type_table, write_figures
    from probing.engine.readings import READINGS
    from probing.model.loading import display_name

    label_model = args.label_model or (display_name(args.model) if args.model else "all-MiniLM-L6-v2")
    labels = read_hand_labels(args.hand_labels, label_model) if args.hand_labels else None
    with EngineCommand(args, analysis="patterns", inputs=(args.hand_labels,), figures=("patterns",)) as command:
        loaded = command.loaded
        heads = READINGS[args.attention].heads(loaded.num_heads)
        if labels is not None:
            check_labels_fit(labels, model=loaded.name, num_layers=loaded.num_layers, num_heads=heads,
                             source=args.hand_labels)
        patterns = PatternAccumulator(loaded.num_layers, heads, keep_maps=args.maps)
        stats = command.run([patterns], "pattern shares")
        if not command.is_main:
            return 0
        result = command.result("patterns", stats, patterns, {"maps": args.maps})
        if labels is not None:
            add_agreement(result, labels, label_model=label_model, source=args.hand_labels)
        print(f"{loaded.name}: {result['units']} units ({result['paired_units']} pairs), "
              f"{stats.too_long} skipped as too long")
        print(type_table(np.array(result["types"], dtype=object)))
        if "agreement" in result:
            found = result["agreement"]
            print(f"agreement with {args.hand_labels}: {found['correct']}/{found['heads']} heads "
                  f"({100 * found['accuracy']:.0f}%)")
        if command.write(result):
            for path in write_figures(result, patterns.samples, model=loaded.name, figure_path=command.figure_path):
                print(f"wrote {path}", file=sys.stderr)
        command.hint()
    return 0
