"""A leaderboard as one self-contained HTML page: every table sortable by any column (click, or Enter on a
header), rows grouped by treebank under a header naming it once, the best cell of each column marked.

The style sheet and the sorting script are files beside the code (``probing/report/assets/``), read with
:func:`asset` and written into the page, so that it asks for nothing outside itself; the explore page
(:mod:`probing.report.page`) reuses both.

>>> from probing.report.board import Cell, Leaderboard, Row, Table
>>> table = Table(["det"], [Row("<i>x</i>", "model", "held-out", "t", {"det": Cell(0.5)}, rank="1")], [])
>>> page = render_html(Leaderboard([table]))
>>> "&lt;i&gt;x&lt;/i&gt;" in page and "<i>" not in page
True
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources import files

from probing.naming import scaled
from probing.report.board import (
    Cell,
    Leaderboard,
    Row,
    Table,
    board_title,
    cell_suffix,
    cell_text,
    mean_text,
    range_text,
)
from probing.report.escaping import html_text


def asset(name: str) -> str:
    """The text of ``probing/report/assets/NAME`` (a style sheet or a script), starting on a line of its own
    inside the element it is written into."""
    return "\n" + files("probing.report").joinpath("assets", name).read_text(encoding="utf-8")


BEST_MARK = '<span class="sr"> (best in this group)</span>'
"""Said to screen readers after a best cell (sighted readers see it highlighted)."""

SELECTION_WORDS = {"held-out": "held-out: chosen on dev, reported on test", "in-sample": "in-sample: chosen and "
                   "reported on the same sentences"}


def _html_cell(cell: Cell | None, best: bool) -> str:
    """A ``<td>``: accuracy on one line; interval, head and markers smaller below; ``data-sort`` for sorting."""
    if cell is None or cell.accuracy is None:
        return f'<td data-sort="">{html_text(cell_text(cell))}</td>'
    sub = []
    if cell.interval:
        sub.append(html_text(range_text(cell)))
    suffix = cell_suffix(cell)
    if suffix:
        sub.append(f'<span class="head">{html_text(suffix)}</span>')
    mark, marked = (BEST_MARK, ' class="best"') if best else ("", "")
    below = f'<span class="sub">{" ".join(sub)}</span>' if sub else ""
    return f'<td data-sort="{cell.accuracy:.6f}"{marked}><span class="acc">{scaled(cell.accuracy, cell.scale)}{mark}</span>{below}</td>'


def _groups(table: Table) -> list[tuple[str, str, list[Row]]]:
    """Rows grouped by treebank and selection, in table order: (treebank, selection, rows)."""
    groups: dict[tuple[str, str, bool], list[Row]] = {}
    for row in table.rows:
        groups.setdefault((row.treebank, row.selection, row.kind == "reference"), []).append(row)
    return [(treebank, selection, rows) for (treebank, selection, _), rows in groups.items()]


def _best(rows: list[Row], relations: list[str]) -> dict[str, float | None]:
    """The best accuracy of each column (and the mean) among a group's rows."""
    best: dict[str, float | None] = {}
    for name in relations:
        values = [row.cells[name].accuracy for row in rows if row.cells.get(name) and row.cells[name].accuracy is not None]
        best[name] = max(values) if values else None
    means = [row.mean for row in rows if row.mean is not None]
    best["(mean)"] = max(means) if means else None
    return best


def _model_cell(row: Row, links: dict | None) -> str:
    found = (links or {}).get((row.model, row.treebank)) or []
    extra = ""
    if found:
        extra = '<span class="links">' + " · ".join(
            f'<a href="{html_text(href)}">{html_text(text)}</a>' for text, href in found) + "</span>"
    return f'<td class="l model" data-sort="{html_text(row.model)}">{html_text(row.model)}{extra}</td>'


