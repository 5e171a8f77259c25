r"""A leaderboard as LaTeX: a booktabs ``table`` per analysis table, ranked rows above the quoted ones, the
notes as its caption; arrows typeset as arrows.

>>> from probing.report.board import Cell, Leaderboard, Row, Table
>>> table = Table(["det"], [Row("a_b", "model", "held-out", "t", {"det": Cell(0.5)}, rank="1")], [])
>>> [line for line in render_latex(Leaderboard([table])).splitlines() if line.startswith("1 &")]
['1 & a\\_b & held-out & t & 50.0 & - \\\\']
"""

from __future__ import annotations

from probing.report.board import COUNTING, Leaderboard, Table, text_header, text_rows
from probing.report.escaping import latex_text


def _latex_cell(text: str) -> str:
    """Escaped, with the arrows of treebank labels and directions typeset as arrows."""
    return latex_text(text).replace(" -\\textgreater{} ", " $\\to$ ").replace("h\\textgreater{}d", "h$\\to$d")


def render_latex(board: Leaderboard) -> str:
    return "\n".join(_latex_table(table) for table in board.tables)


def _latex_table(table: Table) -> str:
    lines = [
        "% Requires \\usepackage{booktabs}. " + latex_text(COUNTING),
        "\\begin{table}[t]",
        "\\centering",
        "\\small",
        f"\\begin{{tabular}}{{llll{'r' * (len(table.relations) + table.mean)}}}",
        "\\toprule",
        " & ".join(latex_text(title) for title in text_header(table)) + " \\\\",
        "\\midrule",
    ]
    previous_kind = None
    for row in text_rows(table):
        kind = "reference" if row[0] == "ref" else "ranked"
        if previous_kind is not None and kind != previous_kind:
            lines.append("\\midrule")
        previous_kind = kind
        lines.append(" & ".join(_latex_cell(value) for value in row) + " \\\\")
    lines += [
        "\\bottomrule",
        "\\end{tabular}",
        f"\\caption{{{latex_text(table.title + '. ' + ' '.join(table.notes))}}}",
        "\\end{table}",
    ]
    return "\n".join(lines) + "\n"
