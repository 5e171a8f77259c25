"""An ablation result as an object: each condition's change per metric part as a DataFrame, and, for a
``--chosen`` run, its chosen-vs-random table. Torch-free.

>>> result = AblationResult({"analysis": "ablation", "model": {"name": "m"}, "input": {"path": "t.conllu"},
...     "baseline": {"det": {"value": 0.5, "interval": None, "detail": "1-1"}},
...     "conditions": [{"label": "none", "heads": [], "parts": {}},
...                    {"label": "layer 1", "heads": [[0, 0], [0, 1]], "parts": {"det": {
...                        "value": 0.25, "change": -0.25, "interval": [-0.4, -0.1], "verdict": "clearly lower"}}}]})
>>> result.conditions, result.selection, result
(['none', 'layer 1'], None, <AblationResult ablation: m on t.conllu>)
>>> [(row["condition"], row["part"], row["change"]) for row in result.rows()]
[('none', 'det', 0.0), ('layer 1', 'det', -0.25)]
"""

from __future__ import annotations

from probing.results.objects import Result, frame


class AblationResult(Result):
    """The result of ``probing ablate`` (``data`` is its JSON, docs/results.md)."""

    @property
    def chooses(self) -> bool:
        """A ``--chosen`` run chooses its heads on DEV (``--select-on``) and measures them on the input."""
        return "versus" in self.data

    @property
    def selection(self) -> str | None:
        return "held-out" if self.chooses else None

    @property
    def conditions(self) -> list[str]:
        return [condition["label"] for condition in self.data["conditions"]]

    def rows(self) -> list[dict]:
        """One row per condition and metric part: the metric with those heads disabled, its change from the
        intact model and the change's interval (the intact model is the condition ``none``, change 0)."""
        rows = []
        for condition in self.data["conditions"]:
            parts = condition["parts"] or {part: {**entry, "change": 0.0, "verdict": ""}
                                           for part, entry in self.data["baseline"].items()}
            for part, entry in parts.items():
                interval = entry.get("interval")
                rows.append({"condition": condition["label"], "heads": len(condition["heads"]), "part": part,
                             "value": entry["value"], "change": entry["change"],
                             "low": interval[0] if interval and condition["parts"] else None,
                             "high": interval[1] if interval and condition["parts"] else None,
                             "verdict": entry.get("verdict", "")})
        return rows

    def tables(self) -> list:
        """A ``--chosen`` run's chosen-vs-random leaderboard table; none for other runs (they have no board)."""
        return super().tables() if self.chooses else []

    def to_frame(self):
        """:meth:`rows` as a pandas DataFrame."""
        return frame(self.rows())
