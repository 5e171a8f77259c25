"""Result files as objects for a notebook: the JSON kept as the data, with per-head arrays and tables.

A result object holds the validated JSON of a result file (``result.data``,
exactly what ``probing.results.io`` writes) and adds what is awkward to dig
out of it: per-head accuracy as a numpy array in the axis order ``[layer,
head, direction]`` (layers and heads from 0, as the JSON and numpy index;
directions as :data:`probing.naming.DIRECTIONS`), the chosen heads with
their intervals, and ``to_frame()``, a pandas DataFrame with layers and
heads counted from 1 as in every table (pandas is the optional extra
``frames``: ``pip install -e '.[frames]'`` from a clone, or ``pip install pandas``).

Each analysis names its own class in its registry record (``extra={"result":
...}``, probing.plugins); :func:`result_object` picks it, and a generic
:class:`Result` serves an analysis that has none. Nothing here imports torch.

>>> from probing.naming import DIRECTIONS
>>> per_head({"dep_to_head": [[1, 2]], "head_to_dep": [[3, 4]]}, total=4).shape   # [layer, head, direction]
(1, 2, 2)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from probing.naming import DIRECTIONS, head_name


class Result:
    """One result file's JSON (``data``), read or made by a run; subclasses add per-analysis views.

    Every result, of any analysis, has its per-head numbers as arrays (:meth:`grids`: each field of the JSON
    that holds one number per layer and head, by its dotted path), the analysis's leaderboard tables
    (:meth:`tables`) and a DataFrame of either (:meth:`to_frame`); a result of an analysis that chooses heads
    (:attr:`chooses`) says whether it is held out or in-sample (:attr:`selection`), others say neither.

    >>> result = Result({"analysis": "toy", "model": {"name": "m", "num_layers": 2, "num_heads": 2},
    ...                  "input": {"path": "s.conllu"}, "toy": {"share": [[0.5, 1.0], [0.0, None]], "units": 3}})
    >>> list(result.grids()), result.grid("toy.share")[0].tolist(), result.selection
    (['toy.share'], [0.5, 1.0], None)
    >>> result
    <Result toy: m on s.conllu>
    """

    chooses = False
    """Whether the analysis chooses heads (on dev, or in-sample on what it measures): only then is a result held
    out or in-sample."""

    def __init__(self, data: dict):
        self.data = data

    @property
    def analysis(self) -> str:
        return self.data["analysis"]

    @property
    def model(self) -> str:
        """The model's short name (its folder's name or hub id), as the tables give it."""
        model = self.data["model"]
        return model.get("name") or Path(str(model["name_or_path"])).name

    @property
    def held_out(self) -> bool:
        """Whether the result holds numbers chosen on dev and reported on test (a ``heldout`` block)."""
        return "heldout" in self.data

    @property
    def selection(self) -> str | None:
        """``"held-out"`` (chosen on dev, reported on test), ``"in-sample"`` (an analysis that chooses, choosing on
        what it measures) or None (an analysis that chooses nothing)."""
        if self.held_out:
            return "held-out"
        return "in-sample" if self.chooses else None

    def grids(self) -> dict[str, np.ndarray]:
        """Every per-head field of the JSON as an array ``[layer, head]`` (from 0; NaN where the JSON has null),
        by its dotted path (``"surface.heads.entropy"``): each list of one list per layer of the model, each of
        the same number of numbers (a reading with one map per layer, rollout, has one "head")."""
        layers = self.data.get("model", {}).get("num_layers")
        found = {}

        def walk(value, path):
            if isinstance(value, dict):
                for key, inner in value.items():
                    if path or key not in ("state", "model", "config", "environment", "input"):
                        walk(inner, f"{path}.{key}" if path else key)
            elif _is_grid(value, layers):
                found[path] = np.array([[np.nan if x is None else x for x in row] for row in value], dtype=float)

        walk(self.data, "")
        return found

    def grid(self, name: str) -> np.ndarray:
        """One of :meth:`grids` by its dotted path."""
        grids = self.grids()
        if name not in grids:
            raise KeyError(f"no per-head field {name!r} in this result; it has {', '.join(grids) or 'none'}")
        return grids[name]

    def tables(self) -> list:
        """The analysis's leaderboard tables (probing.report.board.Table) for this one result; none for an
        analysis without a leaderboard."""
        from probing.plugins import analyses

        registry = analyses()
        if self.analysis not in registry or registry[self.analysis].tables is None:
            return []
        return registry[self.analysis].load("tables")([self.data])

    def to_frame(self):
        """A pandas DataFrame: one row per field, layer and head of :meth:`grids` (layers and heads from 1),
        else, for an analysis with no per-head fields, one row per cell of :meth:`tables`."""
        rows = [{"field": name, "layer": layer + 1, "head": head + 1, "value": float(values[layer, head])}
                for name, values in self.grids().items()
                for layer in range(values.shape[0]) for head in range(values.shape[1])]
        if not rows:
            rows = [{"table": table.key, "row": row.model, "column": column, "value": cell.accuracy,
                     "low": cell.interval[0] if cell.interval else None,
                     "high": cell.interval[1] if cell.interval else None, "p": cell.p_not_better}
                    for table in self.tables() for row in table.rows
                    for column, cell in row.cells.items() if cell is not None]
        return frame(rows)

    def write(self, path) -> Path:
        """Write the JSON to ``path`` as the command line does (validated, atomically)."""
        from probing.results.io import write_result

        return write_result(self.data, path)

    def __repr__(self) -> str:
        selection = {"held-out": ", held out", "in-sample": ", in-sample", None: ""}[self.selection]
        return f"<{type(self).__name__} {self.analysis}: {self.model} on {self.data['input']['path']}{selection}>"


def _is_grid(value, layers: int | None) -> bool:
    """Whether ``value`` is one list of numbers (or nulls) per layer, all of one length: a per-head field."""
    if not isinstance(value, list) or not value or (layers is not None and len(value) != layers):
        return False
    if not all(isinstance(row, list) and row and len(row) == len(value[0]) for row in value):
        return False
    cells = [cell for row in value for cell in row]
    numbers = [cell for cell in cells if cell is not None]
    return bool(numbers) and all(isinstance(cell, (int, float)) and not isinstance(cell, bool) for cell in numbers)


@dataclass(frozen=True)
class Choice:
    """A chosen head: ``layer`` and ``head`` from 0 (they index the per-head arrays), ``name`` from 1 as the
    tables write it, its accuracy and, when there is a bootstrap, its interval ``(low, high)``."""

    layer: int
    head: int
    direction: str
    accuracy: float
    interval: tuple[float, float] | None = None

    @property
    def name(self) -> str:
        """``"3-9 dep->head"``: layer and head from 1, with the direction."""
        return head_name(self.layer, self.head, self.direction)

    @classmethod
    def from_entry(cls, entry: Mapping | None) -> "Choice | None":
        """From a result's ``{layer, head, direction, accuracy[, interval]}`` object (None stays None)."""
        if entry is None:
            return None
        interval = entry.get("interval")
        return cls(entry["layer"], entry["head"], entry["direction"], entry["accuracy"],
                   None if interval is None else (interval[0], interval[1]))


