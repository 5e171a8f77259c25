"""``probing explore``: one self-contained HTML page of what each head does, and the no-op test.

One pass over the treebank feeds the probe, the no-op accumulator and the
sentence views at once (with ``--result`` the probe is read from that file
instead and only the other two run). The page (probing.report.page) is written to
``--output``; ``--views DIR`` adds each relation's chosen head's sentence
views as SVG and PNG, ``--save-results DIR`` the probe and no-op result files.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from probing.commands.common import EngineCommand, add_bootstrap_options, add_engine_options, argparse_type
from probing.engine.arguments import positive_at_most

DEFAULT_SENTENCES = 8
MAX_SENTENCES = 1000
"""Sentence views kept for the page: each holds every head's maps, so the page (and memory) grows with N."""


TEXT_HELP = ("a UTF-8 text file, one sentence per line, instead of a treebank: its sentences are split into words "
             "(at spaces and around punctuation) and shown head by head; with no parse there is nothing to score, so "
             "the page's maps are blank and --relations, --result and the no-op test do not apply")

TEXT_RELATIONS = ("all",)
"""The maps of a page made from --text: one relation's (blank, since unparsed text has no pair of any), to click."""

sentence_count = argparse_type(positive_at_most(MAX_SENTENCES, "sentences"))
"""``--sentences``: a positive number of sentence views, at most :data:`MAX_SENTENCES`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.data.relations import DEFAULT_RELATIONS

    parser.epilog = (
        "The page needs no network: styles, script and data are inside it. Click a heatmap cell (or press Enter "
        "on it) to see that head in the first sentences of the input and its no-op shares. Layers and heads count "
        "from 1 on the page and in file names, from 0 in the JSON."
    )
    add_engine_options(parser, pooling=True, text=TEXT_HELP, pairs=False, figures=False, required=True,
                       help="write the page (one self-contained HTML file) here, atomically")
    parser.add_argument("--relations", nargs="+", default=list(DEFAULT_RELATIONS), metavar="REL",
                        help=f"relations to probe and test (default: {' '.join(DEFAULT_RELATIONS)}); with --result, "
                             "the result's own")
    parser.add_argument("--result", metavar="RESULT",
                        help="a probe result of this model on this treebank (probing score): its heads are shown and "
                             "chosen instead of probing again")
    parser.add_argument("--surface", metavar="SURFACE", help="a surface result (probing surface) to show on the page")
    parser.add_argument("--also", nargs="+", default=[], metavar="RESULT",
                        help="other result files whose leaderboard tables the page shows")
    parser.add_argument("--sentences", type=sentence_count, default=DEFAULT_SENTENCES, metavar="N",
                        help="sentence views: the first N sentences with 2 to 30 words, at most "
                             f"{MAX_SENTENCES} (default: {DEFAULT_SENTENCES})")
    parser.add_argument("--views", metavar="FOLDER",
                        help="also write each relation's chosen head's sentence views here as RELATION-L-H.svg/.png")
    parser.add_argument("--save-results", metavar="FOLDER",
                        help="also write the result files here: noop.json, and probe.json unless --result")
    add_bootstrap_options(parser)


def earlier_page():
    """What an existing file at ``--output`` must be to be replaced: an earlier page of probing explore, known by
    how probing.report.page begins it (a leaderboard's page has no ``<header>``)."""
    from probing.atomic import text_matching

    return text_matching(r'(?s)<!DOCTYPE html>\n<html lang="en">\n<head>\n.*?</style>\n</head>\n<body>\n<header>',
                         "a page of probing explore")


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from probing.analyses.explore.page_run import ExploreRun, check_same
    from probing.analyses.noop.report import CHOSEN_HEADERS, chosen_table_rows
    from probing.atomic import check_output_path, result_of, write_text_atomic
    from probing.data.inputs import open_input
    from probing.results.io import model_block, write_result

    given, relations, surface, others, saved = _read(args)
    inputs = tuple(path for path in [args.result, args.surface, *args.also] if path)
    outputs = tuple((path, "--save-results", result_of(Path(path).stem)) for path in saved.values())
    source = open_input(args.treebank, args.text, limit=args.limit, words=True)
    with EngineCommand(args, outputs=outputs, inputs=inputs, analysis=earlier_page(), source=source) as command:
        if args.views:  # the views' folder against the inputs (a model folder), before any model time
            check_output_path(Path(args.views) / "view.svg", option="--views", inputs=command.inputs)
        target = dict(zip(["page", *saved], command.outputs))
        if given:
            check_same(given, model_block(command.loaded), sha256=command.source.sha256)
        explore = ExploreRun.create(command.loaded, relations, given=given, attention=args.attention,
                                    bootstrap=args.bootstrap, seed=args.seed, sentences=args.sentences)
        stats = command.run(explore.accumulators(), "exploring")
        if not command.is_main:
            return 0
        probe_result, noop_result = explore.results(
            command.engine_run, stats, random_init=args.random_init, bootstrap=args.bootstrap, seed=args.seed,
            chosen_from=args.result or "the probe of this run")
        # unparsed text chooses no head, so its page has no no-op test to show
        page, sentences = explore.page(probe_result, None if args.text else noop_result, command.source,
                                       surface=surface, others=others, command_line=_command_line())
        written = [write_text_atomic(page, target["page"], replaces=earlier_page())]
        written += [write_result(noop_result if name == "noop.json" else probe_result, target[name]) for name in saved]
        if args.views:
            written += explore.write_views(args.views, sentences)
        if command.checkpointer:
            command.checkpointer.discard()
    if args.text:
        print(f"{len(sentences)} sentences of unparsed text: no relation to score; click any head on the page to see "
              "it in them")
    else:
        print(tabulate(chosen_table_rows(noop_result), headers=CHOSEN_HEADERS, disable_numparse=True))
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _read(args: argparse.Namespace) -> tuple:
    """What the page reads besides the model, checked before any model time: (the --result given, the relations
    shown, the --surface result, the --also files, where --save-results puts each result)."""
    from probing.data.relations import check_relation_names
    from probing.errors import ProbingError
    from probing.report.board import read_json
    from probing.results.io import read_result

    if args.text and args.result:
        raise ProbingError("is a probe result of a treebank; a page of --text has no parse to show it beside",
                           source="--result")
    given = read_result(args.result, analysis="probe") if args.result else None
    relations = (list(TEXT_RELATIONS) if args.text else list(given["relations"]) if given
                 else list(check_relation_names(args.relations)))
    surface = read_result(args.surface, analysis="surface") if args.surface else None
    others = [read_json(path) for path in args.also]
    saved = {name: str(Path(args.save_results) / name) for name in ("noop.json", *(() if given else ("probe.json",)))
             } if args.save_results else {}
    if args.views and Path(args.views).exists() and not Path(args.views).is_dir():
        raise ProbingError("is a file; the views go into a folder", source=f"--views {args.views}")
    return given, relations, surface, others, saved


def _command_line() -> str:
    return "probing " + " ".join(shlex.quote(part) for part in sys.argv[1:])
