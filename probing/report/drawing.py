"""What every figure shares: a matplotlib ``Figure`` (never pyplot, so importing probing never switches a
user's backend) whose every text is drawn as plain text, and the one layer x head heatmap drawer.

Names from files (models, treebanks, languages, relations, words) reach titles, labels and legends; a ``$``
in them must not start mathtext (``$\\frac{a}{$`` fails to parse, and the figure with it), so every figure
is made by :func:`new_figure`, and no figure here uses mathtext.

>>> import numpy as np
>>> figure = new_figure(3, 2)
>>> axis = figure.subplots()
>>> image = layer_head_heatmap(axis, np.array([[0.2, 0.9], [0.5, 0.1]]), marks=[(0, 1)])
>>> [label.get_text() for label in axis.get_xticklabels()], len(axis.patches)
(['1', '2'], 1)
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from contextlib import contextmanager

import numpy as np

MARK = "#ff2d55"
"""Outline colour of a marked (chosen) head."""


def new_figure(width: float, height: float, **options):
    """A matplotlib Figure of ``width`` x ``height`` inches, independent of pyplot and its backend, that draws
    every text as it is written (no mathtext).

    >>> figure = new_figure(2, 1)
    >>> axis = figure.subplots()
    >>> _ = axis.set_title("$\\\\frac{a}{$"); figure.tight_layout(); figure.canvas.draw()
    >>> axis.title.get_text(), axis.title.get_parse_math()
    ('$\\\\frac{a}{$', False)
    """
    return _plain_text_figure()(figsize=(width, height), **options)


@contextmanager
def plain_text(figure):
    """Within: every text of ``figure``, and every text made meanwhile (tick labels are made as it is drawn),
    is plain text; mathtext is parsed only when a text's extent is measured, so this wraps every measuring."""
    from matplotlib import rc_context
    from matplotlib.text import Text

    with rc_context({"text.parse_math": False}):
        for text in figure.findobj(Text):
            text.set_parse_math(False)
        yield


@functools.cache
def _plain_text_figure():
    """The Figure class of :func:`new_figure` (made on first use: importing probing imports no matplotlib)."""
    from matplotlib.figure import Figure

    class PlainTextFigure(Figure):
        """A Figure that measures and draws its texts under :func:`plain_text`: drawing (and the constrained
        layout done then), ``tight_layout`` and the tight bounding box are where a text's extent is taken."""

        def draw(self, renderer):
            with plain_text(self):
                return super().draw(renderer)

        def tight_layout(self, *args, **kwargs):
            with plain_text(self):
                return super().tight_layout(*args, **kwargs)

        def get_tightbbox(self, *args, **kwargs):
            with plain_text(self):
                return super().get_tightbbox(*args, **kwargs)

    return PlainTextFigure


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
