"""``probing data fetch NAME [--split S]``: download UD treebanks (pinned ones checked) into the cache; ``probing data list``:
every known treebank's splits, where each would be read from, and which are on this machine already."""

from __future__ import annotations

import argparse
import os

from probing.data.datasets.cache import cache_dir
from probing.data.datasets.pinned import KNOWN_TREEBANKS
from probing.data.datasets.resolution import fetch, whereabouts


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True,
                                    help="fetch (download a treebank) or list (the known ones)")
    fetch_parser = actions.add_parser("fetch", help="download a treebank's files (checked by sha256)")
    fetch_parser.add_argument("name", metavar="NAME",
                              help=f"treebank to fetch: a UD code or repository name (de_gsd, UD_German-GSD); pinned: "
                                   f"{', '.join(sorted(KNOWN_TREEBANKS))}")
    fetch_parser.add_argument("--split", action="append", metavar="SPLIT",
                              help="only this split, such as dev (repeatable; default: all)")
    actions.add_parser("list", help="list the known treebanks: where each split would come from, which are local")


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        from tabulate import tabulate

        print(f"cache: {cache_dir()}")
        print(f"PROBING_TREEBANKS: {os.environ.get('PROBING_TREEBANKS') or '(not set)'}")
        rows = [[entry.name, entry.split, "yes" if entry.local else "no", entry.origin, entry.where]
                for entry in whereabouts()]
        print(tabulate(rows, headers=["treebank", "split", "local", "from", "file, or the pinned URL it downloads"],
                       tablefmt="simple", disable_numparse=True))
        return 0
    for path in fetch(args.name, args.split):
        print(path)
    return 0
