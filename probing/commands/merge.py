"""``probing merge PARTS... --output F``: add up the shards of one run into its result."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "PARTS are the result files of `probing score --shard i/N` for every i of one N, scored with the "
        "same model, treebank and options. The merged counts equal those of one unsharded run."
    )
    parser.add_argument("parts", nargs="+", metavar="PART", help="result JSON of one shard")
    parser.add_argument("--output", required=True, help="write the merged result JSON here (replaced atomically)")


def run(args: argparse.Namespace) -> int:
    from ..merging import merge_files
    from ..results import write_result
    from ..tables import run_header, score_table

    result = merge_files(args.parts)
    print(run_header(result))
    print(score_table(result))
    print(f"wrote {write_result(result, args.output)} (merged {len(args.parts)} parts)", file=sys.stderr)
    return 0
