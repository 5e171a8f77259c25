"""``probing ablate``: disable heads (uniform attention) and measure what changes (Kovaleva et al. 2019, sec. 4.5)."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import EngineCommand, add_bootstrap_options, add_engine_options, positive_int, share
from probing.errors import ProbingError
from probing.stats.intervals import bootstrap_block

MAX_RANDOM = 10_000
"""The most matched random sets per chosen set: each is one more condition (a copy of every batch in a pass, as
many copies at once as fit the memory budget, and its scores). A board whose family holds m cells needs
1 + draws >= 20 m for a row to survive Holm at 0.05 (probing.stats.multiplicity.draws_needed): the causal board's
14 testable cells need 279; 10,000 covers a family of 500."""

MAX_K = 1000
"""The largest chosen set given on the command line (checked against the model's heads before any pass)."""

DEFAULT_RANDOM = 20
DEFAULT_K = (1,)


def _bounded(what: str, most: int):
    """An argparse type: a whole number from 1 to ``most``.

    >>> _bounded("heads", 4)("3"), _bounded("heads", 4)("5")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be 1 to 4 heads, got 5
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number of {what}, got {text!r}") from None
        if not 1 <= value <= most:
            raise argparse.ArgumentTypeError(f"must be 1 to {most} {what}, got {value}")
        return value

    return parse


set_size = _bounded("heads", MAX_K)
draw_count = _bounded("random sets", MAX_RANDOM)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.ablation.versus import MATCHINGS
    from probing.data.relations import DEFAULT_RELATIONS

    parser.epilog = (
        "Metrics: mlm (masked-LM loss of a checkpoint with a trained MLM head), lm (next-token loss of a causal "
        "LM), probe (best head's accuracy per relation on a treebank, as probing score), classification (accuracy "
        "of a sequence classifier on --labels, a CSV with text,label columns), minimal-pairs (a causal LM's accuracy "
        "on a pair set, BLiMP by default, as probing pairs scores it: overall, per field and per phenomenon; pairs "
        "made from the sentences DEV chose heads on are refused). Each condition is compared with "
        "the intact model on the same units: the change and its 95% paired bootstrap interval. Many conditions "
        "share one forward pass (copies of a batch, each with its own heads disabled). Heads count from 1 "
        "(3-5 is layer 3, head 5) on the command line and in tables; the JSON counts from 0."
    )
    add_engine_options(parser, help="write the result JSON here, atomically (with --chosen, its figure beside it: "
                                    "OUTPUT-versus.png, the chosen set's effect against the random sets')")
    which = parser.add_argument_group("conditions").add_mutually_exclusive_group(required=True)
    which.add_argument("--heads", action="append", metavar="L-H,...",
                       help="disable these heads together (repeat for more conditions)")
    which.add_argument("--each-head", action="store_true", help="disable each head alone, one condition per head")
    which.add_argument("--each-layer", action="store_true", help="disable all heads of each layer, one per layer")
    which.add_argument("--chosen", nargs="+", metavar="REL",
                       help="disable each relation's top --k heads on --select-on, against --random matched random sets")
    versus = parser.add_argument_group("chosen against matched random heads (--chosen; each of these options is "
                                       "refused without it)")
    versus.add_argument("--k", nargs="+", type=set_size, metavar="K",
                        help=f"sizes of the chosen sets, each 1 to {MAX_K} and at most the model's heads (default: 1)")
    versus.add_argument("--random", type=draw_count, metavar="N",
                        help=f"matched random sets per chosen set, 1 to {MAX_RANDOM}: each is one more condition of "
                             f"the pass (default: {DEFAULT_RANDOM})")
    versus.add_argument("--match", choices=MATCHINGS, metavar="HOW",
                        help="how the random sets are matched to the chosen set: layer (as many heads in each layer, "
                             "from that layer's other heads) or band (k heads from layers L-1 to L+1 of the chosen "
                             "heads, the chosen heads excluded: for a layer-matched space smaller than the draws a "
                             "board needs); recorded in the result (default: layer)")
    versus.add_argument("--select-on", metavar="DEV",
                        help="DEV, which chooses the heads: a probe result file (JSON) of probing score, of this model "
                             "read as this run reads it, or a treebank (en_ewt:dev, a .conllu file) scored first in "
                             "this command (all of it, or --select-limit's first sentences); never sentences the run "
                             "measures")
    versus.add_argument("--select-limit", type=positive_int, metavar="N",
                        help="choose on the first N sentences of a treebank DEV only (default: all of DEV; --limit "
                             "cuts the measured units only)")
    parser.add_argument("--metric", required=True, choices=["mlm", "lm", "probe", "classification", "minimal-pairs"],
                        metavar="METRIC", help="what to measure: mlm, lm, probe, classification or minimal-pairs "
                                               "(see below)")
    blimp = parser.add_argument_group("minimal pairs (--metric minimal-pairs; --limit: the first N pairs of each "
                                      "paradigm, --batch-size: pairs per batch)")
    from probing.commands.pair_options import add_pair_set_options

    add_pair_set_options(blimp)
    sources = blimp.add_mutually_exclusive_group()
    sources.add_argument("--blimp", metavar="DIR", help="a folder of BLiMP's UID.jsonl files (default: "
                                                        "$PROBING_BLIMP, else the download cache)")
    sources.add_argument("--pairs-file", metavar="FILE.JSONL",
                         help="your own pairs instead of a pair set: JSON lines in BLiMP's format, as probing pairs "
                              "--pairs-file reads them (unpinned: the result records the file's own sha256)")
    paradigms = blimp.add_mutually_exclusive_group()
    paradigms.add_argument("--paradigms", nargs="+", metavar="UID",
                           help="paradigms to score, of the pair set or the file (default: all)")
    paradigms.add_argument("--phenomena", nargs="+", metavar="TERM",
                           help="every paradigm of these phenomena (subject_verb_agreement ...)")
    parser.add_argument("--labels", metavar="CSV",
                        help="the labelled input of --metric classification (text,label columns)")
    parser.add_argument("--relations", nargs="+", default=list(DEFAULT_RELATIONS), metavar="REL",
                        help=f"relations of --metric probe (default: {' '.join(DEFAULT_RELATIONS)})")
    parser.add_argument("--mask-rate", type=share, default=0.15, metavar="SHARE",
                        help="share of each unit's tokens masked for --metric mlm (default: 0.15)")
    add_bootstrap_options(parser)
    parser.add_argument("--scores-only", action="store_true",
                        help="write each condition's scores and replicates instead of the sums they come from (the "
                             "probe metric's sums of many conditions run to hundreds of MB); with --chosen, only the "
                             "intact model's and the chosen sets' replicates; such a file is not merged")
    parser.add_argument("--top", type=int, default=20, metavar="N",
                        help="rows per table, most helpful removals first; 0 shows all (default: 20)")


def run(args: argparse.Namespace) -> int:
    from probing.analyses.ablation.accumulator import AblationAccumulator
    from probing.analyses.ablation.choosing import dev_relations
    from probing.analyses.ablation.minimal_pairs import context_block, pairs_input_block, pairs_pass
    from probing.analyses.ablation.scores import replicates_kept, scores_only_state
    from probing.analyses.ablation.tables import ablation_tables, versus_table
    from probing.analyses.ablation.versus import versus_block
    from probing.engine.readings import READINGS
    from probing.stats.heldout import check_dev_model

    metric, source, pairs, described = _checked_metric(args)
    with EngineCommand(args, head=metric.head, source=source, inputs=_input_files(args), analysis="ablation",
                       figures=("versus",) if args.chosen else ()) as command:
        dev = _dev(args, command, pairs) if args.chosen else None  # before the model loads: a bad DEV costs no model time
        loaded = command.loaded
        if dev is not None and dev.dev_result is not None:  # a DEV result of other weights chooses other heads
            check_dev_model(dev.dev_result, loaded, source=dev.where, run="this run")
        metric.setup(loaded)
        layers, heads = loaded.num_layers, READINGS[args.attention].heads(loaded.num_heads)
        chosen_on = dev_relations(dev, args.chosen, command.engine_run) if args.chosen else None
        conditions = _conditions(args, layers, heads, chosen_on and chosen_on.relations)
        if chosen_on and command.is_main:
            print(chosen_on.describe(conditions[1:]))
        accumulator = AblationAccumulator(metric, conditions, layers, heads, bootstrap=args.bootstrap, seed=args.seed,
                                          causal=loaded.is_causal, pool_from=args.pool_from if hasattr(args, "pool_from") else "mean")
        if pairs is None:
            stats = command.run([accumulator], f"{len(conditions)} conditions")
        else:
            stats = pairs_pass(accumulator, loaded, pairs, args.batch_size, hooks=command.checkpointer)
        if not command.is_main:
            return 0
        options = {"metric": args.metric, "metric_options": {"seed": args.seed, "mask_rate": args.mask_rate,
                                                              "relations": list(args.relations)},
                   "bootstrap": bootstrap_block(args.bootstrap, args.seed),
                   **({"select_on": args.select_on, "select_limit": args.select_limit} if args.chosen else {})}
        if pairs is not None:
            options["metric_options"]["layout"] = metric.layout
        result = command.result("ablation", stats, accumulator, options)
        if pairs is not None:
            result["input"] = pairs_input_block(pairs, described)
            result["metric"].update(context_block(loaded))
            from probing.analyses.pairs.report import pairs_source

            measured = f"{metric.description} on {pairs_source(result)}"
        else:
            measured = metric.description
        print(f"{loaded.name}: {measured} with heads disabled ({len(conditions) - 1} conditions; "
              f"intervals: 95% paired bootstrap, {args.bootstrap} replicates)\n")
        if args.scores_only:
            result["state"] = scores_only_state(*accumulator.scores()[:2],
                                                kept=replicates_kept(result["conditions"]))
        if args.chosen:
            result["config"]["options"] = command.recorded  # what the block reads back: --match among them
            result["versus"] = versus_block(result)
            print(versus_table(result))
        else:
            print(ablation_tables(result, top=args.top or None))
        command.write(result)
        if args.chosen and args.output:  # the figure `probing plot` draws of this result, as the README promises
            from probing.analyses.ablation.figures import versus_figure

            print(f"wrote {versus_figure(result, command.figure_path('versus'))}", file=sys.stderr)
        command.hint()
    return 0


def _checked_metric(args: argparse.Namespace):
    """The metric of ``--metric`` after every check of the options, and its input: (metric, a labelled source or
    None, the minimal pairs or None, their input description or None)."""
    from probing.analyses.ablation.metrics import METRICS
    from probing.data.inputs import InputSource
    from probing.data.relations import check_relation_names

    if args.bootstrap < 1:
        raise ProbingError("ablation needs bootstrap replicates for its intervals (1 or more)", source="--bootstrap")
    if args.attention != "weights":
        raise ProbingError("heads are disabled in the attention weights; --attention must be weights here",
                           source="--attention")
    if args.top < 0:
        raise ProbingError(f"must be 0 (all) or more, got {args.top}", source="--top")
    if args.scores_only and getattr(args, "shard", None):
        raise ProbingError("a shard's result is merged, and scores do not add up: drop --scores-only",
                           source="--scores-only")
    check_relation_names(args.relations)
    _check_versus_options(args)
    _check_model_for(args)
    source = None
    if args.metric == "classification":
        if not args.labels:
            raise ProbingError("--metric classification reads a labelled CSV: give --labels FILE.csv", source="--labels")
        source = InputSource.labelled(args.labels, limit=args.limit)
    elif args.labels:
        raise ProbingError("--labels is the input of --metric classification only", source="--labels")
    if args.metric == "minimal-pairs":
        pairs, described = _minimal_pairs(args)
        return METRICS[args.metric].of_pairs(pairs), None, pairs, described
    for option in ("blimp", "paradigms", "phenomena", "pair_set", "minimal_pairs", "lexicon", "pairs_file"):
        if getattr(args, option):
            flag = "--" + option.replace("_", "-")
            raise ProbingError(f"{flag} is an input of --metric minimal-pairs only", source=flag)
    metric = METRICS[args.metric](seed=args.seed, mask_rate=args.mask_rate, relations=args.relations)
    if metric.needs_trees and args.text:
        raise ProbingError("--metric probe needs a treebank (its trees), not --text", source="--text")
    return metric, source, None, None


def _input_files(args: argparse.Namespace) -> tuple[str, ...]:
    """What the run reads besides its units and the model: DEV of --select-on (a result file or a treebank file)
    and the pairs' files (a pair set's folder, the treebanks pairs are made from, one's own pair file); no output
    may be one of them (a named DEV, en_ewt:dev, is a treebank, which no result replaces either)."""
    from pathlib import Path

    from probing.commands.pair_options import pair_set_inputs

    dev = args.select_on if args.select_on and Path(args.select_on).expanduser().exists() else None
    pairs = [str(path) for path in pair_set_inputs(args)] if args.metric == "minimal-pairs" else []
    return tuple(path for path in (dev, *pairs) if path)


def _check_versus_options(args: argparse.Namespace) -> None:
    """--k, --random and --select-on shape --chosen's sets only: given without it, each is refused by name (a
    run would otherwise ignore it); with it, the relations are checked and the defaults filled in."""
    from probing.data.relations import check_relation_names

    if not args.chosen:
        for option, value in (("--k", args.k), ("--random", args.random), ("--match", args.match),
                              ("--select-on", args.select_on), ("--select-limit", args.select_limit)):
            if value is not None:
                raise ProbingError(f"does nothing without --chosen REL (it shapes the chosen and random sets only); "
                                   f"drop {option}, or give --chosen", source=option)
        return
    check_relation_names(args.chosen, option="--chosen")
    args.k = list(args.k or DEFAULT_K)
    args.random = DEFAULT_RANDOM if args.random is None else args.random
    args.match = args.match or "layer"


NEEDS = {"lm": "causal_lm", "minimal-pairs": "causal_lm", "mlm": "masked_lm"}
"""The language-model head each LM metric reads."""


def _check_model_for(args: argparse.Namespace) -> None:
    """A model on this machine (a folder, or a hub id's cached folder) whose config.json says it is the other kind
    of language model than --metric reads (or whose weights lack the masked-LM head --metric mlm reads) is refused
    now, before it loads, suggesting only a metric that would run on it."""
    from probing.engine.startup import model_name
    from probing.model.heads import folder_has_head, folder_language_model
    from probing.model.hub import default_model_path, local_folder

    needed = NEEDS.get(args.metric)
    given = args.model if args.model is not None else str(default_model_path())
    folder = needed and local_folder(given, args.revision)
    kind = folder and folder_language_model(folder)
    if not kind:
        return
    name, option = model_name(args.model), f"--metric {args.metric}"
    masked_head = folder_has_head(folder, "masked_lm") if kind == "masked_lm" else None
    probe = "--metric probe (the heads' syntax on a treebank) runs on any model"
    if needed == "causal_lm" and kind == "masked_lm":
        otherwise = "use --metric mlm" if masked_head is not False else f"it has no trained masked-LM head either: {probe}"
        raise ProbingError(f"{name} is not a causal LM (its config.json says so); {otherwise}", source=option)
    if needed == "masked_lm" and kind == "causal_lm":
        raise ProbingError(f"{name} is a causal LM, not a masked one (its config.json says so); use --metric lm",
                           source=option)
    if needed == "masked_lm" and masked_head is False:
        raise ProbingError(f"{name} has no trained masked-LM head (none of its weights is one; sentence-embedding "
                           f"checkpoints such as all-MiniLM-L6-v2 keep only the encoder): {probe}", source=option)


def _minimal_pairs(args: argparse.Namespace):
    """The pairs of --pair-set (BLiMP by default) or --pairs-file, --paradigms or --phenomena and the first --limit
    of each, as probing pairs reads them, and their input description."""
    import os

    from probing.analyses.pairs.api import chosen_pair_set, read_scored_pairs
    from probing.commands.pair_options import check_pairs_file_alone, sources_of
    from probing.data.minimal_pairs import read_pair_file

    if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # every rank would score every pair: one process only
        raise ProbingError("--metric minimal-pairs runs in one process, not under torchrun", source="--metric")

    for option in ("treebank", "text", "shard"):  # --checkpoint and --resume save and continue the one run
        if getattr(args, option, None):
            raise ProbingError("--metric minimal-pairs reads a pair set (--pair-set, BLiMP by default) in one run: "
                               f"no --{option}", source=f"--{option}")
    if args.pairs:
        raise ProbingError("--metric minimal-pairs reads a pair set (--pair-set, BLiMP by default) in one run: no "
                           "--pairs (consecutive sentences as segments A and B)", source="--pairs")
    check_pairs_file_alone(args)
    if args.pairs_file:
        return read_pair_file(args.pairs_file, args.paradigms, args.phenomena, args.limit)
    chosen = chosen_pair_set(args.pair_set, args.paradigms, blimp=args.blimp, lexicon=args.lexicon)
    return read_scored_pairs(chosen, sources_of(args), args.paradigms, args.phenomena, args.limit)


def _dev(args: argparse.Namespace, command, pairs=None):
    """DEV of --select-on, checked against this run's units and options, as ``probing score --select-on`` checks
    it, before the model loads: a treebank's sentences, or minimal ``pairs`` made from DEV's sentences
    (probing.stats.heldout.check_pairs_held_out)."""
    from probing.analyses.ablation.choosing import open_dev
    from probing.stats.heldout import check_pairs_held_out

    random_init = bool(getattr(args, "random_init", False))
    planned = {"model": {"random_init": random_init}, "config": {**command.options().config(), "random_init": random_init}}
    dev = open_dev(args.select_on, None if pairs is not None else command.source, args.select_limit,
                   planned=planned, relations=args.chosen, sizes=args.k)
    if pairs is not None:
        check_pairs_held_out(dev, pairs, source=dev.where)
    return dev


def _conditions(args: argparse.Namespace, layers: int, heads: int, dev: dict | None):
    """The conditions of --each-head, --each-layer, --chosen (labelled REL@K:chosen, REL@K:randomI) or --heads."""
    from probing.analyses.ablation.conditions import INTACT, Condition, chosen_heads, each_head, each_layer
    from probing.analyses.ablation.versus import choose_sets, set_label

    if args.each_head:
        return each_head(layers, heads)
    if args.each_layer:
        return each_layer(layers, heads)
    if args.chosen:
        sets = choose_sets(dev, args.chosen, args.k, layers, heads, draws=args.random, seed=args.seed,
                           match=args.match)
        return [INTACT] + [Condition(set_label(entry), entry["heads"]) for entry in sets]
    return chosen_heads(args.heads, layers, heads)
