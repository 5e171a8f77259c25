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
    """One result file's JSON (``data``), read or made by a run; subclasses add per-analysis views."""

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

    def write(self, path) -> Path:
        """Write the JSON to ``path`` as the command line does (validated, atomically)."""
        from probing.results.io import write_result

        return write_result(self.data, path)

    def __repr__(self) -> str:
        selection = "held out" if self.held_out else "in-sample"
        return f"<{type(self).__name__} {self.analysis}: {self.model} on {self.data['input']['path']}, {selection}>"


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
