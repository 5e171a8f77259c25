"""``probing surface``: where each head's attention goes, regardless of syntax (Clark et al. 2019, sec. 3).

Also holds the arguments and loading shared by ``probing heads``, ``probing gradients``
and ``probing report``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_analysis_arguments(parser: argparse.ArgumentParser, *, default_dir: str) -> None:
    """MODEL INPUT and the options every analysis command takes."""
    parser.add_argument("model", metavar="MODEL", help="hub id or local folder of a checkpoint")
    parser.add_argument(
        "input",
        metavar="INPUT",
        help="a treebank (.conllu; its words), a plain-text file (one sentence per line, blank line = "
        "new document), or a treebank name such as en_ewt:dev",
    )
    parser.add_argument(
        "--pairs", action="store_true", help="pair consecutive sentences as [CLS] A [SEP] B [SEP] (the model's own tokens)"
    )
    parser.add_argument("--limit", type=int, help="only the first N units (sentences, or pairs with --pairs)")
    parser.add_argument("--output-dir", default=default_dir, help="folder for JSON and PNGs (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=32, help="units per batch (default: %(default)s)")
    parser.add_argument("--max-length", type=int, help="longest unit in tokens; longer ones are skipped and counted")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default: %(default)s)")
    parser.add_argument("--revision", help="hub branch, tag or commit of the model")
    parser.add_argument("--trust-remote-code", action="store_true", help="allow a hub model's own Python code to run")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def open_input(args: argparse.Namespace):
    from ..analyses.streams import AnalysisInput
    from ..errors import ProbingError

    if args.batch_size < 1:
        raise ProbingError(f"must be a positive integer, got {args.batch_size}", source="--batch-size")
    return AnalysisInput.open(args.input, pairs=args.pairs, limit=args.limit)


def load(args: argparse.Namespace):
    from ..extraction import load_model

    return load_model(args.model, revision=args.revision, device=args.device, trust_remote_code=args.trust_remote_code)


def pass_options(args: argparse.Namespace):
    from ..analyses.overview import PassOptions

    return PassOptions(batch_size=args.batch_size, max_length=args.max_length, progress=not args.quiet and sys.stderr.isatty())


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Writes surface.json, surface.png (the paper's Figure 2: attention to the first special token, to "
        "separators, to . and ,, to the previous/next token and itself) and entropy.png (Figure 4). Layers "
        "and heads count from 1 in figures and tables, from 0 in the JSON."
    )
    add_analysis_arguments(parser, default_dir="surface")


def write_surface(result: dict, folder: Path) -> list[Path]:
    """surface.json, surface.png and entropy.png in ``folder``."""
    from ..analyses.figures import entropy_figure, surface_figure
    from ..results import write_result

    return [
        write_result(result, folder / "surface.json"),
        surface_figure(result, folder / "surface.png"),
        entropy_figure(result, folder / "entropy.png"),
    ]


def layer_table(result: dict, tablefmt: str = "simple") -> str:
    """One row per layer (from 1): mean over heads of each statistic, in percent; entropies in nats."""
    from tabulate import tabulate

    surface, names = result["surface"], result["token_names"]
    columns = [
        ("first_special", f"{names['first_special']} %"),
        ("separator", f"{names['separator']} %"),
        ("punctuation", ". , %"),
        ("previous", "prev %"),
        ("next", "next %"),
        ("self", "self %"),
        ("separator_to_separator", f"{names['separator']}->{names['separator']} %"),
        ("other_to_separator", f"other->{names['separator']} %"),
        ("entropy", "entropy"),
    ]
    means = surface["layer_means"]
    rows = []
    for layer in range(result["model"]["num_layers"]):
        row = [layer + 1]
        for name, _ in columns:
            value = None if means[name] is None else means[name][layer]
            row.append("-" if value is None else (f"{value:.2f}" if name == "entropy" else f"{100 * value:.1f}"))
        rows.append(row)
    headers = ["layer"] + [header for _, header in columns]
    table = tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True, stralign="right")
    uniform = surface["uniform_entropy"]["entropy"]
    return f"{table}\n\nMeans over heads; entropies in nats (uniform attention: {uniform:.2f})."


def run(args: argparse.Namespace) -> int:
    from ..analyses.overview import attention_pass, surface_result

    source = open_input(args)
    loaded = load(args)
    options = pass_options(args)
    surface, _ = attention_pass(loaded, source, options=options)
    result = surface_result(loaded, source, surface, options.as_dict())
    print(layer_table(result))
    for path in write_surface(result, Path(args.output_dir)):
        print(f"wrote {path}", file=sys.stderr)
    return 0
