"""``probing ablate``: disable heads (uniform attention) and measure what changes (Kovaleva et al. 2019, sec. 4.5)."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..relations import DEFAULT_RELATIONS

    parser.epilog = (
        "Metrics: mlm (masked-LM loss of a checkpoint with a trained MLM head, on a text file or treebank), "
        "probe (best head's accuracy per relation on a treebank, as probing score), classification (accuracy of a "
        "sequence-classification checkpoint on a CSV with text,label columns). Heads count from 1 (3-5 is layer 3, "
        "head 5) on the command line and in tables; the JSON counts from 0."
    )
    parser.add_argument("model", help="hub id or local folder")
    parser.add_argument("input", nargs="?", help="text file, treebank, or (for classification) the labelled CSV")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--heads", action="append", metavar="L-H,...", help="disable these heads together (repeat for more conditions)")
    which.add_argument("--each-head", action="store_true", help="disable each head alone, one condition per head")
    which.add_argument("--each-layer", action="store_true", help="disable all heads of each layer, one condition per layer")
    parser.add_argument("--metric", required=True, choices=["mlm", "probe", "classification"])
    parser.add_argument("--labels", metavar="FILE.csv", help="labelled CSV (text,label) for --metric classification")
    parser.add_argument("--relations", nargs="+", default=list(DEFAULT_RELATIONS), metavar="REL", help="relations of --metric probe (default: %(default)s)")
    parser.add_argument("--limit", type=int, help="only the first N sentences / units / rows")
    parser.add_argument("--batch-size", type=int, default=16, help="units per batch (default: %(default)s)")
    parser.add_argument("--max-length", type=int, help="longest input in tokens; longer units are skipped")
    parser.add_argument("--mask-rate", type=float, default=0.15, help="share of tokens masked for --metric mlm (default: %(default)s)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="Poisson bootstrap replicates over units (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the masks and the bootstrap (default: %(default)s)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default: %(default)s)")
    parser.add_argument("--top", type=int, default=20, help="rows per table, most helpful removals first (default: %(default)s; 0: all)")
    parser.add_argument("--output", help="write every condition's result as JSON here")


def run(args: argparse.Namespace) -> int:
    from ..analyses.ablation import (
        AblationConfig,
        ablation_tables,
        each_head,
        each_layer,
        heads_label,
        make_metric,
        parse_heads,
        run_ablation,
    )
    from ..errors import ProbingError
    from ..results import write_result

    if args.limit is not None and args.limit < 1:
        raise ProbingError(f"must be a positive integer, got {args.limit}", source="--limit")
    if args.bootstrap < 1:
        raise ProbingError(f"must be a positive number of replicates, got {args.bootstrap}", source="--bootstrap")
    if not 0.0 < args.mask_rate < 1.0:
        raise ProbingError(f"must lie strictly between 0 and 1, got {args.mask_rate}", source="--mask-rate")
    config = AblationConfig(
        model=args.model,
        input=args.input,
        metric=args.metric,
        labels=args.labels,
        relations=tuple(args.relations),
        limit=args.limit,
        batch_size=args.batch_size,
        max_length=args.max_length,
        mask_rate=args.mask_rate,
        bootstrap=args.bootstrap,
        seed=args.seed,
        device=args.device,
    )
    metric = make_metric(config)
    layers, heads = metric.model.config.num_hidden_layers, metric.model.config.num_attention_heads
    if args.each_head:
        conditions = each_head(layers, heads)
    elif args.each_layer:
        conditions = each_layer(layers, heads)
    else:
        conditions = [(heads_label(chosen), chosen) for chosen in (parse_heads(text, layers, heads) for text in args.heads)]
    show = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if show:
            print(f"\rdisabled {done}/{total} conditions", end="" if done < total else "\n", file=sys.stderr)

    result = {
        "kind": "ablation",
        "config": {**config.__dict__, "relations": list(config.relations)},
        "metric": {"name": metric.name, "description": metric.description, "higher_is_better": metric.higher_is_better},
        "model": {"name_or_path": args.model, "num_layers": layers, "num_heads": heads},
        "intervention": "attention after the softmax replaced by the uniform distribution over the allowed keys",
        **run_ablation(metric, conditions, progress=progress),
    }
    print(f"{args.model}: {metric.description} with heads disabled ({len(conditions)} conditions; "
          f"intervals: 95% paired bootstrap, {args.bootstrap} replicates)\n")
    print(ablation_tables(result, top=args.top or None))
    if args.output:
        print(f"wrote {write_result(result, args.output)}", file=sys.stderr)
    return 0
