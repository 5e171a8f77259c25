"""``probing compare``: per-head cosine similarity of two checkpoints' attention maps (Kovaleva et al. 2019, sec. 4.4)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..extraction import DTYPES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Every query row's attention distribution of MODEL_A is compared with the same row of MODEL_B (cosine), "
        "padding excluded as rows and keys; the mean over rows is reported per head and per layer. Both models must "
        "give the same token ids and have the same shape. Layers and heads count from 1 in tables and figures."
    )
    parser.add_argument("model_a", metavar="MODEL_A", help="hub id or local folder (e.g. the pre-trained checkpoint)")
    parser.add_argument("model_b", metavar="MODEL_B", help="hub id or local folder (e.g. the fine-tuned checkpoint)")
    parser.add_argument("input", metavar="INPUT", help="CoNLL-U treebank, or a text file with one sentence per line")
    parser.add_argument("--pairs", action="store_true", help="pair consecutive sentences as segments A/B")
    parser.add_argument("--limit", type=int, help="only the first N units")
    parser.add_argument("--random-init", action="store_true", help="draw MODEL_B's weights at random (same architecture): the untrained control")
    parser.add_argument("--seed", type=int, default=0, help="seed of --random-init (default: %(default)s)")
    parser.add_argument("--output-dir", default="compare", help="where compare.json and compare.png go (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=16, help="units per batch (default: %(default)s)")
    parser.add_argument("--max-length", type=int, help="longest input in tokens; longer units are skipped")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default: %(default)s)")
    parser.add_argument("--dtype", default="float32", choices=list(DTYPES))
    parser.add_argument("--trust-remote-code", action="store_true", help="allow a hub model's own Python code to run")


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from ..alignment import maximum_length
    from ..analyses.compare import check_compatible, compare_attention, layer_means, plot_similarity
    from ..errors import ProbingError
    from ..extraction import load_model
    from ..inputs import InputStats, read_units
    from ..results import write_result

    if args.limit is not None and args.limit < 1:
        raise ProbingError(f"must be a positive integer, got {args.limit}", source="--limit")
    common = {"device": args.device, "dtype": args.dtype, "trust_remote_code": args.trust_remote_code}
    first = load_model(args.model_a, **common)
    second = load_model(args.model_b, random_init=args.random_init, seed=args.seed, **common)
    check_compatible(first, second)
    stats = InputStats()
    cosines = compare_attention(
        first,
        second,
        read_units(args.input, pairs=args.pairs, limit=args.limit),
        batch_size=args.batch_size,
        max_length=min(
            maximum_length(first.tokenizer, first.model.config, args.max_length),
            maximum_length(second.tokenizer, second.model.config, args.max_length),
        ),
        stats=stats,
    )
    similarity = cosines.result()
    means = layer_means(similarity)
    name_b = Path(args.model_b).name + (f" (random init, seed {args.seed})" if args.random_init else "")
    output = Path(args.output_dir)
    title = f"{Path(args.model_a).name} vs {name_b}: attention cosine ({cosines.units} units)"
    plot_similarity(similarity, title, output / "compare.png")
    result = {
        "kind": "compare",
        "model_a": {"name_or_path": args.model_a},
        "model_b": {"name_or_path": args.model_b, "random_init": args.random_init, "seed": args.seed},
        "shape": {"num_layers": first.num_layers, "num_heads": first.num_heads},
        "input": {"path": args.input, "pairs": args.pairs, "limit": args.limit, "units": cosines.units,
                  "rows": cosines.rows, "skipped_too_long": stats.too_long},
        "measure": "mean over real query rows of the cosine between the two rows, padding excluded as rows and keys",
        "similarity": [[round(float(value), 6) for value in row] for row in similarity],
        "layer_means": [round(value, 6) for value in means],
    }
    write_result(result, output / "compare.json")
    rows = [
        [layer + 1, f"{means[layer]:.3f}", f"{similarity[layer].min():.3f} ({layer + 1}-{similarity[layer].argmin() + 1})",
         f"{similarity[layer].max():.3f}"]
        for layer in range(first.num_layers)
    ]
    print(f"{title}; {cosines.rows} query rows, {stats.too_long} units skipped as too long")
    print(tabulate(rows, headers=["layer", "mean cosine", "lowest head", "highest"], tablefmt="simple", disable_numparse=True))
    print(f"wrote {output / 'compare.json'} and {output / 'compare.png'}", file=sys.stderr)
    return 0
