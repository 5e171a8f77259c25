"""The heads of each behaviour as a table, for the terminal and the report's summary (torch-free).

>>> result = {"heads": {"behaviour": [["previous", "broad"]]},
...           "token_names": {"first_special": "[CLS]", "separator": "[SEP]"}}
>>> behaviour_table(result).splitlines()[2].split()
['previous', '1', '1-1']
"""

from __future__ import annotations

from probing.analyses.heads.behaviour import LABELS
from probing.naming import head_name
from probing.results.outputs import Figures


def behaviour_table(result: dict, tablefmt: str = "simple") -> str:
    """Heads of each behaviour, as layer-head counted from 1."""
    from tabulate import tabulate

    from probing.report.escaping import tabulate_cells

    found: dict[str, list[str]] = {label: [] for label in LABELS}
    for layer, row in enumerate(result["heads"]["behaviour"]):
        for head, label in enumerate(row):
            found[label].append(head_name(layer, head))
    names = {"first special": result["token_names"]["first_special"], "separator": result["token_names"]["separator"]}
    rows = [
        [names.get(label, label), len(heads), " ".join(heads) if len(heads) <= 12 else " ".join(heads[:12]) + " ..."]
        for label, heads in found.items()
    ]
    rows, headers = tabulate_cells(rows, ["attends to", "heads", "layer-head (from 1)"], tablefmt)
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True)


def figures(options) -> Figures:
    """What a heads result has beside it: H-heads, the MDS map coloured by behaviour and by layer; drawn before the
    result is written, so that a failure to draw it leaves no result behind."""

    def draw(result: dict, path_of) -> list:
        from probing.report.figures import mds_figure

        return [mds_figure(result, path_of("heads"))]

    return Figures(("heads",), draw, first=True)