def _row(row: Row, table: Table, best: dict, links: dict | None) -> str:
    rank_key = row.rank.lstrip("=") if row.rank.lstrip("=").isdigit() else ""
    cells = f'<td class="l" data-sort="{rank_key}">{html_text(row.rank)}</td>' + _model_cell(row, links)
    for name in table.relations:
        cell = row.cells.get(name)
        is_best = bool(cell and cell.accuracy is not None and cell.accuracy == best.get(name)
                       and row.kind != "reference")
        cells += _html_cell(cell, is_best)
    if table.mean:
        is_best = row.mean is not None and row.mean == best.get("(mean)") and row.kind != "reference"
        mark, marked = (BEST_MARK, ' class="best"') if is_best else ("", "")
        key = "" if row.mean is None else f"{row.mean:.6f}"
        cells += f'<td data-sort="{key}"{marked}><span class="acc">{html_text(mean_text(row))}{mark}</span></td>'
    return f'<tr class="{html_text(row.kind)}">{cells}</tr>'


def html_table(table: Table, heading: str, links: dict | None = None) -> str:
    """One sortable table: a group of rows per treebank (and selection) under a header row naming it once,
    the best cell of each column within a group marked, each model linked to its files when given."""
    columns = ["rank", "model", *table.relations] + (["mean"] if table.mean else [])
    text_columns = ("rank", "model")  # sorted ascending on the first click; numbers descending (best first)
    head_cells = "".join(
        f'<th scope="col" class="{"l" if title in text_columns else "n"}" aria-sort="none"'
        + (' data-first="ascending"' if title in text_columns else "")
        + f'><button type="button">{html_text(title)}</button></th>'
        for title in columns)
    bodies = []
    for treebank, selection, rows in _groups(table):
        reference = rows[0].kind == "reference"
        how = "quoted from the paper, in-sample" if reference else SELECTION_WORDS.get(selection, selection)
        label = f"{'Reference: ' if reference else ''}{treebank.replace(' -> ', ' → ')}"
        lines = [f'<tr class="group-head"><th colspan="{len(columns)}" scope="rowgroup">{html_text(label)} '
                 f'<span class="how">· {html_text(how)}</span></th></tr>']
        best = _best([row for row in rows if row.kind != "reference"] or rows, table.relations) if table.marks_best \
            else {}
        lines += [_row(row, table, best, links) for row in rows]
        bodies.append('<tbody class="group">\n' + "\n".join(lines) + "\n</tbody>")
    notes = "".join(f"<li>{html_text(note)}</li>" for note in table.notes)
    return (f"<{heading}>{html_text(table.title)}</{heading}>\n"
            f'<div class="scroll"><table class="board">\n<thead><tr>{head_cells}</tr></thead>\n'
            + "\n".join(bodies) + f'\n</table></div>\n<ul class="notes">{notes}</ul>\n')


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "", css: str = "plain") -> str:
    """A plain (unsorted) HTML table of text cells, in a scrolling box.

    >>> plain_table(["a"], [["<1>"]])
    '<div class="scroll"><table class="plain"><thead><tr><th
    scope="col">a</th></tr></thead><tbody><tr><td>&lt;1&gt;</td></tr></tbody></table></div>'
    """
    head = "".join(f'<th scope="col">{html_text(title)}</th>' for title in headers)
    body = "".join("<tr>" + "".join(f"<td>{html_text(value)}</td>" for value in row) + "</tr>" for row in rows)
    caption = f"<caption>{html_text(caption)}</caption>" if caption else ""
    return (f'<div class="scroll"><table class="{css}">{caption}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def render_html(board: Leaderboard, links: dict | None = None) -> str:
    """One page of every table. ``links``: (model, treebank label) -> [(text, href)], e.g. its plots."""
    title = html_text(board_title(board))
    single = len(board.tables) == 1
    sections = "".join(html_table(table, "h1" if single else "h2", links) for table in board.tables)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{title}</title>\n<style>{asset('board.css')}</style>\n</head>\n<body>\n"
        + ("" if single else f"<h1>{title}</h1>\n") + sections
        + f"<script>{asset('board.js')}</script>\n</body>\n</html>\n"
    )
