"""``probing compare``: per-head cosine similarity of two checkpoints' attention maps (Kovaleva et al. 2019, sec. 4.4)."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import EngineCommand, add_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.compare.options import OPTIONS

    parser.epilog = (
        "Every query row's attention distribution of --model (e.g. the pre-trained checkpoint) is compared with "
        "the same row of --second-model (e.g. the fine-tuned one): the cosine, padding excluded as rows and keys, "
        "averaged over rows per head and per layer. Both must give the same token ids and have the same shape. "
        "With --output C.json, C-compare.png is the layer x head map. Layers and heads count from 1 in tables."
    )
    add_options(parser, OPTIONS)


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from probing.analyses.compare.accumulator import layer_means, plot_similarity
    from probing.analyses.compare.options import CompareOptions
    from probing.analyses.compare.run import compare
    from probing.naming import head_name
    from probing.results.schema.arrays import decode_array

    with EngineCommand(args, analysis="compare", figures=("compare",), start=False) as command:
        result = compare(*command.specs(CompareOptions), start=command.start)
        if result is None:  # another process of a torchrun: rank 0 writes
            return 0
        state = {name: decode_array(block) for name, block in result["state"].items()}
        similarity = state["cosines"] / float(state["rows"])  # unrounded, as the accumulator has it
        means = layer_means(similarity)
        second = result["second_model"]["name"]
        name_b = second + (f" (random init, seed {args.seed})" if args.second_random_init else "")
        title = f"{result['model']['name']} vs {name_b}: attention cosine ({int(state['units'])} units)"
        rows = [[layer + 1, f"{means[layer]:.3f}",
                 f"{similarity[layer].min():.3f} ({head_name(layer, int(similarity[layer].argmin()))})",
                 f"{similarity[layer].max():.3f}"] for layer in range(similarity.shape[0])]
        print(f"{title}; {result['rows']} query rows, {result['input']['skipped']['too_long']} units skipped as "
              "too long")
        print(tabulate(rows, headers=["layer", "mean cosine", "lowest head", "highest"], tablefmt="simple",
                       disable_numparse=True))
        if command.write(result):
            print(f"wrote {plot_similarity(similarity, title, command.figure_path('compare'))}", file=sys.stderr)
        command.hint()
    return 0
