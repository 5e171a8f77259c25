"""The figure of an ``importance`` result: each relation's DEV accuracy heatmap beside the harm map (no torch).

One row per relation (and metric part): on the left every head's DEV accuracy on the relation in its better
direction (percent), on the right its harm when disabled alone (percentage points of an accuracy, nats of a loss;
red hurts, blue helps, white none), both drawn by probing.report.drawing's one layer x head heatmap, layers down
and heads across from 1. The relation's chosen head is outlined in both; a dot marks each head whose 95% paired
interval lies wholly on the harmful side. Each row's title gives rho, its interval and its p.

>>> default_panels({"config": {"metric": "lm"}, "metric": {"parts": ["loss"]}, "accuracy": {"det": {}, "all": {}}})
[('det', 'loss'), ('all', 'loss')]
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from probing.atomic import save_figure_atomic
from probing.errors import ProbingError
from probing.report.drawing import layer_head_heatmap, new_figure

HARM_COLOURS = "RdBu_r"
"""Diverging, white at 0: red where disabling the head hurts the metric, blue where it helps."""


def default_panels(result: dict, relations=None, parts=None) -> list[tuple[str, str]]:
    """(relation, part) of each row: every relation (or ``relations``), each with its primary part
    (probing.analyses.importance.board.primary_part) or with every one of ``parts``."""
    from probing.analyses.importance.board import primary_part

    known, metric_parts = list(result["accuracy"]), result["metric"]["parts"]
    for relation in relations or ():
        if relation not in known:
            raise ProbingError(f"relation {relation!r} is not in this result (it has: {', '.join(known)})",
                               source="--relation")
    for part in parts or ():
        if part not in metric_parts:
            raise ProbingError(f"the result has no part {part!r} (it has {', '.join(metric_parts)})", source="--part")
    panels = []
    for relation in relations or known:
        chosen = list(parts) if parts else [primary_part(result["config"]["metric"], metric_parts, relation)
                                            or metric_parts[0]]
        panels += [(relation, part) for part in chosen]
    return panels


def importance_figure(result: dict, path, relations=None, parts=None, *, dpi: int = 120) -> Path:
    """Write the figure of ``result`` to ``path``: per row (:func:`default_panels`), DEV accuracy beside harm."""
    from probing.report.board import result_label, treebank_label

    panels = default_panels(result, relations, parts)
    layers, heads = result["model"]["num_layers"], result["model"]["num_heads"]
    cell = 0.3 if layers * heads <= 100 else 0.2  # inches per heatmap cell; deep models get smaller cells
    width, height = max(3.4, 0.6 + cell * heads), max(1.8, 1.1 + cell * layers)
    total = 2 * width + 2.4
    figure = new_figure(total, height * len(panels) + 1.4, layout="constrained")
    axes = np.atleast_2d(figure.subplots(len(panels), 2, squeeze=False))
    for row, (relation, part) in enumerate(panels):
        _row(figure, axes[row], result, relation, part, characters=int(width * 15))
    dev = result["sources"]["dev"]["input"]["path"]
    units = f"{result['input']['units_used']:,} {'pairs' if result['input']['kind'] == 'minimal_pairs' else 'units'}"
    title = (f"{result_label(result)}: every head disabled alone ({result['metric']['description']}, {units} of "
             f"{treebank_label(result['input']['path'])}) against its accuracy on {treebank_label(dev)}; layers and "
             "heads from 1. Outlined: each relation's top head on DEV; dot: a head whose 95% paired interval lies "
             "wholly on the harmful side.")
    figure.suptitle(textwrap.fill(title, int(total * 14)), fontsize=9)
    return save_figure_atomic(figure, path, dpi=dpi)


def _row(figure, axes, result: dict, relation: str, part: str, characters: int) -> None:
    """One relation's accuracy (left) and one part's harm (right), the chosen head outlined in both; titles
    wrapped at ``characters``."""
    from probing.analyses.ablation.versus import effect_scale
    from probing.analyses.importance.board import NO_RHO, chosen_text
    from probing.naming import head_name, interval_text, p_value_text, scaled

    accuracy = np.array(result["accuracy"][relation]["accuracy"], dtype=float)
    chosen = result["chosen"][relation]
    mark = [(chosen["head"]["layer"], chosen["head"]["head"])]
    _bar(figure, layer_head_heatmap(axes[0], accuracy, scale=100.0, marks=mark), axes[0], "DEV accuracy %")
    top = f"top {head_name(mark[0][0], mark[0][1])}, {scaled(chosen['head']['accuracy'])}%"
    axes[0].set_title(textwrap.fill(f"{relation} on DEV ({result['accuracy'][relation]['pairs']:,} pairs), {top}",
                                    characters), fontsize=8)
    entry = result["map"][part]
    harm = _array(entry["harm"])
    higher_is_better = result["metric"]["higher_is_better"]
    scale = effect_scale(higher_is_better)
    factor = 100.0 if scale == "points" else 1.0
    reach = float(np.nanmax(np.abs(harm))) if np.isfinite(harm).any() else 0.0
    reach = reach or (0.005 if scale == "points" else 0.001)  # nothing moved: a small window, white throughout
    image = layer_head_heatmap(axes[1], harm, vmin=-reach, vmax=reach, cmap=HARM_COLOURS, scale=factor, marks=mark)
    _bar(figure, image, axes[1], f"harm ({'percentage points' if scale == 'points' else 'nats'})")
    layers, heads = np.nonzero(_clearly_harmful(entry, higher_is_better))
    axes[1].scatter(heads, layers, s=6, color="black", linewidths=0)
    test = result["syntax"][relation][part]
    rho = NO_RHO if test["rho"] is None else (
        f"rho {scaled(test['rho'], 'coefficient')} {interval_text(test['interval'], 'coefficient')}, "
        f"p = {p_value_text(test['p_value'])}")
    ranked = chosen["parts"][part]
    where = "" if ranked is None else f"; {chosen_text(chosen, ranked)}"
    axes[1].set_title(textwrap.fill(f"harm on {part}: {rho}{where}", characters), fontsize=8)
    axes[1].set_ylabel("")


def _bar(figure, image, axis, label: str) -> None:
    """A heatmap's colour bar, its ticks as plain signed numbers (a loss's harms can be 1e-5 wide: no offset
    text to collide with the title above)."""
    from matplotlib.ticker import FuncFormatter

    bar = figure.colorbar(image, ax=axis, fraction=0.05, pad=0.02, aspect=15)
    bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:.3g}"))
    bar.ax.tick_params(labelsize=7)
    bar.set_label(label, fontsize=7)


def _clearly_harmful(entry: dict, higher_is_better: bool) -> np.ndarray:
    """bool [layer, head]: the head's 95% interval lies wholly on the harmful side of 0."""
    low, high = _array(entry["low"]), _array(entry["high"])
    with np.errstate(invalid="ignore"):
        return (high < 0) if higher_is_better else (low > 0)


def _array(grid) -> np.ndarray:
    """A result's [layer][head] grid as floats, NaN for null."""
    return np.array([[np.nan if value is None else value for value in row] for row in grid], dtype=float)
