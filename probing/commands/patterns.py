"""``probing patterns``: each head's attention pattern type (Kovaleva et al. 2019, section 4.1)."""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from ..extraction import DTYPES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Types follow the rules documented in probing/analyses/patterns.py and docs/dark-secrets.md. "
        "Layers and heads count from 1 in tables and figures; the JSON counts from 0."
    )
    parser.add_argument("model", help="hub id or local folder")
    parser.add_argument("input", help="CoNLL-U treebank, or a text file with one sentence per line")
    parser.add_argument("--pairs", action="store_true", help="pair consecutive sentences as segments A/B (needed for 'block')")
    parser.add_argument("--limit", type=int, help="only the first N units (sentences, or pairs with --pairs)")
    parser.add_argument("--output-dir", default="patterns", help="where patterns.json and patterns.png go (default: %(default)s)")
    parser.add_argument("--maps", type=int, default=0, metavar="N", help="also draw N units' maps, one PNG per layer, into OUTPUT_DIR/maps")
    parser.add_argument("--labels", help="CSV of hand labels (model,layer,head,label; counted from 1) to report agreement with")
    parser.add_argument("--label-model", help="model name in --labels (default: the model folder's name)")
    parser.add_argument("--batch-size", type=int, default=16, help="units per batch (default: %(default)s)")
    parser.add_argument("--max-length", type=int, help="longest input in tokens; longer units are skipped")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default: %(default)s)")
    parser.add_argument("--dtype", default="float32", choices=list(DTYPES))
    parser.add_argument("--random-init", action="store_true", help="same architecture with seeded random weights")
    parser.add_argument("--seed", type=int, default=0, help="seed of --random-init (default: %(default)s)")
    parser.add_argument("--trust-remote-code", action="store_true", help="allow a hub model's own Python code to run")


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from ..alignment import maximum_length
    from ..analyses.patterns import (
        Rules,
        agreement,
        classify,
        collect_patterns,
        plot_layer_maps,
        plot_types,
        rules_dict,
        type_shares,
    )
    from ..errors import ProbingError
    from ..extraction import load_model
    from ..inputs import InputStats, read_units
    from ..results import write_result

    if args.limit is not None and args.limit < 1:
        raise ProbingError(f"must be a positive integer, got {args.limit}", source="--limit")
    loaded = load_model(
        args.model,
        device=args.device,
        dtype=args.dtype,
        random_init=args.random_init,
        seed=args.seed,
        trust_remote_code=args.trust_remote_code,
    )
    stats = InputStats()
    rules = Rules()
    patterns, samples = collect_patterns(
        loaded,
        read_units(args.input, pairs=args.pairs, limit=args.limit),
        batch_size=args.batch_size,
        max_length=maximum_length(loaded.tokenizer, loaded.model.config, args.max_length),
        keep_maps=args.maps,
        stats=stats,
        rules=rules,
    )
    shares = patterns.result()
    types = classify(shares, rules)
    name = Path(args.model).name + (" (random init)" if args.random_init else "")
    output = Path(args.output_dir)
    plot_types(types, f"{name}: attention pattern types ({patterns.units} units)", output / "patterns.png")
    for layer in range(loaded.num_layers):
        if samples:
            plot_layer_maps(
                [sample.maps[layer] for sample in samples],
                [sample.is_special for sample in samples],
                layer,
                f"{name}, layer {layer + 1}: each head on {len(samples)} units (red ticks: special tokens)",
                output / "maps" / f"layer{layer + 1:02d}.png",
            )
    result = {
        "model": {"name_or_path": args.model, "num_layers": loaded.num_layers, "num_heads": loaded.num_heads,
                  "random_init": args.random_init},
        "input": {"path": args.input, "pairs": args.pairs, "limit": args.limit, "units": patterns.units,
                  "paired_units": patterns.paired_units, "skipped_too_long": stats.too_long},
        "rules": rules_dict(rules),
        "types": types.tolist(),
        "shares": {key: [[None if v != v else round(float(v), 4) for v in row] for row in value]
                   for key, value in shares.items()},
        "type_share_per_layer": type_shares(types),
    }
    if args.labels:
        result["agreement"] = _agreement(args, types, agreement)
    write_result(result, output / "patterns.json")
    per_layer = type_shares(types)
    rows = [[layer + 1] + [f"{100 * per_layer[t][layer]:.0f}" for t in per_layer] for layer in range(loaded.num_layers)]
    print(f"{name}: {patterns.units} units ({patterns.paired_units} pairs), {stats.too_long} skipped as too long")
    print(tabulate(rows, headers=["layer"] + [f"{t} %" for t in per_layer], tablefmt="simple"))
    if "agreement" in result:
        found = result["agreement"]
        print(f"agreement with {args.labels}: {found['correct']}/{found['heads']} heads ({100 * found['accuracy']:.0f}%)")
    print(f"wrote {output / 'patterns.json'} and {output / 'patterns.png'}", file=sys.stderr)
    return 0


def _agreement(args: argparse.Namespace, types, agreement) -> dict:
    from ..errors import ProbingError

    label_model = args.label_model or Path(args.model).name
    try:
        with open(args.labels, encoding="utf-8", newline="") as stream:
            rows = [row for row in csv.DictReader(stream) if row.get("model") == label_model]
    except OSError as error:
        raise ProbingError(f"cannot read labels: {error.strerror}", source=args.labels) from None
    if not rows:
        raise ProbingError(f"no labelled head of model {label_model!r} (set --label-model)", source=args.labels)
    predicted = {(label_model, layer, head): types[layer, head] for layer in range(types.shape[0]) for head in range(types.shape[1])}
    try:
        return agreement(predicted, rows)
    except (KeyError, ValueError) as error:
        raise ProbingError(f"a labelled head does not fit this model: {error}", source=args.labels) from None
