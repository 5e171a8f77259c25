"""A leaderboard as Markdown: a GitHub table per analysis table, its notes as a list below it.

>>> from probing.report.board import Cell, Leaderboard, Row, Table
>>> table = Table(["det"], [Row("a|b", "model", "held-out", "t", {"det": Cell(0.5)}, rank="1")], ["a note"])
>>> print(render_markdown(Leaderboard([table])).splitlines()[4])
| 1      | a\\|b    | held-out    | t          | 50.0  | -      |
"""

from __future__ import annotations

from probing.report.board import Leaderboard, board_title, text_header, text_rows
from probing.report.escaping import markdown_cell, markdown_text


def render_markdown(board: Leaderboard) -> str:
    from tabulate import tabulate

    blocks = []
    for table in board.tables:
        rows = [[markdown_cell(value) for value in row] for row in text_rows(table)]
        text = tabulate(rows, headers=[markdown_cell(title) for title in text_header(table)], tablefmt="github",
                        disable_numparse=True)
        notes = "\n".join(f"- {markdown_text(note)}" for note in table.notes)
        heading = "#" if len(board.tables) == 1 else "##"
        blocks.append(f"{heading} {markdown_text(table.title)}\n\n{text}\n\n{notes}\n")
    if len(board.tables) == 1:
        return blocks[0]
    return f"# {markdown_text(board_title(board))}\n\n" + "\n".join(blocks)
