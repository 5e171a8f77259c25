"""``probing score``: every head of a checkpoint on a treebank, per relation, vs. fixed offsets."""

from __future__ import annotations

import argparse
import sys

from .common import add_batch_options, add_bootstrap_options, add_input_options, add_model_options, \
    add_output_options, add_reading_options, add_run_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..relations import DEFAULT_RELATIONS

    parser.epilog = (
        "Without options it scores the packaged all-MiniLM-L6-v2 on the project's sample treebank, offline. "
        "--treebank en_ewt (a public treebank with dev and test splits) chooses heads on en_ewt:dev and reports "
        "them on en_ewt:test with 95% intervals. Layers and heads in tables count from 1; the JSON counts from 0."
    )
    add_model_options(parser)
    add_input_options(parser, text=False, pairs=False)
    parser.add_argument("--relations", nargs="+", default=list(DEFAULT_RELATIONS), metavar="REL",
                        help="dobj, det, pobj, poss, all, or any UD label (nsubj matches nsubj and nsubj:pass; "
                             f"nsubj:pass only itself); default: {' '.join(DEFAULT_RELATIONS)}")
    parser.add_argument("--select-on", metavar="DEV",
                        help="choose each relation's head and offset on DEV (a treebank, or a DEV result JSON) and "
                             "report them on --treebank with 95%% bootstrap intervals")
    add_bootstrap_options(parser)
    add_batch_options(parser)
    add_reading_options(parser, pooling=True)
    add_run_options(parser)
    add_output_options(parser, figures=False)


def config_from_args(args: argparse.Namespace):
    from ..config import ScoreConfig

    return ScoreConfig(
        model=args.model, treebank=args.treebank, relations=tuple(args.relations), pool_from=args.pool_from,
        max_length=args.max_length, batch_size=args.batch_size, device=args.device, dtype=args.dtype,
        revision=args.revision, limit=args.limit, bootstrap=args.bootstrap, seed=args.seed,
        random_init=args.random_init, trust_remote_code=args.trust_remote_code, stack=args.stack,
        attention=args.attention, shard=args.shard,
    )


def run(args: argparse.Namespace) -> int:
    from .. import checkpointing
    from ..atomic import check_output_path
    from ..distributed import from_environment
    from ..engine import using_hooks
    from ..heldout import default_splits, score_with_selection
    from ..inputs import InputSource, open_input
    from ..results import write_result
    from ..tables import heldout_table, run_header, score_table
    from .common import progress_wanted

    config = config_from_args(args).validated()
    splits = default_splits(config.treebank)
    inputs = [open_input(spec, limit=args.limit).path for spec in (splits or [config.treebank])]
    if args.select_on and not args.select_on.lower().endswith(".json"):
        inputs.append(InputSource.treebank(args.select_on, option="--select-on").path)
    elif args.select_on:
        inputs.append(args.select_on)
    if args.output:
        check_output_path(args.output, inputs=inputs, follow_symlinks=args.follow_symlinks)
    if args.checkpoint:
        check_output_path(args.checkpoint, option="--checkpoint", inputs=inputs)
    # Under torchrun every process scores its share of the batches; rank 0 reports (docs/scaling.md).
    ranks = from_environment(args.device)
    try:
        checkpointer = checkpointing.from_options(
            ranks, output=args.output, checkpoint=args.checkpoint, every=args.checkpoint_every, resume=args.resume
        )
        with using_hooks(checkpointer or ranks):
            config = config.replace(device=ranks.device)
            result = score_with_selection(config, args.select_on, progress=progress_wanted(args) and ranks.is_main)
        if not ranks.is_main:
            return 0
        print(run_header(result))
        print(score_table(result))
        if "heldout" in result:
            print(heldout_table(result))
        if args.output:
            print(f"wrote {write_result(result, args.output, follow_symlinks=args.follow_symlinks)}", file=sys.stderr)
            if checkpointer:
                checkpointer.discard()
        else:
            print("(pass --output FILE.json to keep the counts)", file=sys.stderr)
        return 0
    finally:
        ranks.close()
