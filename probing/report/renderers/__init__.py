"""A leaderboard in five formats, one module each, all in one registry (:data:`FORMATS`, ``--format``).

Each renderer takes a :class:`probing.report.board.Leaderboard` and returns the whole file as text; every
piece of text from a result file goes through its format's escaping function (:mod:`probing.report.escaping`).

>>> FORMATS.names()
['md', 'csv', 'json', 'latex', 'html']
"""

from __future__ import annotations

from collections.abc import Callable

from probing.registry import Registry
from probing.report.board import Leaderboard
from probing.report.renderers.csv_table import render_csv
from probing.report.renderers.html_page import render_html
from probing.report.renderers.json_table import render_json
from probing.report.renderers.latex_table import render_latex
from probing.report.renderers.markdown_table import render_markdown

FORMATS: Registry[Callable[[Leaderboard], str]] = Registry("format", option="--format")
FORMATS.register("md", render_markdown)
FORMATS.register("csv", render_csv)
FORMATS.register("json", render_json)
FORMATS.register("latex", render_latex)
FORMATS.register("html", render_html)


__all__ = ["FORMATS", "render", "render_html"]


def render(board: Leaderboard, fmt: str) -> str:
    """The leaderboard as the text of one file in format ``fmt`` (a name in :data:`FORMATS`)."""
    return FORMATS[fmt](board)
