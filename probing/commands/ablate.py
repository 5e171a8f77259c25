"""``probing ablate``: disable heads (uniform attention) and measure what changes (Kovaleva et al. 2019, sec. 4.5)."""

from __future__ import annotations

import argparse

from probing.commands.common import EngineCommand, add_bootstrap_options, add_engine_options, share
from probing.errors import ProbingError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.data.relations import DEFAULT_RELATIONS

    parser.epilog = (
        "Metrics: mlm (masked-LM loss of a checkpoint with a trained MLM head), lm (next-token loss of a causal "
        "LM), probe (best head's accuracy per relation on a treebank, as probing score), classification (accuracy "
        "of a sequence classifier on --labels, a CSV with text,label columns). Each condition is compared with "
        "the intact model on the same units: the change and its 95% paired bootstrap interval. Many conditions "
        "share one forward pass (copies of a batch, each with its own heads disabled). Heads count from 1 "
        "(3-5 is layer 3, head 5) on the command line and in tables; the JSON counts from 0."
    )
    add_engine_options(parser, figures=False)  # tables only: no figure, so no --figure-format
    which = parser.add_argument_group("conditions").add_mutually_exclusive_group(required=True)
    which.add_argument("--heads", action="append", metavar="L-H,...",
                       help="disable these heads together (repeat for more conditions)")
    which.add_argument("--each-head", action="store_true", help="disable each head alone, one condition per head")
    which.add_argument("--each-layer", action="store_true", help="disable all heads of each layer, one per layer")
    which.add_argument("--chosen", nargs="+", metavar="REL",
                       help="disable each relation's top --k heads on --select-on, against --random matched random sets")
    versus = parser.add_argument_group("chosen against matched random heads (--chosen)")
    versus.add_argument("--k", nargs="+", type=int, default=[1], metavar="K", help="sizes of the chosen sets (default: 1)")
    versus.add_argument("--random", type=int, default=20, metavar="N", help="matched random sets per chosen set (default: 20)")
    versus.add_argument("--select-on", metavar="DEV", help="the probe result file (JSON) of DEV that chooses the heads")
    parser.add_argument("--metric", required=True, choices=["mlm", "lm", "probe", "classification"], metavar="METRIC",
                        help="what to measure: mlm, lm, probe or classification (see below)")
    parser.add_argument("--labels", metavar="CSV",
                        help="the labelled input of --metric classification (text,label columns)")
    parser.add_argument("--relations", nargs="+", default=list(DEFAULT_RELATIONS), metavar="REL",
                        help=f"relations of --metric probe (default: {' '.join(DEFAULT_RELATIONS)})")
    parser.add_argument("--mask-rate", type=share, default=0.15, metavar="SHARE",
                        help="share of each unit's tokens masked for --metric mlm (default: 0.15)")
    add_bootstrap_options(parser)
    parser.add_argument("--top", type=int, default=20, metavar="N",
                        help="rows per table, most helpful removals first; 0 shows all (default: 20)")


def run(args: argparse.Namespace) -> int:
    from probing.analyses.ablation.accumulator import METRICS, AblationAccumulator, ablation_tables
    from probing.analyses.ablation.versus import versus_table
    from probing.engine.readings import READINGS

    source = _checked_input(args)
    metric = METRICS[args.metric](seed=args.seed, mask_rate=args.mask_rate, relations=args.relations)
    if metric.needs_trees and args.text:
        raise ProbingError("--metric probe needs a treebank (its trees), not --text", source="--text")
    with EngineCommand(args, head=metric.head, source=source) as command:
        loaded = command.loaded
        metric.setup(loaded)
        layers, heads = loaded.num_layers, READINGS[args.attention].heads(loaded.num_heads)
        conditions, sets = _conditions(args, layers, heads)
        accumulator = AblationAccumulator(metric, conditions, layers, heads, bootstrap=args.bootstrap, seed=args.seed,
                                          causal=loaded.is_causal, pool_from=getattr(args, "pool_from", "mean"))
        stats = command.run([accumulator], f"{len(conditions)} conditions")
        if not command.is_main:
            return 0
        options = {"metric": args.metric, "metric_options": {"seed": args.seed, "mask_rate": args.mask_rate,
                                                              "relations": list(args.relations)},
                   "bootstrap": {"replicates": args.bootstrap, "seed": args.seed, "method": "poisson"}}
        result = command.result("ablation", stats, accumulator, options)
        print(f"{loaded.name}: {metric.description} with heads disabled ({len(conditions) - 1} conditions; "
              f"intervals: 95% paired bootstrap, {args.bootstrap} replicates)\n")
        if sets is not None:
            values, replicates, _ = accumulator.scores()
            print(versus_table(values, replicates, sets, metric))
        else:
            print(ablation_tables(result, top=args.top or None))
        command.write(result)
        command.hint()
    return 0


def _checked_input(args: argparse.Namespace):
    """The options that decide nothing yet but must hold before a model loads; the labelled CSV of
    ``--metric classification`` as the input (None: the usual treebank or text)."""
    from probing.data.inputs import InputSource
    from probing.data.relations import check_relation_names

    if args.bootstrap < 1:
        raise ProbingError("ablation needs bootstrap replicates for its intervals (1 or more)", source="--bootstrap")
    if args.attention != "weights":
        raise ProbingError("heads are disabled in the attention weights; --attention must be weights here",
                           source="--attention")
    if args.top < 0:
        raise ProbingError(f"must be 0 (all) or more, got {args.top}", source="--top")
    check_relation_names(args.relations)
    if args.metric == "classification":
        if not args.labels:
            raise ProbingError("--metric classification reads a labelled CSV: give --labels FILE.csv", source="--labels")
        return InputSource.labelled(args.labels, limit=args.limit)
    if args.labels:
        raise ProbingError("--labels is the input of --metric classification only", source="--labels")
    return None


def _conditions(args: argparse.Namespace, layers: int, heads: int) -> tuple[list, list[dict] | None]:
    """The conditions to run after the intact model, and with --chosen the sets behind them."""
    from probing.analyses.ablation.accumulator import INTACT, Condition, chosen_heads, each_head, each_layer
    from probing.analyses.ablation.versus import set_label

    if args.each_head:
        return each_head(layers, heads), None
    if args.each_layer:
        return each_layer(layers, heads), None
    if not args.chosen:
        return chosen_heads(args.heads, layers, heads), None
    sets = _versus_sets(args, layers, heads)
    return [INTACT] + [Condition(set_label(entry), entry["heads"]) for entry in sets], sets


def _versus_sets(args: argparse.Namespace, layers: int, heads: int) -> list[dict]:
    """The chosen set of every --chosen relation and --k size (from the DEV result), with its random draws."""
    from probing.analyses.ablation.versus import chosen_sets_on_dev, versus_sets
    from probing.stats.heldout import read_dev_result

    if not args.select_on:
        raise ProbingError("--chosen chooses heads on DEV: give --select-on DEV.json (a probe result)", source="--select-on")
    if args.random < 1:
        raise ProbingError(f"must be 1 or more, got {args.random}", source="--random")
    chosen = chosen_sets_on_dev(read_dev_result(args.select_on), args.chosen, args.k, layers, heads)
    return versus_sets(chosen, layers, heads, args.random, args.seed)
