"""``probing merge PARTS... --output F``: add up the shards of one run into its result, for any analysis."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "PARTS are the result files of one command run with --shard I/N for every I of one N, with the same "
        "model (by its weights' fingerprint), input and options. The merged counts equal those of one unsharded "
        "run; float statistics equal them to rounding."
    )
    parser.add_argument("parts", nargs="+", metavar="PART", help="result JSON of one shard")
    parser.add_argument("--output", required=True, metavar="FILE", help="write the merged result JSON here, atomically")
    parser.add_argument("--follow-symlinks", action="store_true",
                        help="when --output is a symbolic link, replace the file it points to (default: refuse)")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from probing.analyses.probe.tables import run_header, score_table
    from probing.atomic import check_output_path, result_analysis, result_of
    from probing.results.io import write_result
    from probing.results.merging import merge_files

    # the merged result is of its parts' analysis: only an earlier result of it may be replaced
    analyses = sorted({result_analysis(part) for part in args.parts if Path(part).is_file()} - {None})
    check_output_path(args.output, inputs=args.parts, follow_symlinks=args.follow_symlinks,
                      replaces=result_of(*analyses))
    result = merge_files(args.parts)
    if result["analysis"] == "probe":
        print(run_header(result))
        print(score_table(result))
    elif result["analysis"] == "trees":
        from probing.analyses.trees.report import tables

        print(tables(result))
    elif result["analysis"] == "coref":
        from probing.analyses.coref.report import coref_table

        print(coref_table(result))
    else:
        print(f"{result['analysis']}: {result['model']['name']} on {result['input']['path']}, "
              f"{result['input']['units_used']} units from {len(args.parts)} parts")
    path = write_result(result, args.output, follow_symlinks=args.follow_symlinks)
    print(f"wrote {path} (merged {len(args.parts)} parts)", file=sys.stderr)
    return 0
