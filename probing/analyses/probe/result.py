"""A probe result as an object: per-head accuracy per relation, the chosen heads, their intervals, a DataFrame.

The head to cite for a relation is the one chosen on dev when the result is
held out (its accuracy and interval are on test), else the in-sample best
(chosen and reported on the same sentences, no interval for the choice).
Torch-free.

>>> from probing.results.objects import Choice
>>> data = {"analysis": "probe", "model": {"name": "m", "name_or_path": "m"}, "input": {"path": "t.conllu"},
...         "relations": {"det": {"total": 4, "heads": {"dep_to_head": [[3, 1]], "head_to_dep": [[0, 2]]},
...                               "best": {"layer": 0, "head": 0, "direction": "dep_to_head", "accuracy": 0.75}}}}
>>> result = ProbeResult(data)
>>> result.accuracy("det")[0, 0], result.chosen("det").name
(array([0.75, 0.  ]), '1-1 dep->head')
"""

from __future__ import annotations

import numpy as np

from probing.results.objects import Choice, Result, frame, head_rows, per_head, per_head_counts


class ProbeResult(Result):
    """The result of ``probing score`` (``data`` is its JSON, docs/results.md)."""

    chooses = True

    @property
    def relations(self) -> list[str]:
        return list(self.data["relations"])

    def counts(self, relation: str) -> np.ndarray:
        """Correct pairs ``[layer, head, direction]`` of every head for ``relation`` (in-sample on this
        result's treebank)."""
        return per_head_counts(self._relation(relation)["heads"])

    def accuracy(self, relation: str) -> np.ndarray:
        """Accuracy ``[layer, head, direction]`` of every head for ``relation`` on this result's treebank."""
        entry = self._relation(relation)
        return per_head(entry["heads"], entry["total"])

    def chosen(self, relation: str) -> Choice | None:
        """The head to cite: chosen on dev with its test accuracy and interval when held out, else the
        in-sample best (None when the relation has no pairs)."""
        if self.held_out:
            return Choice.from_entry(self.data["heldout"]["relations"][self._name(relation)]["heldout"]["head"])
        return Choice.from_entry(self._relation(relation)["best"])

    def chosen_heads(self) -> dict[str, Choice | None]:
        """:meth:`chosen` for every relation."""
        return {name: self.chosen(name) for name in self.relations}

    def interval(self, relation: str) -> tuple[float, float] | None:
        """The chosen head's interval (held-out results with a bootstrap), else None."""
        choice = self.chosen(relation)
        return None if choice is None else choice.interval

    def to_frame(self):
        """Every relation's every head as rows: relation, layer and head from 1, direction, correct, total
        (pairs) and accuracy, on this result's treebank."""
        rows = []
        for name in self.relations:
            total = self._relation(name)["total"]
            rows += [{"relation": name, **row} for row in head_rows(self.counts(name), total)]
        return frame(rows)

    def _name(self, relation: str) -> str:
        if relation not in self.data["relations"]:
            raise KeyError(f"no relation {relation!r} in this result; it has {', '.join(self.relations)}")
        return relation

    def _relation(self, relation: str) -> dict:
        return self.data["relations"][self._name(relation)]
