"""A leaderboard as JSON: the first table's fields at the top level (as one-table boards have always been
read), and every table under ``tables``.

>>> from probing.report.board import Cell, Leaderboard, Row, Table
>>> table = Table(["det"], [Row("a", "model", "held-out", "t", {"det": Cell(0.5)}, rank="1")], [])
>>> data = json.loads(render_json(Leaderboard([table])))
>>> data["rows"][0]["cells"]["det"]["accuracy"], len(data["tables"])
(0.5, 1)
"""

from __future__ import annotations

import json
from dataclasses import asdict

from probing.report.board import COUNTING, Leaderboard, Table


def _json_table(table: Table) -> dict:
    return {
        "key": table.key,
        "title": table.title,
        "counting": COUNTING,
        "level": table.level,
        "relations": table.relations,
        "notes": table.notes,
        "rows": [
            {
                **{key: value for key, value in asdict(row).items() if key != "cells"},
                "cells": {name: (_cell(row.cells[name]) if name in row.cells and row.cells[name] else None)
                          for name in table.relations},
            }
            for row in table.rows
        ],
    }


def _cell(cell) -> dict:
    """A cell's fields; ``scale`` only where it is not the default percent, ``p_adjusted``, ``exact``, ``spread``,
    ``text`` and ``se`` only on a board of effects that has them (the tables before them read the same)."""
    fields = asdict(cell)
    if fields["scale"] == "percent":
        del fields["scale"]
    for name, default in (("p_adjusted", None), ("exact", False), ("spread", False), ("text", ""), ("se", None)):
        if fields[name] == default:
            del fields[name]
    return fields


def render_json(board: Leaderboard) -> str:
    tables = [_json_table(table) for table in board.tables]
    data = {**tables[0], "tables": tables} if tables else {"tables": []}
    return json.dumps(data, indent=1) + "\n"
