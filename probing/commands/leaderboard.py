"""``probing leaderboard``: result files -> one table of held-out accuracies per model (no torch)."""

from __future__ import annotations

import argparse
import sys

from ..leaderboard import FORMATS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "One row per result file plus the best-offset baseline row, one column per relation; each cell is "
        "accuracy %% [95%% interval] and the head as layer-head counted from 1. Results scored with --select-on "
        "show held-out numbers; others show in-sample numbers, marked as such."
    )
    parser.add_argument("results", nargs="+", metavar="RESULT.json", help="result files of probing score")
    parser.add_argument("--reference", nargs="*", default=[], metavar="REF.json",
                        help="figures quoted from a paper (see leaderboards/reference/), listed last, unranked")
    parser.add_argument("--format", default="md", choices=list(FORMATS), help="output format (default: %(default)s)")
    parser.add_argument("--output", help="write here (atomically) instead of standard output")


def run(args: argparse.Namespace) -> int:
    from ..leaderboard import leaderboard_from_files, render
    from ..atomic import write_text_atomic

    text = render(leaderboard_from_files(args.results, args.reference), args.format)
    if args.output:
        print(f"wrote {write_text_atomic(text, args.output)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
