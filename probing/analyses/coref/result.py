"""A coref result as an object: every head's antecedent accuracy per mention type, the chosen head, a DataFrame.

Torch-free. Mention types are those the result lists (``all``, ``pronoun``, ``proper``, ``nominal``).
"""

from __future__ import annotations

import numpy as np

from probing.results.objects import Choice, Result, frame, head_rows, per_head, per_head_counts


class CorefResult(Result):
    """The result of ``probing coref`` (``data`` is its JSON, docs/results.md)."""

    chooses = True

    @property
    def types(self) -> list[str]:
        return list(self.data["coref"]["heads"])

    def accuracy(self, mention_type: str = "all") -> np.ndarray:
        """Every head's share of scored mentions whose antecedent it picks ``[layer, head, direction]``."""
        coref = self.data["coref"]
        return per_head(coref["heads"][mention_type], coref["scored"][mention_type])

    def chosen(self, mention_type: str = "all") -> Choice | None:
        """The head to cite: chosen on dev with its test accuracy and interval when held out, else the
        in-sample best."""
        if self.held_out:
            return Choice.from_entry(self.data["heldout"]["types"][mention_type]["head"])
        return Choice.from_entry(self.data["coref"]["best"][mention_type])

    def to_frame(self):
        """Every head as rows per mention type: layer and head from 1, direction, correct, total (scored
        mentions) and accuracy."""
        coref, rows = self.data["coref"], []
        for mention_type in self.types:
            counts = per_head_counts(coref["heads"][mention_type])
            rows += [{"type": mention_type, **row} for row in head_rows(counts, coref["scored"][mention_type])]
        return frame(rows)
