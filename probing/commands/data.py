"""``probing data fetch NAME [--split S]``: download pinned UD treebanks into the cache."""

from __future__ import annotations

import argparse

from probing.data.datasets import KNOWN_TREEBANKS, cache_dir, fetch


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True,
                                    help="fetch (download a treebank) or list (the known ones)")
    fetch_parser = actions.add_parser("fetch", help="download a treebank's files (checked by sha256)")
    fetch_parser.add_argument("name", choices=sorted(KNOWN_TREEBANKS), metavar="NAME",
                              help=f"treebank to fetch: {', '.join(sorted(KNOWN_TREEBANKS))}")
    fetch_parser.add_argument("--split", action="append", metavar="SPLIT",
                              help="only this split, such as dev (repeatable; default: all)")
    actions.add_parser("list", help="list the known treebanks and the cache folder")


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        print(f"cache: {cache_dir()}")
        for name, treebank in sorted(KNOWN_TREEBANKS.items()):
            print(f"{name:8} {treebank.repo}@{treebank.commit[:12]}  splits: {', '.join(treebank.splits)}")
        return 0
    for path in fetch(args.name, args.split):
        print(path)
    return 0
