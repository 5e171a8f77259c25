"""``probing heads``: how alike heads attend (Jensen-Shannon), mapped by MDS (Clark et al. 2019, sec. 6)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .surface import add_analysis_arguments, load, open_input, pass_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Writes heads.json (the mean Jensen-Shannon divergence of every pair of heads, in nats, after adding "
        "1e-10 to each real key's weight and renormalising; MDS coordinates; behaviour labels and their "
        "thresholds) and heads.png (the MDS map coloured by behaviour and by layer). With --probe, the best "
        "head of each relation in that `probing score --output` file is circled and named."
    )
    add_analysis_arguments(parser, default_dir="heads")
    parser.add_argument("--probe", metavar="RESULT.json", help="a result of `probing score` for the same model")
    parser.add_argument("--seed", type=int, default=0, help="seed of the MDS layout (default: %(default)s)")


def write_heads(result: dict, folder: Path) -> list[Path]:
    from ..analyses.figures import mds_figure
    from ..results import write_result

    return [write_result(result, folder / "heads.json"), mds_figure(result, folder / "heads.png")]


def behaviour_table(result: dict, tablefmt: str = "simple") -> str:
    """Heads of each behaviour, as layer-head counted from 1."""
    from tabulate import tabulate

    from ..analyses.clustering import LABELS

    found: dict[str, list[str]] = {label: [] for label in LABELS}
    for layer, row in enumerate(result["heads"]["behaviour"]):
        for head, label in enumerate(row):
            found[label].append(f"{layer + 1}-{head + 1}")
    names = {"first special": result["token_names"]["first_special"], "separator": result["token_names"]["separator"]}
    rows = [
        [names.get(label, label), len(heads), " ".join(heads) if len(heads) <= 12 else " ".join(heads[:12]) + " ..."]
        for label, heads in found.items()
    ]
    return tabulate(rows, headers=["attends to", "heads", "layer-head (from 1)"], tablefmt=tablefmt, disable_numparse=True)


def read_probe(path: str | None) -> dict | None:
    from ..results import read_result

    return None if path is None else read_result(path)


def run(args: argparse.Namespace) -> int:
    from ..analyses.overview import attention_pass, heads_result

    source = open_input(args)
    probe = read_probe(args.probe)
    loaded = load(args)
    options = pass_options(args)
    surface, divergence = attention_pass(loaded, source, divergence=True, options=options)
    config = {**options.as_dict(), "seed": args.seed}
    result = heads_result(loaded, source, surface, divergence, config, probe=probe, probe_path=args.probe)
    print(behaviour_table(result))
    for path in write_heads(result, Path(args.output_dir)):
        print(f"wrote {path}", file=sys.stderr)
    return 0
