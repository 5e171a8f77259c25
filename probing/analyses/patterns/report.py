"""What ``probing patterns`` does with its counts: hand labels checked against the model and scored, the
per-layer table of pattern types, the figures.

>>> import numpy as np
>>> print(type_table(np.array([["block", "vertical"]], dtype=object)).splitlines()[2].split()[:1])
['1']
"""

from __future__ import annotations

import numpy as np

from probing.analyses.patterns.accumulator import agreement, plot_layer_maps, plot_types, type_shares
from probing.errors import ProbingError
from probing.results.outputs import Figures


def check_labels_fit(labels: list[dict], *, model: str, num_layers: int, num_heads: int, source: str) -> None:
    """Every hand-labelled head exists in the model (layers and heads from 1), refused at its line otherwise:
    said before the pass, not after it."""
    for row in labels:
        if int(row["layer"]) > num_layers or int(row["head"]) > num_heads:
            raise ProbingError(f"head {row['layer']}-{row['head']} does not exist: {model} has {num_layers} layers "
                               f"of {num_heads} heads (from 1)", source=source, line=row["line"])


def add_agreement(result: dict, labels: list[dict], *, label_model: str, source: str) -> None:
    """``result["agreement"]``: how many hand-labelled heads got their label's pattern type."""
    types = np.array(result["types"], dtype=object)  # [layer, head]
    predicted = {(label_model, layer, head): types[layer, head]
                 for layer in range(types.shape[0]) for head in range(types.shape[1])}
    try:
        result["agreement"] = agreement(predicted, labels)
    except (KeyError, ValueError) as error:
        raise ProbingError(f"a labelled head does not fit this model: {error}", source=f"--hand-labels {source}") from None


def type_table(types: np.ndarray) -> str:
    """One row per layer (from 1): the share of its heads of each pattern type, in percent."""
    from tabulate import tabulate

    per_layer = type_shares(types)
    rows = [[layer + 1] + [f"{100 * per_layer[t][layer]:.0f}" for t in per_layer] for layer in range(types.shape[0])]
    return tabulate(rows, headers=["layer"] + [f"{t} %" for t in per_layer], tablefmt="simple")


def write_figures(result: dict, samples: list[dict], *, model: str, figure_path) -> list:
    """The types figure, and with kept samples each layer's maps; ``figure_path(suffix)`` names each file."""
    types = np.array(result["types"], dtype=object)  # [layer, head]
    written = [plot_types(types, f"{model}: attention pattern types ({result['units']} units)",
                          figure_path("patterns"))]
    samples = sorted(samples, key=lambda sample: sample["index"])
    for layer in range(types.shape[0]) if samples else ():
        path = figure_path(f"maps-layer{layer + 1:02d}")
        plot_layer_maps([sample["maps"][layer].numpy() for sample in samples],
                        [sample["is_special"].numpy() for sample in samples], layer,
                        f"{model}, layer {layer + 1}: each head on {len(samples)} units (red ticks: special tokens)",
                        path)
        written.append(path)
    return written


def figures(options) -> Figures:
    """What a patterns result has beside it: P-patterns, every head's type, and with ``--maps N`` the first N
    units' maps, a figure per layer (P-maps-layerNN). The maps are no part of a result: the library function
    keeps them in ``samples`` as its pass reads them."""
    samples: list = []

    def draw(result: dict, path_of) -> list:
        return write_figures(result, samples, model=result["model"]["name"], figure_path=path_of)

    return Figures(("patterns",), draw, extra={"samples": samples})
