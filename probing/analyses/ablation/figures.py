"""The figure of an ``ablate --chosen`` result: the chosen set's effect against the random sets' (no torch).

One panel per metric part (rows) and chosen set REL@K (columns): the histogram of the matched random sets'
effects, the chosen set's effect as a vertical line with its 95% paired bootstrap interval shaded, and the
permutation p-value. Effects are metric(disabled) - metric(intact): percentage points for an accuracy,
nats for a loss.

>>> default_parts({"config": {"metric": "minimal-pairs"}, "metric": {"parts": ["overall", "field:syntax",
...                "phenomenon:island_effects"]}})
['overall', 'phenomenon:island_effects']
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from probing.atomic import save_figure_atomic
from probing.errors import ProbingError
from probing.naming import p_value_text
from probing.report.drawing import MARK, new_figure
from probing.results.outputs import Figures

RANDOM_COLOUR = "#9e9e9e"


def default_parts(result: dict) -> list[str]:
    """The parts drawn without ``--part``: every part, but BLiMP's fields (overall and the phenomena say it)."""
    parts = result["metric"]["parts"]
    if result["config"]["metric"] == "minimal-pairs":
        return [part for part in parts if not part.startswith("field:")]
    return list(parts)


def versus_figure(result: dict, path, parts=None, *, dpi: int = 120) -> Path:
    """Write the figure of ``parts`` (default: :func:`default_parts`) to ``path``; one panel per part and key."""
    from probing.analyses.ablation.versus import result_versus, versus_effects
    from probing.report.board import result_label

    block, effects = result_versus(result), versus_effects(result)
    parts = list(parts or default_parts(result))
    for part in parts:
        if part not in effects:
            raise ProbingError(f"the result has no part {part!r} (it has {', '.join(effects)})", source="--part")
    keys = list(effects[parts[0]])
    scale, unit = (100.0, "percentage points") if block["higher_is_better"] else (1.0, "nats")
    height = 2.5 * len(parts) + 1.2
    width = max(3.1 * len(keys) + 0.8, 6.4)  # one chosen set (a make.sh piece) still has room for title and legend
    note = textwrap.wrap(NOTE, int(width * 17))  # about 17 characters an inch at 7.5 points (18 ran over the edge)
    note_room = 0.3 + 0.12 * (len(note) - 1)
    figure = new_figure(width, height)
    axes = np.atleast_2d(figure.subplots(len(parts), len(keys), squeeze=False))
    for row, part in enumerate(parts):
        for column, key in enumerate(keys):
            _panel(axes[row, column], effects[part][key], block["parts"][part][key], scale)
            if row == 0:
                axes[row, column].set_title(key, fontsize=10)
            if column == 0:
                axes[row, column].set_ylabel(f"{_part_label(part)}\n(random sets)", fontsize=9)
            if row == len(parts) - 1:
                axes[row, column].set_xlabel(f"effect ({unit})", fontsize=9)
    # laid out first, then the title, legend and note placed in inches from the edges (tight_layout would
    # move the panels for a suptitle by a share of the height, far too much for a figure of one row)
    figure.tight_layout(rect=(0, note_room / height, 1, 1 - 0.85 / height))
    draws = max(len(effects[parts[0]][key]["random"]) for key in keys)
    figure.text(0.5, 1 - 0.08 / height, f"{result_label(result)}: chosen heads against {draws} "
                f"{block.get('match', 'layer')}-matched random sets\n"
                f"{result['metric']['description']}", fontsize=11, ha="center", va="top")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    if handles:  # just above the panels' titles, where every column can see it
        figure.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, axes[0, 0].get_position().y1 + 0.25 / height),
                      fontsize=8, frameon=False, ncol=len(handles))
    figure.text(0.01, 0.05 / height, "\n".join(note), fontsize=7.5, color="#444444", va="bottom")
    return save_figure_atomic(figure, path, dpi=dpi)


NOTE = ("effect = metric(heads disabled) - metric(intact), same units. Line: the chosen set, its 95% paired bootstrap "
        "interval shaded; bars: the matched random sets' effects (layer-matched: as many heads in each layer; "
        "band-matched: from layers L-1 to L+1 of the chosen heads); p = (1 + count) / (1 + draws), count the random "
        "sets at least as harmful (raw: the board adjusts it).")
"""The figure's footnote: how to read every panel."""


def _part_label(part: str) -> str:
    """A part's name as a row label: BLiMP's phenomenon or field without its prefix, wrapped at word breaks."""
    return textwrap.fill(part.split(":", 1)[-1].replace("_", " "), 20)


def _panel(axis, effects: dict, entry: dict, scale: float) -> None:
    """One histogram of random effects with the chosen effect's line, its interval and p."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    randoms = scale * np.asarray(effects["random"], dtype=float)
    chosen = effects["chosen"]
    if chosen is None or not np.isfinite(chosen):
        axis.text(0.5, 0.5, "no units", ha="center", va="center", transform=axis.transAxes)
        return
    chosen *= scale
    interval = entry["chosen"]["interval"]
    span = [*randoms, chosen] + ([scale * interval[0], scale * interval[1]] if interval else [])
    low, high = min(span), max(span)
    # no spread at all (every set changed nothing): a window of one point (or 0.01 nats) around the values
    pad = (high - low) * 0.08 or (0.5 if scale == 100.0 else 0.005)
    if randoms.size:  # 20 bins whose centres run from the lowest to the highest value: 0 is drawn at 0
        width = (high - low) / 19 or pad / 4
        axis.hist(randoms, bins=low - width / 2 + width * np.arange(21), color=RANDOM_COLOUR, edgecolor="white",
                  label="matched random sets")
    if interval:
        axis.axvspan(scale * interval[0], scale * interval[1], color=MARK, alpha=0.15, linewidth=0,
                     label="its 95% interval")
    axis.axvline(chosen, color=MARK, linewidth=2, label="chosen set")
    axis.axvline(0.0, color="black", linewidth=0.6, alpha=0.5)
    axis.set_xlim(low - pad, high + pad)
    axis.set_ylim(0, max(1, axis.get_ylim()[1]) * 1.25)  # headroom for the p-value
    p = entry["p_value"]
    right_half = chosen > (low + high) / 2  # the p-value goes on the side away from the chosen line
    label = "" if p is None else f"p = {p_value_text(p)}{' (exact)' if entry.get('exact') else ''}"
    axis.text(0.03 if right_half else 0.97, 0.95, label, ha="left" if right_half else "right",
              va="top", transform=axis.transAxes, fontsize=9, color=MARK,
              bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.5})
    axis.xaxis.set_major_locator(MaxNLocator(4))  # few ticks: a loss's effects can be 1e-5 wide
    axis.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:+.2g}" if x else "0"))
    axis.tick_params(labelsize=8)
    axis.yaxis.get_major_locator().set_params(integer=True)


def figures(options) -> Figures:
    """What an ablation result has beside it: with ``--chosen``, A-versus (the figure ``probing plot`` draws of it);
    nothing otherwise."""
    if not options.chosen:
        return Figures()
    return Figures(("versus",), lambda result, path_of: [versus_figure(result, path_of("versus"))])
