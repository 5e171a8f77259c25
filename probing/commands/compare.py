"""``probing compare``: per-head cosine similarity of two checkpoints' attention maps (Kovaleva et al. 2019, sec. 4.4)."""

from __future__ import annotations

import argparse

from probing.commands.common import add_options, run_analysis


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

    def similarity_and_title(result: dict):
        state = {name: decode_array(block) for name, block in result["state"].items()}
        second = result["second_model"]["name"] + (f" (random init, seed {args.seed})" if args.second_random_init
                                                   else "")
        title = f"{result['model']['name']} vs {second}: attention cosine ({int(state['units'])} units)"
        return state["cosines"] / float(state["rows"]), title  # unrounded, as the accumulator has it

    def show(result: dict) -> None:
        similarity, title = similarity_and_title(result)
        means = layer_means(similarity)
        rows = [[layer + 1, f"{means[layer]:.3f}",
                 f"{similarity[layer].min():.3f} ({head_name(layer, int(similarity[layer].argmin()))})",
                 f"{similarity[layer].max():.3f}"] for layer in range(similarity.shape[0])]
        print(f"{title}; {result['rows']} query rows, {result['input']['skipped']['too_long']} units skipped as "
              "too long")
        print(tabulate(rows, headers=["layer", "mean cosine", "lowest head", "highest"], tablefmt="simple",
                       disable_numparse=True))

    def draw(result: dict, figure_path) -> list:
        return [plot_similarity(*similarity_and_title(result), figure_path("compare"))]

    return run_analysis(args, compare, CompareOptions, analysis="compare", show=show, figures=("compare",), draw=draw)