def per_head(grids: Mapping[str, list], total: int) -> np.ndarray:
    """Accuracy ``[layer, head, direction]`` from per-direction count grids ``[layer][head]`` over ``total``
    (NaN when there is nothing to count)."""
    counts = per_head_counts(grids)
    if not total:
        return np.full(counts.shape, np.nan)
    return counts / total


def per_head_counts(grids: Mapping[str, list]) -> np.ndarray:
    """Counts ``[layer, head, direction]`` from per-direction grids ``[layer][head]``."""
    return np.stack([np.asarray(grids[direction], dtype=np.int64) for direction in DIRECTIONS], axis=-1)


def head_rows(counts: np.ndarray, total: int) -> list[dict]:
    """One row per layer, head and direction: layers and heads from 1, correct, total and accuracy."""
    layers, heads, _ = counts.shape
    return [{"layer": layer + 1, "head": head + 1, "direction": direction, "correct": int(counts[layer, head, index]),
             "total": total, "accuracy": counts[layer, head, index] / total if total else float("nan")}
            for layer in range(layers) for head in range(heads) for index, direction in enumerate(DIRECTIONS)]


def frame(rows: list[dict]):
    """A pandas DataFrame of ``rows``; pandas is an optional extra, named in the error when it is absent."""
    try:
        import pandas
    except ImportError:
        from probing.errors import ProbingError

        raise ProbingError("to_frame() needs pandas: pip install pandas (from a clone: pip install -e '.[frames]')") from None
    return pandas.DataFrame(rows)


def result_object(data: dict) -> Result:
    """The object of the analysis's own class (its registry record's ``result``), else a :class:`Result`."""
    from probing.plugins import analyses

    record = analyses()[data["analysis"]]
    cls = record.load("result") if "result" in record.extra else Result
    return cls(data)
