"""The options that choose a pair set, shared by ``probing pairs``, ``probing ablate --metric minimal-pairs`` and
``probing data pairs``: ``--pair-set NAME``, ``--minimal-pairs DIR``, ``--lexicon TREEBANK ...``.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_pair_set_options(parser)
>>> args = parser.parse_args(["--pair-set", "de_pud:agreement", "--lexicon", "de_gsd:dev"])
>>> args.pair_set, sources_of(args)
('de_pud:agreement', Sources(root=None, blimp=None, lexicon=('de_gsd:dev',)))
"""

from __future__ import annotations

import argparse

from probing.errors import ProbingError

PAIR_SET_HELP = ("the pair set to score: blimp (the default), clams-de, clams-fr, clams-ru, rublimp, or "
                 "TREEBANK:agreement, subject-verb agreement pairs made from a treebank named as --treebank names it "
                 "(de_pud:agreement, de_pud:odd:agreement, fi_tdt:dev:agreement, FILE.conllu:agreement)")


def add_pair_set_options(parser, *, named: bool = True) -> None:
    """``--pair-set`` (where ``named``: a command that takes the names otherwise has none), ``--minimal-pairs`` and
    ``--lexicon`` on ``parser`` (a parser or a group)."""
    if named:
        parser.add_argument("--pair-set", metavar="NAME", help=PAIR_SET_HELP)
    parser.add_argument("--minimal-pairs", metavar="DIR",
                        help="a folder of pair sets, holding blimp/UID.jsonl, clams/LANG/PHENOMENON.txt and "
                             "rublimp/PID.csv (default: $PROBING_MINIMAL_PAIRS, else a cache filled from each set's "
                             "public home); every file is checked by its pinned sha256")
    parser.add_argument("--lexicon", nargs="+", metavar="TREEBANK", default=[],
                        help="more treebanks (names or CoNLL-U files) whose forms pairs made from a treebank may "
                             "take (default: the treebank's own forms only)")


def sources_of(args: argparse.Namespace):
    """Where the pairs of ``args`` are read from (probing.data.pair_sets.catalogue.Sources)."""
    from probing.data.pair_sets.catalogue import Sources

    return Sources(args.minimal_pairs, getattr(args, "blimp", None), tuple(getattr(args, "lexicon", None) or ()))


def check_pairs_file_alone(args: argparse.Namespace) -> None:
    """``--pairs-file`` is one's own pairs: a pair set or the folders and treebanks of one mean nothing beside it,
    and are refused by name rather than ignored."""
    if not getattr(args, "pairs_file", None):
        return
    for option in ("pair_set", "minimal_pairs", "lexicon"):
        if getattr(args, option, None):
            flag = "--" + option.replace("_", "-")
            raise ProbingError("chooses a pair set; --pairs-file scores your own file instead: give one of them",
                               source=flag)


def pair_set_inputs(args: argparse.Namespace) -> list:
    """What a run that reads the pair set of ``args`` reads besides the model: no output may go among them."""
    from probing.data.pair_sets.catalogue import pair_set

    if getattr(args, "pairs_file", None):
        return [args.pairs_file]
    return pair_set(args.pair_set or "blimp").inputs(sources_of(args))
