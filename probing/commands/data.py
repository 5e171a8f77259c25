"""``probing data fetch NAME [--split S]``: download pinned UD treebanks into the cache."""

from __future__ import annotations

import argparse

from ..datasets import KNOWN_TREEBANKS, cache_dir, fetch


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    fetch_parser = actions.add_parser("fetch", help="download a treebank's files (checked by sha256)")
    fetch_parser.add_argument("name", choices=sorted(KNOWN_TREEBANKS), help="treebank to fetch")
    fetch_parser.add_argument("--split", action="append", help="only this split (repeatable); default: all")
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
