"""The surface statistics' layer table, for the terminal and for the explore page (torch-free).

>>> result = {"surface": {"layer_means": {name: [0.5] for name in COLUMNS}, "uniform_entropy": {"entropy": 1.0}},
...           "token_names": {"first_special": "[CLS]", "separator": "[SEP]"}, "model": {"num_layers": 1}}
>>> print(layer_table(result).splitlines()[0].split()[:3])
['layer', '[CLS]', '%']
"""

from __future__ import annotations

from probing.report.escaping import html_text
from probing.results.outputs import Figures

COLUMNS = ("first_special", "separator", "punctuation", "previous", "next", "self", "separator_to_separator",
           "other_to_separator", "entropy")
"""The statistics the table shows, in its column order (entropies in nats, the others as shares)."""


def _titles(names: dict) -> list[str]:
    first, separator = names["first_special"], names["separator"]
    return [f"{first} %", f"{separator} %", ". , %", "prev %", "next %", "self %", f"{separator}->{separator} %",
            f"other->{separator} %", "entropy"]


def layer_table(result: dict, tablefmt: str = "simple") -> str:
    """One row per layer (from 1): mean over heads of each statistic, in percent; entropies in nats."""
    from tabulate import tabulate

    from probing.report.escaping import tabulate_cells

    surface = result["surface"]
    means = surface["layer_means"]
    rows = []
    for layer in range(result["model"]["num_layers"]):
        row = [layer + 1]
        for name in COLUMNS:
            value = None if means[name] is None else means[name][layer]
            row.append("-" if value is None else (f"{value:.2f}" if name == "entropy" else f"{100 * value:.1f}"))
        rows.append(row)
    rows, headers = tabulate_cells(rows, ["layer", *_titles(result["token_names"])], tablefmt)
    table = tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True, stralign="right")
    uniform = surface["uniform_entropy"]["entropy"]
    return f"{table}\n\nMeans over heads; entropies in nats (uniform attention: {uniform:.2f})."


def page_section(result: dict) -> str:
    """The explore page's section of a surface result: the layer table (HTML; tabulate escapes its cells)."""
    table = layer_table(result, tablefmt="html").split("\n\n")
    return ('<section id="surface" aria-labelledby="surface-title"><h2 id="surface-title">Where attention goes '
            '(surface statistics)</h2><div class="scroll plain">' + table[0] + "</div><p>"
            + html_text(table[1] if len(table) > 1 else "") + "</p></section>")


def figures(options) -> Figures:
    """What a surface result has beside it: S-surface (the paper's Figure 2: attention to the first special token,
    separators, . and ,, the previous and next token and itself) and S-entropy (Figure 4)."""

    def draw(result: dict, path_of) -> list:
        from probing.report.figures import entropy_figure, surface_figure

        return [surface_figure(result, path_of("surface")), entropy_figure(result, path_of("entropy"))]

    return Figures(("surface", "entropy"), draw)
