"""A trees result as an object: every head's UAS or UUAS as a tree, the chosen heads, the probes, a DataFrame.

Torch-free. Decodings are ``max`` (each word's strongest attention) and ``mst`` (a maximum spanning tree);
metrics ``uas`` and ``uuas``; scores are over the result's scored words.
"""

from __future__ import annotations

import numpy as np

from probing.results.objects import Choice, Result, frame, head_rows, per_head, per_head_counts

DECODINGS = ("max", "mst")
METRICS = ("uas", "uuas")


class TreesResult(Result):
    """The result of ``probing trees`` (``data`` is its JSON, docs/results.md)."""

    chooses = True

    @property
    def words(self) -> int:
        """The scored words every count is out of."""
        return self.data["trees"]["words"]

    def accuracy(self, decoding: str = "mst", metric: str = "uas") -> np.ndarray:
        """Every head's share of words attached right ``[layer, head, direction]`` when its attention is
        decoded as ``decoding`` and scored by ``metric``, on this result's treebank."""
        return per_head(self._grids(decoding, metric), self.words)

    def chosen(self, decoding: str = "mst", metric: str = "uas", causal: bool = False) -> Choice | None:
        """The best single head: chosen on dev with its test score and interval when held out, else the
        in-sample best. ``causal``: a decoder's best head in the causal reading (None for an encoder)."""
        if causal:
            if self.held_out:
                entry = (self.data["heldout"].get("causal_best_heads") or {}).get(decoding, {}).get(metric)
            else:
                entry = (self.data["trees"].get("causal") or {}).get(decoding, {}).get(f"best_{metric}")
            return Choice.from_entry(entry)
        if self.held_out:
            return Choice.from_entry(self.data["heldout"]["best_heads"][decoding][metric])
        return Choice.from_entry(self.data["trees"]["decodings"][decoding][f"best_{metric}"])

    def probes(self, metric: str = "uas") -> dict[str, dict[str, float]]:
        """Held-out scores of the attention probes, by probe and decoding (``argmax``, ``mst``); empty for an
        in-sample result (its probes are trained, not scored)."""
        probes = (self.data.get("heldout") or {}).get("probes") or {}
        return {name: {decoding: scores[metric]["accuracy"] for decoding, scores in entry.items()
                       if isinstance(scores, dict) and metric in scores}
                for name, entry in probes.items()}

    def to_frame(self):
        """Every head as rows per decoding and metric: layer and head from 1, direction, correct, total
        (scored words) and accuracy."""
        rows = []
        for decoding in DECODINGS:
            for metric in METRICS:
                counts = per_head_counts(self._grids(decoding, metric))
                rows += [{"decoding": decoding, "metric": metric, **row} for row in head_rows(counts, self.words)]
        return frame(rows)

    def _grids(self, decoding: str, metric: str) -> dict:
        if decoding not in DECODINGS or metric not in METRICS:
            raise KeyError(f"decoding is one of {DECODINGS} and metric one of {METRICS}, got {decoding!r}, {metric!r}")
        return self.data["trees"]["decodings"][decoding][metric]
