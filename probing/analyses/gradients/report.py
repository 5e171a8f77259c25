"""The gradients' layer table, for the terminal and the report's summary (torch-free)."""

from __future__ import annotations

from probing.analyses.gradients.payload import KEY_KINDS
from probing.results.outputs import Figures


def gradient_table(result: dict, tablefmt: str = "simple") -> str:
    """One row per layer (from 1): mean |dL/dA| by kind of key, and the attention share to separators, or
    to the first token where the input has no separator (a decoder's sink: the paper's question asked of it).

    >>> result = {"token_names": {"first_special": "[CLS]", "separator": "[SEP]"}, "model": {"num_layers": 1},
    ...           "gradients": {"layer_gradient": {"first_special": [1e-5], "separator": [2e-5], "punctuation": None,
    ...                         "other": [3e-5]}, "layer_attention": {"separator": [0.25], "first_special": [0.5]}}}
    >>> gradient_table(result).split()[-5:]
    ['1.000e-05', '2.000e-05', '-', '3.000e-05', '25.0']
    >>> result["gradients"]["layer_gradient"]["separator"] = None   # a decoder: no separator
    >>> gradient_table(result).split()[-5:]
    ['1.000e-05', '-', '-', '3.000e-05', '50.0']
    """
    from tabulate import tabulate

    from probing.report.escaping import tabulate_cells

    gradients, names = result["gradients"], result["token_names"]
    headers = {"first_special": names["first_special"], "separator": names["separator"], "punctuation": ". ,", "other": "other"}
    shown = "separator" if gradients["layer_gradient"]["separator"] is not None else "first_special"
    rows = []
    for layer in range(result["model"]["num_layers"]):
        row = [layer + 1]
        for kind in KEY_KINDS:
            values = gradients["layer_gradient"][kind]
            row.append("-" if values is None else f"{values[layer]:.3e}")
        row.append(f"{100 * gradients['layer_attention'][shown][layer]:.1f}")
        rows.append(row)
    # No "|" in headers: the table is also written as Markdown.
    columns = ["layer"] + [f"grad to {headers[kind]}" for kind in KEY_KINDS] + [f"attn to {names[shown]} %"]
    rows, columns = tabulate_cells(rows, columns, tablefmt)
    return tabulate(rows, headers=columns, tablefmt=tablefmt, disable_numparse=True, stralign="right")


def figures(options) -> Figures:
    """What a gradients result has beside it: G-gradients, mean |dL/dA| per layer for attention to each kind of
    token, beside the attention itself (the paper's Figure 3)."""

    def draw(result: dict, path_of) -> list:
        from probing.report.figures import gradient_figure

        return [gradient_figure(result, path_of("gradients"))]

    return Figures(("gradients",), draw)
