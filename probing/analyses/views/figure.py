"""Sentence views as figures for a paper (SVG and PNG), drawn with matplotlib's Figure API.

The same picture the explore page draws in the browser (probing.report.page), for
one head and a few sentences stacked: the words in a row; above them an arc
from each word to the word it attends to most (``dep_to_head``), or from the
word that attends to it most (``head_to_dep``), wider and darker for more
attention, green when a dependent of the relation finds its gold head, red
when it misses, grey for other words; under each word a bar with its share
of attention to special tokens; below, the relation's gold arcs dashed. The
page draws with the browser's own SVG so that any head can be shown on a
click without a file per head; this module draws the chosen heads' files.

>>> sentence = {"index": 0, "words": ["she", "ate", "it"], "heads": [1, -1, 1], "labels": ["nsubj", "root", "obj"],
...             "pairs": {"dobj": [[2, 1]]}}
>>> values = [[1, 0, 1], [0.6, 0.5, 0.7], [1, 0, 1], [0.5, 0.6, 0.7], [0.2, 0.3, 0.1], [0.0, 0.0, 0.0]]
>>> figure = sentence_views_figure([sentence], [values], "dobj", "dep_to_head", title="3-1")
>>> [text.get_text() for text in figure.axes[0].texts][:4]
['3-1', 'she', 'ate', 'it']
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from probing.atomic import save_figure_atomic
from probing.report.drawing import new_figure
from probing.report.escaping import file_name

COLOURS = {"correct": "#1a7f37", "wrong": "#cf222e", "other": "#8c959f", "gold": "#333333", "special": "#6e40c9"}
CHAR_WIDTH = 0.105
"""Inches per character of the 9-point word labels (a word's slot is at least 0.42 inch)."""


def _positions(words: Sequence[str]) -> tuple[list[float], float]:
    centres, left = [], 0.1
    for word in words:
        width = max(CHAR_WIDTH * len(word) + 0.16, 0.42)
        centres.append(left + width / 2)
        left += width
    return centres, left + 0.1


def _arc(axis, x1: float, x2: float, y: float, height: float, colour: str, width: float, alpha: float,
         dashed: bool = False) -> None:
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.path import Path as MplPath

    path = MplPath([(x1, y), (x1, y + height), (x2, y + height), (x2, y)],
                   [MplPath.MOVETO, MplPath.CURVE4, MplPath.CURVE4, MplPath.CURVE4])
    axis.add_patch(FancyArrowPatch(path=path, arrowstyle="-|>", mutation_scale=7 + 2 * width, color=colour,
                                   linewidth=width, alpha=alpha, linestyle="--" if dashed else "-",
                                   shrinkA=0, shrinkB=0))


def _lift(distance: float) -> float:
    return min(0.12 + 0.28 * distance, 1.1)


def sentence_views_figure(sentences: Sequence[dict], values: Sequence[Sequence[Sequence[float]]], relation: str,
                          direction: str, *, title: str = ""):
    """One figure, one row per sentence; ``values`` per sentence as the views keep them
    (probing.analyses.views.accumulator.VALUES order). Units: inches, so text keeps its size however long a sentence is."""
    layouts = []
    for sentence, rows in zip(sentences, values):
        x, width = _positions(sentence["words"])
        spans = [abs(x[int(t)] - x[i]) for i, t in enumerate(rows[0 if direction == "dep_to_head" else 2])]
        gold = {q: h for q, h in sentence["pairs"].get(relation, []) if h >= 0}
        gold_spans = [abs(x[h] - x[q]) for q, h in gold.items()]
        above = _lift(max(spans, default=0.0)) + 0.1
        below = 0.42 + (0.6 * _lift(max(gold_spans)) if gold_spans else 0.0)
        layouts.append((x, width, above, below, gold))
    figure_width = max(max((layout[1] for layout in layouts), default=2.0), 2.0)
    heights = [above + 0.22 + below for _, _, above, below, _ in layouts]
    figure_height = sum(heights) + (0.3 if title else 0.05)
    figure = new_figure(figure_width, figure_height)
    axis = figure.add_axes((0, 0, 1, 1))
    axis.set_xlim(0, figure_width)
    axis.set_ylim(0, figure_height)
    axis.set_axis_off()
    top = figure_height - (0.3 if title else 0.05)
    if title:
        axis.text(0.1, figure_height - 0.08, title, fontsize=9, va="top", ha="left", weight="bold")
    for (sentence, rows), (x, _, above, _below, gold), height in zip(zip(sentences, values), layouts, heights):
        base = top - above  # where arcs start, just above the words
        words_y = base - 0.14
        for i, word in enumerate(sentence["words"]):
            axis.text(x[i], words_y, word, fontsize=9, ha="center", va="center")
        by_dependent = direction == "dep_to_head"
        for i in range(len(sentence["words"])):
            target = int(rows[0][i] if by_dependent else rows[2][i])
            weight = float(rows[1][i] if by_dependent else rows[3][i])
            kind = ("correct" if gold[i] == target else "wrong") if i in gold else "other"
            start, end = (i, target) if by_dependent else (target, i)
            _arc(axis, x[start], x[end], base, _lift(abs(x[end] - x[start])), COLOURS[kind], 0.5 + 2.5 * weight,
                 0.3 + 0.7 * min(weight, 1.0))
        bar_y = words_y - 0.2
        for i in range(len(sentence["words"])):
            share, slot = min(float(rows[4][i]), 1.0), 0.32
            axis.add_patch(_rectangle(x[i] - slot / 2, bar_y, slot, 0.05, "#e6e6ee"))
            axis.add_patch(_rectangle(x[i] - slot / 2, bar_y, slot * share, 0.05, COLOURS["special"]))
            if share >= 0.05:
                axis.text(x[i], bar_y - 0.07, f"{100 * share:.0f}%", fontsize=6, ha="center", va="center",
                          color="#555555")
        gold_y = bar_y - 0.16
        for q, h in gold.items():
            _arc(axis, x[q], x[h], gold_y, -0.6 * _lift(abs(x[h] - x[q])), COLOURS["gold"], 0.9, 0.9, dashed=True)
        top -= height
    return figure


def _rectangle(x: float, y: float, width: float, height: float, colour: str):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), width, height, color=colour, linewidth=0)


def write_views(folder: str | Path, name: str, sentences: Sequence[dict], values, relation: str, direction: str,
                title: str) -> list[Path]:
    """``folder/NAME.svg`` and ``folder/NAME.png`` of :func:`sentence_views_figure`, each written atomically;
    NAME is ``name`` made a safe file name (:func:`probing.report.escaping.file_name`: a relation read from a
    result file never leads out of ``folder``)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    figure = sentence_views_figure(sentences, values, relation, direction, title=title)
    stem = file_name(name)
    return [save_figure_atomic(figure, folder / f"{stem}.{suffix}", dpi=200) for suffix in ("svg", "png")]
