"""``probing plot``: layer x head accuracy heatmaps of a result file (no torch)."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Without --relation: one overview figure of every relation and direction. With --relation R: both "
        "directions of R, each cell labelled. Layers (down) and heads (across) count from 1; the chosen head "
        "is outlined (chosen on dev for --select-on results) and the best offset's accuracy is marked on the "
        "colour bar."
    )
    parser.add_argument("result", metavar="RESULT.json", help="a result file of probing score")
    parser.add_argument("--relation", metavar="R", help="plot this relation only (default: overview of all)")
    parser.add_argument("--output", required=True, metavar="F.png", help="PNG file to write (atomically)")
    parser.add_argument("--dpi", type=int, help="resolution (default: 150 for one relation, 120 for the overview)")


def run(args: argparse.Namespace) -> int:
    from ..errors import ProbingError
    from ..leaderboard import read_json
    from ..plots import plot_overview, plot_relation

    result = read_json(args.result)
    if "reference" in result:
        raise ProbingError("is a reference file (quoted figures, no per-head counts); give a result file",
                           source=args.result)
    options = {} if args.dpi is None else {"dpi": args.dpi}
    if args.relation:
        path = plot_relation(result, args.relation, args.output, **options)
    else:
        path = plot_overview(result, args.output, **options)
    print(f"wrote {path}", file=sys.stderr)
    return 0
