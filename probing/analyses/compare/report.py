"""What a compare result shows: its similarity per head with a title, the per-layer table and the heatmap beside
the result.

>>> import numpy as np
>>> from probing.results.schema.arrays import encode_array
>>> arrays = {"cosines": np.array([[1.0, 2.0]]), "rows": np.array(2.0), "units": np.array(2.0)}
>>> result = {"state": {name: encode_array(value) for name, value in arrays.items()}, "model": {"name": "a"},
...           "second_model": {"name": "a"}, "config": {"seed": 0}}
>>> similarity, title = similarity_and_title(result, second_random_init=True)
>>> similarity.tolist(), title
([[0.5, 1.0]], 'a vs a (random init, seed 0): attention cosine (2 units)')
"""

from __future__ import annotations

from probing.results.outputs import Figures


def similarity_and_title(result: dict, *, second_random_init: bool):
    """The ``[layer, head]`` mean cosine of ``result`` (unrounded, as the accumulator has it) and its title."""
    from probing.results.schema.arrays import decode_array

    state = {name: decode_array(block) for name, block in result["state"].items()}
    second = result["second_model"]["name"] + (f" (random init, seed {result['config']['seed']})"
                                               if second_random_init else "")
    title = f"{result['model']['name']} vs {second}: attention cosine ({int(state['units'])} units)"
    return state["cosines"] / float(state["rows"]), title


def layer_table(result: dict, *, second_random_init: bool) -> str:
    """The title, then each layer's mean cosine, its lowest head and its highest (layers and heads from 1)."""
    from tabulate import tabulate

    from probing.analyses.compare.accumulator import layer_means
    from probing.naming import head_name

    similarity, title = similarity_and_title(result, second_random_init=second_random_init)
    means = layer_means(similarity)
    rows = [[layer + 1, f"{means[layer]:.3f}",
             f"{similarity[layer].min():.3f} ({head_name(layer, int(similarity[layer].argmin()))})",
             f"{similarity[layer].max():.3f}"] for layer in range(similarity.shape[0])]
    return (f"{title}; {result['rows']} query rows, {result['input']['skipped']['too_long']} units skipped as "
            "too long\n" + tabulate(rows, headers=["layer", "mean cosine", "lowest head", "highest"], tablefmt="simple",
                                    disable_numparse=True))


def figures(options) -> Figures:
    """What a compare result has beside it: C-compare, the layer x head cosine heatmap beside each layer's mean."""

    def draw(result: dict, path_of) -> list:
        from probing.analyses.compare.accumulator import plot_similarity

        return [plot_similarity(*similarity_and_title(result, second_random_init=options.second_random_init),
                                path_of("compare"))]

    return Figures(("compare",), draw)

