"""A leaderboard as CSV: one row per table row, seven columns per relation (accuracy, interval, head,
direction, pairs, p), numbers in percent with two decimals (a cell on the nats scale, a loss difference, in
nats with four; a coefficient, a rank correlation, as itself with four); tables separated by an empty row and
named in a ``table`` column when there are several. A cell that would start a spreadsheet formula starts with ``'``.
A table of effects (chosen against random heads) has six columns per part instead: effect, low, high,
note, p and p adjusted for the board's many rows (Holm), p-values as plain numbers (never rounded to 0); low and
high are a bootstrap interval's ends in a chosen column, the random draws' 2.5th and 97.5th percentiles in a
random one.

>>> from probing.report.board import Cell, Leaderboard, Row, Table
>>> table = Table(["det"], [Row("=cmd()", "model", "held-out", "t", {"det": Cell(0.5, head="+1")}, rank="1")], [])
>>> print(render_csv(Leaderboard([table])).splitlines()[1])
1,'=cmd(),model,held-out,t,50.00,,,+1,,,,
"""

from __future__ import annotations

from probing.report.board import Leaderboard, Table
from probing.report.escaping import csv_text


def render_csv(board: Leaderboard) -> str:
    rows = []
    for number, table in enumerate(board.tables):
        rows += ([[]] if number else []) + _csv_rows(table, with_table_column=len(board.tables) > 1)
    return csv_text(rows)


def _csv_rows(table: Table, *, with_table_column: bool) -> list[list]:
    columns = (["table"] if with_table_column else []) + ["rank", "model", "kind", "selection", "treebank"]
    if table.effects:
        return _effect_rows(table, columns, with_table_column)
    for name in table.relations:
        columns += [f"{name}_acc_pct", f"{name}_low_pct", f"{name}_high_pct", f"{name}_head_from_1", f"{name}_direction",
                    f"{name}_pairs", f"{name}_p_not_better"]
    rows = [columns + (["mean_acc_pct"] if table.mean else [])]
    for row in table.rows:
        values = ([table.key] if with_table_column else []) + [row.rank, row.model, row.kind, row.selection,
                                                                row.treebank]
        for name in table.relations:
            cell = row.cells.get(name)
            if cell is None or cell.accuracy is None:
                values += ["", "", "", "", "", "" if cell is None else cell.pairs, ""]
                continue
            low, high = cell.interval or ("", "")
            number = _number(cell.scale)
            values += [number(cell.accuracy), number(low), number(high), cell.head, cell.direction or "", _blank(cell.pairs),
                       _blank(cell.p_not_better)]
        rows.append(values + ([_pct(row.mean)] if table.mean else []))
    return rows


def _effect_rows(table: Table, columns: list[str], with_table_column: bool) -> list[list]:
    """Six columns per part: the effect and its interval (percentage points, or nats for a loss), the cell's
    note (its draws, or p as text), the p-value and its Holm adjustment."""
    for name in table.relations:
        columns += [f"{name}_effect", f"{name}_low", f"{name}_high", f"{name}_note", f"{name}_p", f"{name}_p_holm"]
    rows = [columns]
    for row in table.rows:
        values = ([table.key] if with_table_column else []) + [row.rank, row.model, row.kind, row.selection,
                                                                row.treebank]
        for name in table.relations:
            cell = row.cells.get(name)
            if cell is None or cell.accuracy is None:  # what a cell without a number says, in its note column
                values += ["", "", "", "" if cell is None else cell.text, "", ""]
                continue
            low, high = cell.interval or ("", "")
            number = _number(cell.scale)
            values += [number(cell.accuracy), number(low), number(high), cell.head, _blank(cell.p_not_better),
                       _blank(cell.p_adjusted)]
        rows.append(values)
    return rows


def _number(scale: str):
    """How a cell's numbers are written on its scale: percent with two decimals for a share or a difference of
    shares (points), the number itself with four for a loss in nats or a coefficient."""
    return _pct if scale in ("percent", "points") else _nats


def _pct(value) -> str:
    return "" if value is None or value == "" else f"{100 * value:.2f}"


def _nats(value) -> str:
    return "" if value is None or value == "" else f"{value:.4f}"


def _blank(value) -> str:
    return "" if value is None else str(value)
