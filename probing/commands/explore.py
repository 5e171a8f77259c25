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

from probing.commands.common import EngineCommand, add_bootstrap_options, add_engine_options, positive_int

DEFAULT_SENTENCES = 8
MAX_SENTENCES = 1000
"""Sentence views kept for the page: each holds every head's maps, so the page (and memory) grows with N."""


def sentence_count(text: str) -> int:
    value = positive_int(text)
    if value > MAX_SENTENCES:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SENTENCES} sentences, got {value}")
    return value
OFFSETS = (-3, -2, -1, 1, 2, 3)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.data.relations import DEFAULT_RELATIONS

    parser.epilog = (
        "The page needs no network: styles, script and data are inside it. Click a heatmap cell (or press Enter "
        "on it) to see that head in the first sentences of the input and its no-op shares. Layers and heads count "
        "from 1 on the page and in file names, from 0 in the JSON."
    )
    add_engine_options(parser, pooling=True, text=False, pairs=False, figures=False, required=True,
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


def run(args: argparse.Namespace) -> int:
    from probing.analyses.noop.accumulator import NoopAccumulator, chosen_heads
    from probing.analyses.noop.report import CHOSEN_HEADERS, chosen_table_rows
    from probing.analyses.probe.accumulator import ProbeAccumulator, treebank_block
    from probing.analyses.views.accumulator import SentenceViews
    from probing.atomic import check_output_path, write_text_atomic
    from probing.data.relations import check_relation_names
    from probing.engine.readings import READINGS
    from probing.errors import ProbingError
    from probing.report.board import read_json
    from probing.report.page import render_page
    from probing.results.io import model_block, read_result, write_result

    given = read_result(args.result, analysis="probe") if args.result else None
    relations = list(given["relations"]) if given else list(check_relation_names(args.relations))
    surface = read_result(args.surface, analysis="surface") if args.surface else None
    others = [read_json(path) for path in args.also]
    saved = Path(args.save_results) if args.save_results else None
    outputs = []
    if saved:
        outputs = [str(saved / "noop.json")] + ([] if given else [str(saved / "probe.json")])
    if args.views and Path(args.views).exists() and not Path(args.views).is_dir():
        raise ProbingError("is a file; the views go into a folder", source=f"--views {args.views}")
    inputs = tuple(path for path in [args.result, args.surface, *args.also] if path)
    with EngineCommand(args, outputs=tuple((path, "--save-results") for path in outputs), inputs=inputs) as command:
        if args.views:  # the views' folder against the inputs (a model folder), before any model time
            check_output_path(Path(args.views) / "view.svg", option="--views", inputs=command.inputs)
        target = dict(zip(["page", *outputs], command.outputs))
        loaded = command.loaded
        if given:
            _check_same(given, model_block(loaded), command.source)
        heads = READINGS[args.attention].heads(loaded.num_heads)
        probe = None if given else ProbeAccumulator.create(
            relations, loaded.num_layers, heads, offsets=OFFSETS, bootstrap=args.bootstrap, seed=args.seed,
            causal=loaded.is_causal)
        noop = NoopAccumulator(relations, loaded.num_layers, heads, bootstrap=args.bootstrap, seed=args.seed)
        views = SentenceViews(loaded.num_layers, heads, sentences=args.sentences)
        stats = command.run([accumulator for accumulator in (probe, noop, views) if accumulator], "exploring")
        if not command.is_main:
            return 0
        probe_result = given or _probe_result(command, stats, probe, relations, args)
        if probe is not None:
            probe_result["treebank"] = treebank_block(command.source, stats, probe.counts)
        noop.chosen = chosen_heads(probe_result)
        noop_result = command.result("noop", stats, noop, {
            "relations": relations, "bootstrap": {"replicates": args.bootstrap, "seed": args.seed, "method": "poisson"},
            "chosen_from": args.result or "the probe of this run"})
        sentences = _sentences(command.source, views.kept(), relations)
        page = render_page(probe_result, noop=noop_result, views=views.payload(), sentences=sentences,
                           surface=surface, others=others, command=_command_line())
        written = [write_text_atomic(page, target["page"])]
        if saved:
            written.append(write_result(noop_result, target[str(saved / "noop.json")]))
            if not given:
                written.append(write_result(probe_result, target[str(saved / "probe.json")]))
        if args.views:
            written += _write_views(args.views, noop.chosen, views.payload(), sentences)
        if command.checkpointer:
            command.checkpointer.discard()
    from tabulate import tabulate

    print(tabulate(chosen_table_rows(noop_result), headers=CHOSEN_HEADERS, disable_numparse=True))
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _check_same(given: dict, model: dict, source) -> None:
    """A --result must be of this very model and treebank (its heads are shown beside this pass's views)."""
    from probing.errors import ProbingError

    if given["model"].get("fingerprint") != model["fingerprint"]:
        raise ProbingError(f"was made with other weights ({given['model'].get('name_or_path')}) than --model",
                           source="--result")
    if given["treebank"]["sha256"] != source.sha256:
        raise ProbingError("was scored on another treebank than --treebank (its sha256 differs)", source="--result")


def _probe_result(command, stats, probe, relations, args) -> dict:
    loaded = command.loaded
    return command.result("probe", stats, probe, {
        "relations": list(relations), "offsets": list(OFFSETS), "random_init": args.random_init,
        "bootstrap": {"replicates": args.bootstrap, "seed": args.seed, "method": "poisson"},
        "stack": loaded.stack, "prepended_token": loaded.prepended_token})  # as probing score records them


def _sentences(source, indices: list[int], relations) -> list[dict]:
    """The kept units' sentences, read again from the treebank by index."""
    from probing.report.page import sentence_block

    wanted, found = set(indices), {}
    for unit in source.units():
        if unit.index in wanted:
            found[unit.index] = sentence_block(unit.sentence, unit.index, relations)
        if len(found) == len(wanted):
            break
    return [found[index] for index in indices]


def _write_views(folder: str, chosen: dict, payload: dict, sentences: list[dict]) -> list[Path]:
    """Each relation's chosen head in the sentences that have a pair of that relation (all kept ones if none)."""
    from probing.analyses.views.figure import write_views
    from probing.naming import WORDS, head_name

    written = []
    for relation, choice in chosen.items():
        if choice is None:
            continue
        values = payload["heads"][f"{choice['layer']}-{choice['head']}"]
        picked = [n for n, sentence in enumerate(sentences) if sentence["pairs"].get(relation)] or list(range(len(sentences)))
        name = f"{relation}-{choice['layer'] + 1}-{choice['head'] + 1}"
        title = (f"{relation}: head {head_name(choice['layer'], choice['head'])} ({choice['selection']}), "
                 f"{WORDS[choice['direction']]}")
        written += write_views(folder, name, [sentences[n] for n in picked],
                               [values[n] for n in picked], relation, choice["direction"], title)
    return written


def _command_line() -> str:
    return "probing " + " ".join(shlex.quote(part) for part in sys.argv[1:])
