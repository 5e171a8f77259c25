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


def gradient_table(result: dict, tablefmt: str = "simple") -> str:
    """One row per layer (from 1): mean |dL/dA| by kind of key, and the attention share to separators, or
    to the first token where the input has no separator (a decoder's sink: the paper's question asked of it).

    >>> result = {"token_names": {"first_special": "[CLS]", "separator": "[SEP]"}, "model": {"num_layers": 1},
    ...           "gradients": {"layer_gradient": {"first_special": [1e-5], "separator": [2e-5], "punctuation": None,
    ...                         "other": [3e-5]}, "layer_attention": {"separator": [0.25], "first_special": [0.5]}}}
    >>> gradient_table(result).split()[-5:]
    ['1.000e-05', '2.000e-05', '-', '3.000e-05', '25.0']
    >>> result["gradients"]["layer_gradient"]["separator"] = None   # a decoder: no separator
    >>> gradient_table(result).split()[-5:]
    ['1.000e-05', '-', '-', '3.000e-05', '50.0']
    """
    from tabulate import tabulate

    from probing.analyses.gradients.payload import KEY_KINDS

    gradients, names = result["gradients"], result["token_names"]
    headers = {"first_special": names["first_special"], "separator": names["separator"], "punctuation": ". ,", "other": "other"}
    shown = "separator" if gradients["layer_gradient"]["separator"] is not None else "first_special"
    rows = []
    for layer in range(result["model"]["num_layers"]):
        row = [layer + 1]
        for kind in KEY_KINDS:
            values = gradients["layer_gradient"][kind]
            row.append("-" if values is None else f"{values[layer]:.3e}")
        row.append(f"{100 * gradients['layer_attention'][shown][layer]:.1f}")
        rows.append(row)
    # No "|" in headers: the table is also written as Markdown.
    columns = ["layer"] + [f"grad to {headers[kind]}" for kind in KEY_KINDS] + [f"attn to {names[shown]} %"]
    return tabulate(rows, headers=columns, tablefmt=tablefmt, disable_numparse=True, stralign="right")


def run(args: argparse.Namespace) -> int:
    from probing.analyses.gradients.accumulator import GradientAccumulator
    from probing.commands.surface import token_names
    from probing.report.figures import gradient_figure

    args.random_init = False
    with EngineCommand(args, head="lm", figures=("gradients",)) as command:
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
