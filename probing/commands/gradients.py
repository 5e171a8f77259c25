"""``probing gradients``: how much the masked-LM loss depends on attention to [SEP] (Clark et al. 2019, Fig. 3)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .surface import add_analysis_arguments, open_input, pass_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Needs a checkpoint with a trained masked-LM head (AutoModelForMaskedLM); sentence-embedding "
        "checkpoints such as all-MiniLM-L6-v2 have none and get an error. Masks a seeded 15%% of each unit's "
        "non-special tokens; the loss is the sum of each unit's mean cross-entropy. Writes gradients.json and "
        "gradients.png (mean |dL/dA| per layer for attention to the first special token, separators, . and , "
        "and other tokens, beside the attention itself)."
    )
    add_analysis_arguments(parser, default_dir="gradients")
    parser.add_argument("--seed", type=int, default=0, help="seed of the masking (default: %(default)s)")
    parser.add_argument("--mask-rate", type=float, default=0.15, help="share of tokens masked (default: %(default)s)")


def load_mlm(args: argparse.Namespace):
    from ..analyses.gradients import load_masked_lm
    from ..errors import ProbingError

    if not 0 < args.mask_rate <= 1:
        raise ProbingError(f"must be in (0, 1], got {args.mask_rate}", source="--mask-rate")
    return load_masked_lm(args.model, revision=args.revision, device=args.device, trust_remote_code=args.trust_remote_code)


def write_gradients(result: dict, folder: Path) -> list[Path]:
    from ..analyses.figures import gradient_figure
    from ..results import write_result

    return [write_result(result, folder / "gradients.json"), gradient_figure(result, folder / "gradients.png")]


def gradient_table(result: dict, tablefmt: str = "simple") -> str:
    """One row per layer (from 1): mean |dL/dA| by kind of key, and the attention share to separators.

    >>> result = {"token_names": {"first_special": "[CLS]", "separator": "[SEP]"}, "model": {"num_layers": 1},
    ...           "gradients": {"layer_gradient": {"first_special": [1e-5], "separator": [2e-5], "punctuation": None,
    ...                         "other": [3e-5]}, "layer_attention": {"separator": [0.25]}}}
    >>> gradient_table(result).split()[-5:]
    ['1.000e-05', '2.000e-05', '-', '3.000e-05', '25.0']
    """
    from tabulate import tabulate

    from ..analyses.gradients import KEY_KINDS

    gradients, names = result["gradients"], result["token_names"]
    headers = {"first_special": names["first_special"], "separator": names["separator"], "punctuation": ". ,", "other": "other"}
    rows = []
    for layer in range(result["model"]["num_layers"]):
        row = [layer + 1]
        for kind in KEY_KINDS:
            values = gradients["layer_gradient"][kind]
            row.append("-" if values is None else f"{values[layer]:.3e}")
        row.append(f"{100 * gradients['layer_attention']['separator'][layer]:.1f}")
        rows.append(row)
    # No "|" in headers: the table is also written as Markdown.
    columns = ["layer"] + [f"grad to {headers[kind]}" for kind in KEY_KINDS] + [f"attn to {names['separator']} %"]
    return tabulate(rows, headers=columns, tablefmt=tablefmt, disable_numparse=True, stralign="right")


def run(args: argparse.Namespace) -> int:
    from ..analyses.overview import gradient_result

    source = open_input(args)
    loaded = load_mlm(args)
    options = pass_options(args)
    result = gradient_result(loaded, source, {**options.as_dict(), "seed": args.seed, "mask_rate": args.mask_rate}, options)
    print(gradient_table(result))
    for path in write_gradients(result, Path(args.output_dir)):
        print(f"wrote {path}", file=sys.stderr)
    return 0
