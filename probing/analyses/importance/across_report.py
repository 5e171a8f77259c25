"""The tables and the figure of importance maps compared across pair sets (probing.analyses.importance.across).

Markdown: the matrix of rho (p, Holm-adjusted p) between every two sets, the mean rho across and within languages,
and the heads most harmful in more than one set; the figure: the matrix as a heatmap beside a layer x head map of
how many sets count each head among their most harmful. Layers and heads count from 1 here, from 0 in the JSON.

>>> cell_text({"rho": 0.4123, "p_value": 0.0004, "p_adjusted": 0.012})
'+0.41 (p=0.0004, Holm 0.012)'
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from probing.report.escaping import markdown_row, markdown_text

MARKDOWN_START = "Harm across pair sets"
"""The line after a page's title, by which an earlier page is known (probing.atomic.text_matching)."""


def cell_text(cell: dict | None) -> str:
    """One cell of the matrix: rho with its p and Holm's adjustment; ``-`` on the diagonal, ``none`` where rho is
    undefined (a map whose harms are all equal)."""
    from probing.naming import p_value_text, scaled

    if cell is None:
        return "-"
    if cell["rho"] is None:
        return "none"
    return (f"{scaled(cell['rho'], 'coefficient')} (p={p_value_text(cell['p_value'])}, "
            f"Holm {p_value_text(cell['p_adjusted'])})")


def default_title(compared: dict) -> str:
    """``gemma-3-270m: which heads matter for minimal-pairs (overall), across pair sets``."""
    model = compared["model"]
    name = model.get("name") or model.get("name_or_path")
    return (f"{name}{' (random init)' if model.get('random_init') else ''}: which heads matter for "
            f"{compared['metric']} ({compared['part']}), across pair sets")


def across_markdown(compared: dict, title: str | None = None) -> str:
    """The whole page: the matrix, the means, the shared heads and what each number is."""
    from probing.naming import head_name, scaled

    labels = [entry["label"] for entry in compared["sets"]]
    named = [f"{entry['label']} ({entry['language']})" for entry in compared["sets"]]
    lines = [f"# {markdown_text(title or default_title(compared))}", "",
             f"{MARKDOWN_START}: Spearman's rho between every two maps' per-head harm on {compared['part']}, over all "
             f"{compared['heads']} heads; p from {compared['permutations']['count']:,} permutations of the harms "
             "within each layer (one-sided: the same heads matter in both), Holm-adjusted over every pair.", "",
             markdown_row(["set (language)", *labels]), "|---" * (len(labels) + 1) + "|"]
    for label, row_name in zip(labels, named):
        lines.append(markdown_row([row_name, *(cell_text(compared["matrix"][label][other]) for other in labels)]))
    means = compared["mean_rho"]
    lines += ["", markdown_row(["mean rho", "pairs of maps", "rho"]), "|---|---|---|"]
    for key, pairs, words in (("across_languages", "pairs_across", "two languages"),
                              ("within_language", "pairs_within", "one language (two sets of it)")):
        value = means[key]
        lines.append(markdown_row([words, means[pairs], "none" if value is None else scaled(value, "coefficient")]))
    shared = [row for row in compared["shared"] if len(row["sets"]) > 1]
    chance = compared["most_harmful"] / compared["heads"]
    lines += ["", f"## Heads among the {compared['most_harmful']} most harmful of more than one set", ""]
    if shared:
        lines += [markdown_row(["head", "sets", "languages", "which"]), "|---|---|---|---|"]
        lines += [markdown_row([head_name(row["layer"], row["head"]), f"{len(row['sets'])} of {len(labels)}",
                             f"{len(row['languages'])}: {', '.join(row['languages'])}", ", ".join(row["sets"])])
                  for row in shared]
    else:
        lines.append("No head is among the most harmful of two sets.")
    lines += ["", f"A head lands among a map's {compared['most_harmful']} most harmful by chance with probability "
              f"about {compared['most_harmful']} / {compared['heads']} = {chance:.3f} (ties at the last place "
              "included; a head whose harm is not above 0 never does). Layer-head from 1. The numbers, with every "
              "set's most harmful heads and their harms: the JSON beside this file.", ""]
    return "\n".join(lines)


def across_figure(compared: dict, path, title: str | None = None) -> Path:
    """The rho matrix (left; red: the same heads matter, blue: opposite ones; a dot where Holm's p <= 0.05) beside
    a layer x head map of how many sets count each head among their most harmful (right)."""
    import textwrap

    from probing.atomic import save_figure_atomic
    from probing.report.drawing import layer_head_heatmap, new_figure
    from probing.stats.multiplicity import significant

    labels = [entry["label"] for entry in compared["sets"]]
    size = len(labels)
    rho = np.array([[1.0 if a == b else _or_nan(compared["matrix"][a][b], "rho") for b in labels] for a in labels])
    layers = compared["model"]["num_layers"]
    heads = compared["model"]["num_heads"]
    counts = np.zeros((layers, heads))
    for row in compared["shared"]:
        counts[row["layer"], row["head"]] = len(row["sets"])
    side = 0.55 * size + 2.0
    figure = new_figure(side + 0.35 * heads + 2.6, max(side, 0.22 * layers + 1.6) + 0.8, layout="constrained")
    matrix_axes, heads_axes = figure.subplots(1, 2, gridspec_kw={"width_ratios": [side, 0.35 * heads + 1.2]})
    image = matrix_axes.imshow(rho, cmap="RdBu_r", vmin=-1, vmax=1)
    for a, first in enumerate(labels):
        for b, second in enumerate(labels):
            cell = compared["matrix"][first][second]
            text = "" if cell is None else "none" if cell["rho"] is None else f"{cell['rho']:+.2f}"
            if cell is not None and significant(cell["p_adjusted"]):
                text += "\n•"
            matrix_axes.text(b, a, text, ha="center", va="center", fontsize=7,
                             color="white" if np.isfinite(rho[a, b]) and abs(rho[a, b]) > 0.6 else "black")
    matrix_axes.set_xticks(range(size), labels, rotation=60, ha="right", fontsize=7)
    matrix_axes.set_yticks(range(size), labels, fontsize=7)
    matrix_axes.set_title(f"rho of per-head harm on {compared['part']} ({compared['heads']} heads); "
                          "•: Holm p <= 0.05", fontsize=8)
    figure.colorbar(image, ax=matrix_axes, fraction=0.04).set_label("Spearman's rho", fontsize=7)
    drawn = layer_head_heatmap(heads_axes, counts, vmin=0, vmax=max(size, 1), cmap="Reds")
    figure.colorbar(drawn, ax=heads_axes, fraction=0.05).set_label("sets", fontsize=7)
    heads_axes.set_title(textwrap.fill(f"in how many of {size} sets a head is among the {compared['most_harmful']} "
                                       "most harmful", 28), fontsize=8)
    figure.suptitle(textwrap.fill(title or default_title(compared), 110), fontsize=9)
    return save_figure_atomic(figure, path)


def _or_nan(cell: dict | None, key: str) -> float:
    return np.nan if cell is None or cell[key] is None else cell[key]
