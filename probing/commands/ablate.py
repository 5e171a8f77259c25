"""``probing ablate``: disable heads (uniform attention) and measure what changes (Kovaleva et al. 2019, sec. 4.5)."""

from __future__ import annotations

import argparse

from probing.commands.common import EngineCommand, add_bootstrap_options, add_engine_options, share


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
    versus.add_argument("--select-on", metavar="DEV",
                        help="DEV, which chooses the heads: a probe result file (JSON) of probing score, or a treebank "
                             "(en_ewt:dev, a .conllu file) scored first in this command, --limit applying to it too; "
                             "never the run's own units")
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
    from probing.analyses.ablation.accumulator import (
        INTACT,
        METRICS,
        AblationAccumulator,
        Condition,
        ablation_tables,
        chosen_heads,
        each_head,
        each_layer,
    )
    from probing.analyses.ablation.choosing import dev_relations, open_dev
    from probing.data.inputs import InputSource
    from probing.data.relations import check_relation_names
    from probing.engine.readings import READINGS
    from probing.errors import ProbingError

    if args.bootstrap < 1:
        raise ProbingError("ablation needs bootstrap replicates for its intervals (1 or more)", source="--bootstrap")
    if args.attention != "weights":
        raise ProbingError("heads are disabled in the attention weights; --attention must be weights here",
                           source="--attention")
    if args.top < 0:
        raise ProbingError(f"must be 0 (all) or more, got {args.top}", source="--top")
    check_relation_names(args.relations)
    source = None
    if args.metric == "classification":
        if not args.labels:
            raise ProbingError("--metric classification reads a labelled CSV: give --labels FILE.csv", source="--labels")
        source = InputSource.labelled(args.labels, limit=args.limit)
    elif args.labels:
        raise ProbingError("--labels is the input of --metric classification only", source="--labels")
    metric = METRICS[args.metric](seed=args.seed, mask_rate=args.mask_rate, relations=args.relations)
    if metric.needs_trees and args.text:
        raise ProbingError("--metric probe needs a treebank (its trees), not --text", source="--text")
    with EngineCommand(args, head=metric.head, source=source) as command:
        dev = open_dev(args.select_on, command.source, args.limit) if args.chosen else None  # before the model loads
        loaded = command.loaded
        metric.setup(loaded)
        layers, heads = loaded.num_layers, READINGS[args.attention].heads(loaded.num_heads)
        if args.each_head:
            conditions = each_head(layers, heads)
        elif args.each_layer:
            conditions = each_layer(layers, heads)
        elif args.chosen:
            sets = _versus_sets(args, dev_relations(dev, args.chosen, command), layers, heads)
            conditions = [INTACT] + [Condition(f"{entry['key']}:{entry['role']}"
                                               + ("" if entry["draw"] is None else f"{entry['draw']}"), entry["heads"])
                                     for entry in sets]
        else:
            conditions = chosen_heads(args.heads, layers, heads)
        accumulator = AblationAccumulator(metric, conditions, layers, heads, bootstrap=args.bootstrap, seed=args.seed,
                                          causal=loaded.is_causal, pool_from=args.pool_from if hasattr(args, "pool_from") else "mean")
        stats = command.run([accumulator], f"{len(conditions)} conditions")
        if not command.is_main:
            return 0
        options = {"metric": args.metric, "metric_options": {"seed": args.seed, "mask_rate": args.mask_rate,
                                                              "relations": list(args.relations)},
                   "bootstrap": {"replicates": args.bootstrap, "seed": args.seed, "method": "poisson"},
                   **({"select_on": args.select_on} if args.chosen else {})}
        result = command.result("ablation", stats, accumulator, options)
        print(f"{loaded.name}: {metric.description} with heads disabled ({len(conditions) - 1} conditions; "
              f"intervals: 95% paired bootstrap, {args.bootstrap} replicates)\n")
        if args.chosen:
            print(_versus_table(accumulator, metric, sets))
        else:
            print(ablation_tables(result, top=args.top or None))
        command.write(result)
        command.hint()
    return 0


def _versus_sets(args: argparse.Namespace, dev: dict, layers: int, heads: int) -> list[dict]:
    """The chosen set of every --chosen relation and --k size (from DEV's relations), with its random draws."""
    import numpy as np

    from probing.analyses.ablation.versus import chosen_set, versus_sets
    from probing.errors import ProbingError
    from probing.naming import DIRECTIONS

    if args.random < 1:
        raise ProbingError(f"must be 1 or more, got {args.random}", source="--random")
    chosen = {}
    for relation in args.chosen:
        if relation not in dev:
            raise ProbingError(f"relation {relation!r} is not in the DEV result (it has {', '.join(dev)})",
                               source="--chosen")
        scored = dev[relation]
        if not scored["total"]:
            raise ProbingError(f"relation {relation!r} has no pair on DEV, so nothing chooses its heads",
                               source="--chosen")
        directions = DIRECTIONS + (("causal",) if scored.get("causal") else ())  # a decoder's later-to-earlier
        counts = np.stack([np.asarray(scored["heads"][d]) for d in DIRECTIONS]
                          + ([np.asarray(scored["causal"]["heads"])] if scored.get("causal") else []))
        if counts.shape[1:] != (layers, heads):
            raise ProbingError(f"the DEV result has {counts.shape[1]}x{counts.shape[2]} heads, the model "
                               f"{layers}x{heads}", source="--select-on")
        for k in args.k:
            chosen[f"{relation}@{k}"] = chosen_set(counts, k, directions)
    return versus_sets(chosen, layers, heads, args.random, args.seed)


def _versus_table(accumulator, metric, sets: list[dict]) -> str:
    """One row per chosen set and metric part: effect [interval], random mean [2.5, 97.5], p."""
    from probing.analyses.ablation.versus import versus_report

    values, replicates, _ = accumulator.scores()
    lines = [f"{'set':<12} {'part':<10} {'chosen effect [95%]':<28} {'random mean [2.5, 97.5]':<30} {'p':>6}  short"]
    for p, part in enumerate(metric.parts()):
        for key, row in versus_report(values, replicates, sets, p, metric.higher_is_better).items():
            low_high = row["chosen"]["interval"] or [float("nan")] * 2
            rnd = row["random"]
            lines.append(f"{key:<12} {part:<10} {row['chosen']['effect']:+.4f} [{low_high[0]:+.4f}, {low_high[1]:+.4f}]"
                         f"{'':<3} {rnd['mean']:+.4f} [{rnd['percentiles'][0]:+.4f}, {rnd['percentiles'][1]:+.4f}]"
                         f"{'':<4} {row['p_value']:>6.3f}  {row['short_sets']}")
    return "\n".join(lines)
