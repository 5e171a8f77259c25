"""``probing gradients``: how much the LM loss depends on attention to [SEP] (Clark et al. 2019, Fig. 3)."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import (
    EngineCommand,
    add_batch_options,
    add_input_options,
    add_model_options,
    add_output_options,
    add_run_options,
    share,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Needs a checkpoint with a trained LM head: a masked LM (a seeded 15% of each unit's non-special tokens "
        "masked) or a causal LM (every next token). Sentence-embedding checkpoints such as all-MiniLM-L6-v2 have "
        "none and get an error. The loss of a batch is the sum of each unit's mean cross-entropy. With --output "
        "G.json, G-gradients.png shows mean |dL/dA| per layer for attention to the first special token, "
        "separators, . and , and other tokens, beside the attention itself."
    )
    add_model_options(parser, random_init=False)
    add_input_options(parser)
    parser.add_argument("--mask-rate", type=share, default=0.15, metavar="SHARE",
                        help="share of each unit's tokens masked for a masked LM (default: 0.15)")
    add_batch_options(parser)
    add_run_options(parser)
    add_output_options(parser)
    parser.set_defaults(attention="weights")


def run(args: argparse.Namespace) -> int:
    from probing.analyses.gradients.accumulator import GradientAccumulator
    from probing.analyses.gradients.report import gradient_table
    from probing.engine.token_roles import token_names
    from probing.report.figures import gradient_figure

    args.random_init = False
    with EngineCommand(args, analysis="gradients", head="lm", figures=("gradients",)) as command:
        loaded = command.loaded
        if loaded.head == "masked_lm" and loaded.tokenizer.mask_token_id is None:
            from probing.errors import ProbingError

            raise ProbingError(f"the tokenizer of {loaded.name} has no mask token", source="--model")
        accumulator = GradientAccumulator(loaded.num_layers, loaded.num_heads, loss=loaded.head, seed=args.seed,
                                          mask_rate=args.mask_rate, token_names=token_names(loaded))
        stats = command.run([accumulator], "gradients")
        if not command.is_main:
            return 0
        result = command.result("gradients", stats, accumulator,
                                {"loss": loaded.head, "mask_rate": args.mask_rate})
        print(gradient_table(result))
        if command.write(result):
            print(f"wrote {gradient_figure(result, command.figure_path('gradients'))}", file=sys.stderr)
        command.hint()
    return 0
