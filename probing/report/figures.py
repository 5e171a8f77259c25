"""Figures of the surface, head-cluster and gradient analyses, from result objects (no torch).

Layers are counted from 1 on every axis, as in the paper; each dot is one
head, the line the layer's mean over heads. PNGs are written atomically.

>>> layers, values = head_dots([[0.1, 0.3], [0.5, 0.7]])
>>> layers.tolist(), values.tolist()
([1, 1, 2, 2], [0.1, 0.3, 0.5, 0.7])
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from probing.atomic import save_figure_atomic
from probing.naming import head_name
from probing.report.drawing import new_figure

DOT = {"s": 14, "alpha": 0.55, "linewidths": 0}
BEHAVIOUR_COLOURS = {
    "previous": "#d62728",
    "next": "#ff7f0e",
    "first special": "#1f77b4",
    "separator": "#9467bd",
    "punctuation": "#2ca02c",
    "broad": "#8c564b",
    "other": "#bdbdbd",
}


def head_dots(values) -> tuple[np.ndarray, np.ndarray]:
    """x (layer from 1) and y of every head of a [layer][head] list."""
    array = np.asarray(values, dtype=float)
    layers = np.repeat(np.arange(1, array.shape[0] + 1), array.shape[1])
    return layers, array.reshape(-1)


def _dots_and_mean(axis, values, colour: str, label: str | None = None) -> None:
    if values is None:
        axis.text(0.5, 0.5, "not measured\n(no such token)", ha="center", va="center", transform=axis.transAxes)
        return
    layers, flat = head_dots(values)
    axis.scatter(layers, flat, color=colour, **DOT)
    means = np.asarray(values, dtype=float).mean(axis=1)
    axis.plot(np.arange(1, len(means) + 1), means, color=colour, linewidth=1.8, label=label)


def _layer_axis(axis, num_layers: int, ylabel: str | None = None, share: bool = True) -> None:
    # every layer labelled up to 16 layers; deeper stacks (SmolLM2's 30) get 1 and every 5th, legibly
    axis.set_xticks(range(1, num_layers + 1) if num_layers <= 16 else [1, *range(5, num_layers + 1, 5)])
    axis.set_xlim(0.5, num_layers + 0.5)
    axis.set_xlabel("layer")
    if share:
        axis.set_ylim(-0.02, 1.02)
    if ylabel:
        axis.set_ylabel(ylabel)
    axis.grid(axis="y", alpha=0.3)


def _title(result: dict) -> str:
    model, source = result["model"], result["input"]
    name = model.get("name") or Path(model["name_or_path"]).name
    pairs = ", segment pairs" if source["pairs"] else ""
    return f"{name} on {Path(source['path']).name} ({source['units_used']} units{pairs})"


def surface_figure(result: dict, path) -> Path:
    """Figure 2 of the paper: average attention to token kinds and positions, per head and layer."""
    heads, names = result["surface"]["heads"], result["token_names"]
    num_layers = result["model"]["num_layers"]
    panels = [
        ("first_special", f"to {names['first_special']}"),
        ("separator", f"to {names['separator']}"),
        ("punctuation", "to . and ,"),
        None,
        ("previous", "to the previous token (i \u2192 i-1)"),
        ("next", "to the next token (i \u2192 i+1)"),
        ("self", "to the token itself"),
    ]
    figure = new_figure(15, 6.6)
    axes = figure.subplots(2, 4, sharey=True)
    for axis, panel in zip(axes.flat, panels):
        if panel is None:
            _separator_panel(axis, heads, names)
        else:
            _dots_and_mean(axis, heads[panel[0]], "#1f77b4")
            axis.set_title(panel[1], fontsize=10)
        _layer_axis(axis, num_layers)
    for axis in axes[:, 0]:
        axis.set_ylabel("average attention")
    _notes(axes.flat[-1], result)
    figure.suptitle(f"Where attention goes: {_title(result)}", fontsize=11)
    figure.tight_layout()
    return save_figure_atomic(figure, path)


READING_COLOURS = {"weights": "#1f77b4", "norms": "#d62728", "rollout": "#2ca02c"}


def readings_figure(results: list[dict], path) -> Path:
    """Surface shares per layer under each reading of attention, side by side: how much of a row goes to
    the first special token, to the separators and to punctuation (Kobayashi et al.'s comparison).

    ``results`` are surface results of one model and input under different ``--attention`` readings.
    """
    first = results[0]
    names, num_layers = first["token_names"], first["model"]["num_layers"]
    panels = [("first_special", f"to {names['first_special']}"), ("separator", f"to {names['separator']}"),
              ("punctuation", "to . and ,")]
    # a token kind no result saw (a decoder's input has no separator) gets no empty panel
    panels = [panel for panel in panels if any(r["surface"]["heads"][panel[0]] is not None for r in results)]
    figure = new_figure(max(4.2 * len(panels), 10.0), 3.8)  # wide enough for the title over two panels
    axes = np.atleast_1d(figure.subplots(1, len(panels), sharey=True))
    for axis, (statistic, title) in zip(axes, panels):
        for result in results:
            reading = result["config"].get("attention", "weights")
            values = result["surface"]["heads"][statistic]
            _dots_and_mean(axis, values, READING_COLOURS.get(reading, "#7f7f7f"), reading)
        axis.set_title(title, fontsize=10)
        _layer_axis(axis, num_layers)
    axes[0].set_ylabel("share of a row (mean over queries)")
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        axes[0].legend(handles, labels, fontsize=8, loc="upper left")
    figure.suptitle(f"Attention read as weights or otherwise: {_title(first)}", fontsize=11)
    figure.tight_layout()
    return save_figure_atomic(figure, path)


def _separator_panel(axis, heads: dict, names: dict) -> None:
    separator = names["separator"]
    _dots_and_mean(axis, heads["separator_to_separator"], "#9467bd", f"from {separator}")
    if heads["separator_to_separator"] is not None or heads["other_to_separator"] is not None:
        _dots_and_mean(axis, heads["other_to_separator"], "#7f7f7f", "from other tokens")
    axis.set_title(f"to {separator}, by query", fontsize=10)
    if axis.get_legend_handles_labels()[0]:
        axis.legend(fontsize=8, loc="upper left")


def _notes(axis, result: dict) -> None:
    source, surface = result["input"], result["surface"]
    axis.axis("off")
    lines = [
        "one dot per head; line: layer mean",
        "averaged over every real query token",
        f"{surface['queries']['real']:,} query tokens",
        f"{surface['queries']['separator']:,} separator queries",
        f"input sha256 {source['sha256'][:12]}",
    ]
    axis.text(0.02, 0.95, "\n".join(lines), va="top", fontsize=9, transform=axis.transAxes)


def entropy_figure(result: dict, path) -> Path:
    """Figure 4 of the paper: entropy of each head's attention, with uniform attention's entropy."""
    surface, names = result["surface"], result["token_names"]
    num_layers = result["model"]["num_layers"]
    figure = new_figure(11, 4.2)
    axes = figure.subplots(1, 2, sharey=True)
    panels = [("entropy", "all tokens' attention"), ("first_special_entropy", f"attention from {names['first_special']}")]
    for axis, (name, title) in zip(axes, panels):
        _dots_and_mean(axis, surface["heads"][name], "#1f77b4", "layer mean")
        uniform = surface["uniform_entropy"][name]
        if uniform is not None:
            axis.axhline(uniform, color="#d62728", linestyle="--", linewidth=1.2, label="uniform attention")
        _layer_axis(axis, num_layers, share=False)
        axis.set_title(f"Entropy of {title}", fontsize=10)
        axis.set_ylim(bottom=0)
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=8, loc="best")
    axes[0].set_ylabel("average entropy (nats)")
    figure.suptitle(_title(result), fontsize=10)
    figure.tight_layout()
    return save_figure_atomic(figure, path)


def mds_figure(result: dict, path) -> Path:
    """Section 6 of the paper: heads embedded by MDS, coloured by behaviour and by layer."""
    coords = np.asarray(result["heads"]["mds"], dtype=float)
    labels = [label for row in result["heads"]["behaviour"] for label in row]
    # heads per layer as the grids have them: one per layer for rollout, whatever the model's count
    num_layers, num_heads = result["model"]["num_layers"], len(result["heads"]["behaviour"][0])
    layers = np.repeat(np.arange(1, num_layers + 1), num_heads)
    figure = new_figure(13, 6.4)
    axes = figure.subplots(1, 2)
    shown = {"first special": result["token_names"]["first_special"], "separator": result["token_names"]["separator"]}
    for label, colour in BEHAVIOUR_COLOURS.items():
        chosen = np.array([item == label for item in labels])
        if chosen.any():
            name = f"{shown.get(label, label)} ({chosen.sum()})"
            axes[0].scatter(coords[chosen, 0], coords[chosen, 1], color=colour, s=30, label=name)
    # Below the map, so that no head is hidden behind it.
    axes[0].legend(fontsize=8, title="attends to", title_fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=4)
    axes[0].set_title("coloured by behaviour", fontsize=10)
    points = axes[1].scatter(coords[:, 0], coords[:, 1], c=layers, cmap="viridis", s=30)
    colourbar = figure.colorbar(points, ax=axes[1], ticks=range(1, num_layers + 1))
    colourbar.set_label("layer")
    axes[1].set_title("coloured by layer", fontsize=10)
    for axis in axes:
        _mark_probe_heads(axis, coords, result["heads"].get("probe_marks") or [], num_heads)
        axis.set_xticks([])
        axis.set_yticks([])
    figure.suptitle(f"Heads by Jensen-Shannon distance (MDS): {_title(result)}", fontsize=10)
    figure.tight_layout()
    return save_figure_atomic(figure, path)


def _mark_probe_heads(axis, coords: np.ndarray, marks: list[dict], num_heads: int) -> None:
    by_head: dict[int, list[str]] = {}
    for mark in marks:
        by_head.setdefault(mark["layer"] * num_heads + mark["head"], []).append(mark["relation"])
    middle = float(np.median(coords[:, 0]))
    for index, relations in by_head.items():
        x, y = coords[index]
        layer, head = divmod(index, num_heads)
        axis.scatter([x], [y], s=120, facecolors="none", edgecolors="black", linewidths=1.2)
        text = f"{', '.join(relations)} ({head_name(layer, head)})"
        # Labels point inwards, so that none is cut at the frame.
        right = x > middle
        axis.annotate(
            text, (x, y), xytext=(-7 if right else 7, 6), textcoords="offset points", fontsize=8, ha="right" if right else "left",
            bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "alpha": 0.75, "linewidth": 0},
        )


def gradient_figure(result: dict, path) -> Path:
    """Figure 3 of the paper: |dL/d attention| per layer, by the kind of key, beside the attention itself."""
    gradients, names = result["gradients"], result["token_names"]
    num_layers = result["model"]["num_layers"]
    kinds = {
        "first_special": (names["first_special"], "#1f77b4"),
        "separator": (names["separator"], "#9467bd"),
        "punctuation": (". and ,", "#2ca02c"),
        "other": ("other tokens", "#7f7f7f"),
    }
    figure = new_figure(11, 4.2)
    axes = figure.subplots(1, 2)
    x = np.arange(1, num_layers + 1)
    for kind, (label, colour) in kinds.items():
        values = gradients["layer_gradient"][kind]
        if values is not None:
            axes[0].plot(x, values, marker="o", color=colour, label=label)
        axes[1].plot(x, gradients["layer_attention"][kind], marker="o", color=colour, label=label)
    axes[0].set_title("mean |d MLM loss / d attention weight|", fontsize=10)
    axes[0].set_ylabel("per attention weight")
    axes[0].ticklabel_format(axis="y", style="sci", scilimits=(-2, 2))
    axes[1].set_title("average attention (share of each query's)", fontsize=10)
    for axis in axes:
        _layer_axis(axis, num_layers, share=False)
        axis.legend(fontsize=8)
    axes[0].set_ylim(bottom=0)
    axes[1].set_ylim(0, 1)
    kind = "masked" if gradients["loss"] == "masked_lm" else "predicted"
    figure.suptitle(f"Gradient importance, {gradients['scored_tokens']:,} {kind} tokens: {_title(result)}", fontsize=10)
    figure.tight_layout()
    return save_figure_atomic(figure, path)
