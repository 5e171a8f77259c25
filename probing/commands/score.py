"""``probing score``: every head of a checkpoint on a treebank, per relation, vs. offsets."""

from __future__ import annotations

import argparse
import sys

from ..config import ScoreConfig, parse_shard
from ..extraction import DTYPES
from ..pooling import from_pooling_modes
from ..relations import DEFAULT_RELATIONS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Without --model and --treebank it scores the packaged all-MiniLM-L6-v2 on the project's sample "
        "treebank, offline. Layers and heads in the table count from 1; the JSON counts from 0."
    )
    parser.add_argument("--model", help="hub id or local folder (default: the packaged all-MiniLM-L6-v2)")
    parser.add_argument(
        "--treebank", help="CoNLL-U/CoNLL-X file, or NAME:SPLIT such as en_ewt:dev (default: data/sample.conllu)"
    )
    parser.add_argument(
        "--relations",
        nargs="+",
        default=list(DEFAULT_RELATIONS),
        metavar="REL",
        help="dobj det pobj poss all, or any UD label (nsubj, nsubj:pass); default: %(default)s",
    )
    parser.add_argument("--output", help="write the result JSON here (replaced atomically)")
    parser.add_argument("--batch-size", type=int, default=32, help="sentences per batch (default: %(default)s)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default: %(default)s)")
    parser.add_argument("--dtype", default="float32", choices=list(DTYPES), help="model weights (pooling stays float32)")
    parser.add_argument("--max-length", type=int, help="longest input in tokens; longer sentences are skipped")
    parser.add_argument("--revision", help="hub branch, tag or commit of the model")
    parser.add_argument("--limit", type=int, help="only the first N sentences of the treebank")
    parser.add_argument("--pool-from", default="mean", choices=from_pooling_modes(), help="attention from a split word: mean of its pieces (the paper), first piece (reference code), or max")
    parser.add_argument("--bootstrap", type=int, default=1000, help="Poisson bootstrap replicates over sentences; 0 turns it off (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and of --random-init (default: %(default)s)")
    parser.add_argument("--random-init", action="store_true", help="same architecture with seeded random weights: the untrained control")
    parser.add_argument("--shard", type=parse_shard, metavar="I/N", help="score only sentences with index %% N == I; merge the parts with probing merge")
    parser.add_argument("--checkpoint", metavar="FILE", help="save the counts here now and then (default with --output: OUTPUT.checkpoint)")
    parser.add_argument("--checkpoint-every", type=float, default=300.0, metavar="SECONDS", help="seconds between checkpoints; 0 saves after every chunk of batch-size x 16 sentences (default: %(default)s)")
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoint of a killed run (same options); counts end identical to an uninterrupted run")
    parser.add_argument(
        "--select-on",
        metavar="DEV",
        help="choose each relation's head and offset on DEV (a treebank, or a DEV result JSON) and report them on "
        "--treebank with 95%% bootstrap intervals; --treebank en_ewt alone means select on en_ewt:dev, report on en_ewt:test",
    )
    parser.add_argument("--trust-remote-code", action="store_true", help="allow a hub model's own Python code to run")
    parser.add_argument(
        "--attention",
        choices=["encoder", "decoder"],
        help="which self-attention of an encoder-decoder model (T5) to score (default: encoder); "
        "the decoder reads the same words after its start token (docs/families.md)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def config_from_args(args: argparse.Namespace) -> ScoreConfig:
    return ScoreConfig(
        model=args.model,
        treebank=args.treebank,
        relations=tuple(args.relations),
        pool_from=args.pool_from,
        max_length=args.max_length,
        batch_size=args.batch_size,
        device=args.device,
        dtype=args.dtype,
        revision=args.revision,
        limit=args.limit,
        bootstrap=args.bootstrap,
        seed=args.seed,
        random_init=args.random_init,
        trust_remote_code=args.trust_remote_code,
        attention=args.attention,
        shard=args.shard,
    )


def run(args: argparse.Namespace) -> int:
    from .. import checkpointing
    from ..distributed import from_environment
    from ..heldout import score_with_selection
    from ..pipeline import using_hooks
    from ..results import write_result
    from ..tables import heldout_table, run_header, score_table

    # Under torchrun every process scores its share of the batches; rank 0 reports (docs/scaling.md).
    ranks = from_environment(args.device)
    try:
        checkpointer = checkpointing.from_options(
            ranks, output=args.output, checkpoint=args.checkpoint, every=args.checkpoint_every, resume=args.resume
        )
        with using_hooks(checkpointer or ranks):
            config = config_from_args(args).replace(device=ranks.device)
            progress = not args.quiet and sys.stderr.isatty() and ranks.is_main
            result = score_with_selection(config, args.select_on, progress=progress)
        if not ranks.is_main:
            return 0
        print(run_header(result))
        print(score_table(result))
        if "heldout" in result:
            print(heldout_table(result))
        if args.output:
            print(f"wrote {write_result(result, args.output)}", file=sys.stderr)
            if checkpointer:
                checkpointer.discard()
        else:
            print("(pass --output FILE.json to keep the counts)", file=sys.stderr)
        return 0
    finally:
        ranks.close()
