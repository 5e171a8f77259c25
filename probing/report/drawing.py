"""What every figure shares: a matplotlib ``Figure`` (never pyplot, so importing probing never switches a
user's backend) and the one layer x head heatmap drawer.

>>> import numpy as np
>>> figure = new_figure(3, 2)
>>> axis = figure.subplots()
>>> image = layer_head_heatmap(axis, np.array([[0.2, 0.9], [0.5, 0.1]]), marks=[(0, 1)])
>>> [label.get_text() for label in axis.get_xticklabels()], len(axis.patches)
(['1', '2'], 1)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

MARK = "#ff2d55"
"""Outline colour of a marked (chosen) head."""


def new_figure(width: float, height: float, **options):
    """A matplotlib Figure of ``width`` x ``height`` inches, independent of pyplot and its backend."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), **options)


def layer_head_heatmap(axis, grid: np.ndarray, *, vmin: float = 0.0, vmax: float = 1.0, cmap="viridis",
                       marks: Iterable[tuple[int, int]] = (), annotate: bool = False, scale: float = 1.0,
                       norm=None, labels: bool = True):
    """One [layer, head] grid, layers down and heads across, both ticked from 1; ``marks`` are outlined.

    ``scale`` multiplies the values (100 for percent); ``annotate`` writes each cell's value.
    Returns the image, for a colour bar.
    """
    from matplotlib.patches import Rectangle

    grid = np.asarray(grid, dtype=float) * scale
    layers, heads = grid.shape
    options = {"norm": norm} if norm is not None else {"vmin": vmin * scale, "vmax": vmax * scale}
    image = axis.imshow(grid, cmap=cmap, aspect="equal", interpolation="nearest", **options)
    axis.set_xticks(range(heads), [str(h + 1) for h in range(heads)], fontsize=7)
    axis.set_yticks(range(layers), [str(layer + 1) for layer in range(layers)], fontsize=7)
    if labels:
        axis.set_xlabel("head", fontsize=8)
        axis.set_ylabel("layer", fontsize=8)
    axis.tick_params(length=0)
    if annotate:
        middle = (vmin + vmax) / 2 * scale
        for layer in range(layers):
            for head in range(heads):
                value = grid[layer, head]
                if np.isfinite(value):
                    axis.text(head, layer, f"{value:.0f}", ha="center", va="center", fontsize=5.5,
                              color="black" if value > middle else "white")
    for layer, head in marks:
        axis.add_patch(Rectangle((head - 0.5, layer - 0.5), 1, 1, fill=False, edgecolor=MARK, linewidth=2.2))
    return image
