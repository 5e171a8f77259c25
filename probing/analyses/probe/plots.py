"""Layer x head heatmaps of a result file's accuracy (matplotlib, Agg; never imports torch).

Per relation and direction, one heatmap: layers down, heads across, both
counted from 1; colour = accuracy on the result's treebank. The chosen head is
outlined (chosen on dev when the result has a ``heldout`` object, else the
in-sample best), and the chosen offset's accuracy is drawn across the colour
bar, so a glance shows which heads beat the positional baseline.

>>> import numpy as np
>>> entry = {"total": 4, "heads": {"dep_to_head": [[1, 4]], "head_to_dep": [[0, 2]]}}
>>> accuracy_grid(entry).tolist()
[[[0.25, 1.0]], [[0.0, 0.5]]]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from probing.analyses.probe.heldout_block import in_sample_reports
from probing.atomic import save_figure_atomic
from probing.errors import ProbingError
from probing.naming import DIRECTIONS, head_name, interval_text, offset_name, percent
from probing.naming import WORDS as ARROWS
from probing.report.board import result_label, treebank_label
from probing.report.drawing import MARK, layer_head_heatmap, new_figure

CMAP = "viridis"


def accuracy_grid(entry: dict) -> np.ndarray:
    """float [direction, layer, head] accuracy of one relation entry; NaN without pairs."""
    heads = np.stack([np.asarray(entry["heads"][d], dtype=np.float64) for d in DIRECTIONS])
    return heads / entry["total"] if entry["total"] else np.full_like(heads, np.nan)


def chosen(result: dict, relation: str) -> dict:
    """The report to mark for ``relation``: held-out (chosen on dev) when present, else in-sample."""
    heldout = result.get("heldout")
    if heldout:
        return {**heldout["relations"][relation]["heldout"], "selection": "chosen on dev"}
    return {**in_sample_reports(result)[relation], "selection": "in-sample best"}


def _check_relation(result: dict, relation: str) -> None:
    if relation not in result["relations"]:
        from probing.data.relations import did_you_mean

        known = ", ".join(result["relations"])
        raise ProbingError(f"relation {relation!r} is not in this result{did_you_mean(relation, result['relations'])} "
                           f"(it has: {known})", source="--relation")


def _draw_heatmap(ax, grid: np.ndarray, mark: tuple[int, int] | None, *, annotate: bool):
    """One relation's [layer, head] accuracy grid in percent (probing.report.drawing's heatmap)."""
    return layer_head_heatmap(ax, grid, scale=100.0, cmap=CMAP, marks=[mark] if mark else [], annotate=annotate)


def _colour_bar(figure, image, axes, baseline: dict | None, *, label: bool = True):
    """Colour bar with the baseline's accuracy drawn across it as a red line."""
    bar = figure.colorbar(image, ax=axes, fraction=0.05, pad=0.02, aspect=15)
    bar.ax.tick_params(labelsize=7)
    text = "accuracy %" if label else ""
    if baseline is not None:
        value = 100 * baseline["accuracy"]
        bar.ax.axhline(value, color=MARK, linewidth=2.5)
        text += ("\n" if label else "") + f"red: offset {offset_name(baseline['offset'])} = {value:.1f}%"
    bar.set_label(text, fontsize=7)
    return bar


def _choice_text(report: dict) -> str:
    head, baseline = report.get("head"), report.get("baseline")
    if head is None:
        return "no pairs"
    interval = head.get("interval")
    ci = f" {interval_text(interval)}" if interval else ""
    text = (f"outlined, {report['selection']}: {head_name(head['layer'], head['head'])} {ARROWS[head['direction']]}, "
            f"{percent(head['accuracy'])}%{ci}")
    if baseline is not None:
        text += f"\nred line: best offset {offset_name(baseline['offset'])}, {100 * baseline['accuracy']:.1f}%"
    return text


def _subject(result: dict) -> str:
    return f"{result_label(result)} on {treebank_label(result['treebank']['path'])}"


def plot_relation(result: dict, relation: str, path: str | Path, *, dpi: int = 150) -> Path:
    """Both directions of one relation side by side, the chosen head outlined."""
    _check_relation(result, relation)
    entry, report = result["relations"][relation], chosen(result, relation)
    grid = accuracy_grid(entry)
    layers, heads = grid.shape[1:]
    cell = 0.34  # inches per heatmap cell; small models still get room for their titles
    width, height = max(3.4, 0.5 + cell * heads), max(1.4, cell * layers)
    figure = new_figure(2 * width + 1.2, height + 1.9, layout="constrained")
    axes = figure.subplots(1, 2, sharey=True)
    head = report.get("head")
    image = None
    for d, (ax, direction) in enumerate(zip(axes, DIRECTIONS)):
        mark = (head["layer"], head["head"]) if head and head["direction"] == direction else None
        image = _draw_heatmap(ax, grid[d], mark, annotate=True)
        ax.set_title(ARROWS[direction], fontsize=9)
    axes[1].set_ylabel("")
    _colour_bar(figure, image, list(axes), report.get("baseline"))
    figure.suptitle(f"{relation}: {_subject(result)}, {entry['total']} pairs (layers and heads from 1)\n"
                    f"{_choice_text(report)}", fontsize=9)
    return save_figure_atomic(figure, path, dpi=dpi)


def plot_overview(result: dict, path: str | Path, *, dpi: int = 120) -> Path:
    """Every relation (rows) in both directions (columns), one figure."""
    relations = list(result["relations"])
    if not relations:
        raise ProbingError("the result has no relations to plot")
    layers, heads = result["model"]["num_layers"], result["model"]["num_heads"]
    cell = 0.2  # inches per heatmap cell; small models still get room for their titles
    width, height = max(2.9, 0.5 + cell * heads), max(1.5, 0.75 + cell * layers)
    figure = new_figure(2 * width + 1.4, height * len(relations) + 0.9, layout="constrained")
    axes = np.atleast_2d(figure.subplots(len(relations), 2, squeeze=False))
    for row, relation in enumerate(relations):
        entry, report = result["relations"][relation], chosen(result, relation)
        grid, head = accuracy_grid(entry), report.get("head")
        image = None
        for d, direction in enumerate(DIRECTIONS):
            ax = axes[row, d]
            mark = (head["layer"], head["head"]) if head and head["direction"] == direction else None
            image = _draw_heatmap(ax, grid[d], mark, annotate=False)
            title = f"{relation}, {ARROWS[direction]}"
            if mark is not None:
                title += f"\nchosen {head_name(head['layer'], head['head'])}: {100 * head['accuracy']:.1f}%"
            ax.set_title(title, fontsize=8)
            if d:
                ax.set_ylabel("")
            if row < len(relations) - 1:
                ax.set_xlabel("")
        _colour_bar(figure, image, list(axes[row]), report.get("baseline"), label=False)
    selection = "chosen on dev" if result.get("heldout") else "in-sample best"
    figure.suptitle(f"{_subject(result)}: accuracy % per head (layers and heads from 1)\n"
                    f"outlined: head {selection}; red line on each colour bar: best offset baseline", fontsize=9)
    return save_figure_atomic(figure, path, dpi=dpi)
