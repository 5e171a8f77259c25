"""``probing data fetch NAME [--split S]``: download UD treebanks (pinned ones checked) into the cache; ``probing data list``:
every known treebank's splits, where each would be read from, and which are on this machine already; ``probing data
pairs NAME ...``: pair sets read (or made from a treebank) and counted, and one written out as JSON lines."""

from __future__ import annotations

import argparse
import os

from probing.data.datasets.cache import cache_dir
from probing.data.datasets.pinned import KNOWN_TREEBANKS
from probing.data.datasets.resolution import fetch, whereabouts


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True,
                                    help="fetch (download a treebank), list (the known ones) or pairs (count a pair "
                                         "set, write it out)")
    fetch_parser = actions.add_parser("fetch", help="download a treebank's files (checked by sha256)")
    fetch_parser.add_argument("name", metavar="NAME",
                              help=f"treebank to fetch: a UD code or repository name (de_gsd, UD_German-GSD); pinned: "
                                   f"{', '.join(sorted(KNOWN_TREEBANKS))}")
    fetch_parser.add_argument("--split", action="append", metavar="SPLIT",
                              help="only this split, such as dev (repeatable; default: all)")
    actions.add_parser("list", help="list the known treebanks: where each split would come from, which are local")
    add_pairs_arguments(actions.add_parser(
        "pairs", help="read pair sets (or make agreement pairs from treebanks), count them, write one out as JSON lines",
        description="Reads each pair set named (checked as probing pairs checks it; no model), prints how many pairs "
                    "each paradigm has, and for pairs made from a treebank what became of its subject arcs: how "
                    "many there were, how many gave a pair, and why the others gave none. With --output, writes "
                    "the pairs of one set as JSON lines in BLiMP's format, which probing pairs --pairs-file reads "
                    "back."))


def add_pairs_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.pairs.options import PAIR_SET_HELP, PairsOptions
    from probing.commands.common import add_options
    from probing.engine.arguments import options_of
    from probing.engine.specs import InputSpec

    parser.add_argument("names", nargs="+", metavar="NAME", help=PAIR_SET_HELP.replace("the pair set to score: ", "")
                        .replace(" (the default)", ""))
    add_options(parser, options_of(PairsOptions, only=("minimal_pairs", "lexicon")))  # the names are the pair sets
    parser.add_argument("--blimp", metavar="DIR", help="a folder of BLiMP's UID.jsonl files (default: $PROBING_BLIMP)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--paradigms", nargs="+", metavar="UID", help="only these paradigms of the set")
    which.add_argument("--phenomena", nargs="+", metavar="TERM", help="only the paradigms of these phenomena")
    add_options(parser, options_of(InputSpec, only=("limit",)).changed("limit", group=None,
                                                                         help="only the first N pairs of each paradigm"))
    parser.add_argument("--output", metavar="FILE.JSONL", help="write the pairs of the one set named here, atomically")
    parser.add_argument("--follow-symlinks", action="store_true",
                        help="when --output is a symbolic link, replace the file it points to (the link is kept)")


def run(args: argparse.Namespace) -> int:
    if args.action == "pairs":
        return _pairs(args)
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


def _pairs(args: argparse.Namespace) -> int:
    """``probing data pairs``: every set named read (or made) and counted; with ``--output``, the one set written."""
    from collections import Counter

    from tabulate import tabulate

    from probing.analyses.pairs.options import chosen_pair_set, sources_of
    from probing.atomic import check_output_path
    from probing.data.pair_sets.from_treebank import NO_PAIR_WORDS
    from probing.data.pair_sets.written import WRITTEN, write_pairs
    from probing.errors import ProbingError

    if args.output and len(args.names) > 1:
        raise ProbingError(f"writes the pairs of one set; {len(args.names)} are named", source="--output")
    sources = sources_of(args)
    chosen = [chosen_pair_set(name, args.paradigms, blimp=args.blimp, lexicon=args.lexicon, option="NAME")
              for name in args.names]
    if args.output:  # before anything is read: an output among the inputs destroys one
        check_output_path(args.output, inputs=chosen[0].inputs(sources), follow_symlinks=args.follow_symlinks,
                          replaces=WRITTEN)
    made_rows, set_rows, written = [], [], None
    for pair_set in chosen:
        pairs, described = pair_set.read(sources, args.paradigms, args.phenomena, args.limit)
        sizes = Counter(pair.uid for pair in pairs)
        spread = (f"{min(sizes.values()):,} to {max(sizes.values()):,}" if len(set(sizes.values())) > 1
                  else f"{next(iter(sizes.values()), 0):,}")
        set_rows.append([pair_set.name, described["sha256"][:12], ", ".join(sizes) if len(sizes) <= 3 else len(sizes),
                         f"{len(pairs):,}", spread])
        made = described.get("made_from")
        if made:
            made_rows.append([pair_set.name, made["arcs"], made["arcs_with_pair"], made["pairs"],
                              *made["no_pair"].values(), made["repeated"]])
        written = pairs
    print(tabulate(set_rows, headers=["pair set", "sha256", "paradigms", "pairs", "per paradigm"],
                   tablefmt="simple", disable_numparse=True))
    if made_rows:
        print("\nsubject arcs of the treebanks, and why those without a pair gave none (each arc once):")
        print(tabulate(made_rows, headers=["made from", "arcs", "with a pair", "pairs made", *NO_PAIR_WORDS.values(),
                                           "repeated"], tablefmt="simple"))
    if args.output:
        import sys

        print(f"wrote {write_pairs(written, args.output, follow_symlinks=args.follow_symlinks)}", file=sys.stderr)
    return 0
