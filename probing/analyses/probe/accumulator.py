"""The dependency-head probe (Clark et al. 2019, sections 4.1-4.2) as an accumulator of the engine.

Each batch's word attention gives every head's predicted head for every
word, in both directions; the pairs of each relation are scored against
them and against the fixed offsets, and only integer counts are kept
(probing.analyses.probe.counts). The result is the probe's contract
(docs/results.md): per relation the pairs, every head's correct count, every
offset's, the best head and the best offset; and, as every analysis's, the
``state`` it is derived from: those counts as arrays and the bootstrap's
replicate sums, which give intervals and which merges add up.

>>> from probing.analyses.probe.api import score
>>> from probing.testing import tiny_bert
>>> result = score(model=tiny_bert(), limit=3, bootstrap=0)
>>> result["analysis"], result["treebank"]["sentences_scored"]
('probe', 3)
"""

from __future__ import annotations

import numpy as np

from probing.analyses.probe.counts import ProbeCounts
from probing.analyses.probe.pairs import collect_pairs, pairs_key, pairs_of
from probing.engine.accumulator import Accumulator, BatchView
from probing.naming import DIRECTIONS
from probing.results.io import apart_count
from probing.stats.bootstrap import BootstrapSpec, poisson_weights
from probing.stats.intervals import bootstrap_block
from probing.stats.selection import best_cell, select_head, select_offset


class ProbeAccumulator(Accumulator):
    """Integer counts of every head, direction and offset per relation (update / merge / result)."""

    analysis = "probe"
    reads = "predictions"

    def __init__(self, counts: ProbeCounts):
        super().__init__()
        self.counts = counts

    @classmethod
    def create(cls, relations, num_layers: int, num_heads: int, *, offsets, bootstrap: int, seed: int,
               causal: bool) -> "ProbeAccumulator":
        spec = BootstrapSpec(bootstrap, seed) if bootstrap else None
        return cls(ProbeCounts(relations, num_layers, num_heads, offsets=offsets, bootstrap=spec, causal=causal))

    def prepare(self, batch) -> dict:
        """What depends on the batch's sentences alone, made on the input side, off the model's way: the pairs
        to score (array operations on the batch's words, probing.analyses.probe.pairs) and the bootstrap's Poisson weights
        (a generator per sentence)."""
        prepared = {pairs_key(self.counts.relations): collect_pairs(batch.sentences, self.counts.relations)}
        if self.counts.bootstrap is not None:
            prepared[self._weights_key()] = poisson_weights(batch.indices, replicates=self.counts.bootstrap.replicates,
                                                            seed=self.counts.bootstrap.seed, compact=True)
        return prepared

    def update(self, view: BatchView) -> None:
        batch = view.batch
        pairs = pairs_of(batch, self.counts.relations)
        weights = getattr(batch, "prepared", {}).get(self._weights_key()) if self.counts.bootstrap else None
        self.counts.update(view.predictions, pairs, sentence_indices=batch.indices, num_words=batch.num_words.tolist(),
                           weights=weights)

    def _weights_key(self) -> tuple:
        bootstrap = self.counts.bootstrap
        return ("poisson weights", bootstrap.replicates, bootstrap.seed)

    def identity(self) -> dict:
        counts = self.counts
        bootstrap = None if counts.bootstrap is None else [counts.bootstrap.replicates, counts.bootstrap.seed]
        return {"analysis": self.analysis, "relations": list(counts.relations), "offsets": list(counts.offsets),
                "bootstrap": bootstrap, "causal": counts.causal, "shape": [counts.num_layers, counts.num_heads]}

    def count_parts(self) -> dict:
        """Every number is the probe counts' (probing.engine.counts gives state, load_state and merge)."""
        return {"": self.counts}

    def fresh(self) -> "ProbeAccumulator":
        counts = self.counts
        return ProbeAccumulator(ProbeCounts(counts.relations, counts.num_layers, counts.num_heads, offsets=counts.offsets,
                                            bootstrap=counts.bootstrap, causal=counts.causal))

    def result(self) -> dict:
        bootstrap = self.counts.bootstrap
        settings = None if bootstrap is None else bootstrap_block(bootstrap.replicates, bootstrap.seed)
        return {"relations": relations_summary(self.counts), "bootstrap": settings, "state": self.encoded_state()}

    @classmethod
    def for_result(cls, result: dict) -> "ProbeAccumulator":
        model, relations, boot = result["model"], result["relations"], result.get("bootstrap")
        return cls(ProbeCounts(list(relations), model["num_layers"], model["num_heads"],
                               offsets=result["config"]["offsets"],
                               bootstrap=BootstrapSpec(boot["replicates"], boot["seed"]) if boot else None,
                               # a decoder's result written before the causal direction existed merges without it
                               causal="causal_heads" in result["state"]))

    @staticmethod
    def finish_merge(merged: dict, parts: list[dict]) -> dict:
        """The merged ``treebank`` block, and held-out numbers recomputed from the merged counts."""
        from probing.analyses.probe.heldout_block import reattach_heldout

        treebank = dict(parts[0]["treebank"])
        for name in ("sentences_scored", "words_scored", "unk_substituted_words"):
            treebank[name] = sum(part["treebank"][name] for part in parts)
        reasons = {reason for part in parts for reason in part["treebank"]["skipped"]}
        treebank["skipped"] = {reason: sum(part["treebank"]["skipped"].get(reason, 0) for part in parts)
                               for reason in reasons}
        return reattach_heldout({**merged, "treebank": treebank}, parts)


def relations_summary(counts: ProbeCounts) -> dict:
    """The ``relations`` object: counts, the best head and the best offset per relation."""
    summary = {}
    for r, name in enumerate(counts.relations):
        total = int(counts.total[r])
        heads = {direction: counts.heads[r, d].tolist() for d, direction in enumerate(DIRECTIONS)}
        baselines = {str(offset): int(counts.baselines[r, o]) for o, offset in enumerate(counts.offsets)}
        reachable = {direction: int(counts.reachable[r, d]) for d, direction in enumerate(DIRECTIONS)}
        summary[name] = {
            "total": total,
            "heads": heads,
            "baselines": baselines,
            "best": best_head(heads, total),
            "best_baseline": best_baseline(baselines, counts.offsets, total),
            "reachable": reachable,
            "best_reachable": best_reachable_head(heads, reachable),
        }
        if counts.causal:
            summary[name]["causal"] = causal_summary(counts.causal_heads[r].tolist(), int(counts.head_first[r]), total)
    return summary


def causal_summary(heads: list, head_first: int, total: int) -> dict:
    """A decoder's ``causal`` object of one relation: every head's correct count in the causal direction
    (each pair scored by its later word), the best head by the usual tie rule, and how many pairs have
    their head first (what ``dep_to_head`` can reach; ``head_to_dep`` reaches the rest).

    >>> causal_summary([[1, 3], [3, 0]], head_first=1, total=4)["best"]
    {'layer': 0, 'head': 1, 'direction': 'causal', 'accuracy': 0.75}
    """
    best = None
    if total:
        _, layer, head = best_cell(np.asarray(heads)[None])
        best = {"layer": layer, "head": head, "direction": "causal", "accuracy": heads[layer][head] / total}
    return {"heads": heads, "best": best, "head_first": head_first}


def best_head(heads: dict, total: int) -> dict | None:
    """The most accurate (layer, head, direction) by :func:`probing.stats.selection.select_head`; None without pairs.

    >>> best_head({"dep_to_head": [[3, 9], [9, 1]], "head_to_dep": [[0, 9], [2, 2]]}, total=10)
    {'layer': 0, 'head': 1, 'direction': 'dep_to_head', 'accuracy': 0.9}
    """
    choice = select_head(np.stack([np.asarray(heads[d]) for d in DIRECTIONS]), total)
    if choice is None:
        return None
    return {"layer": choice.layer, "head": choice.head, "direction": choice.direction, "accuracy": choice.correct / total}


def best_reachable_head(heads: dict, reachable: dict) -> dict | None:
    """The best head by accuracy over the pairs its direction can reach (docs/families.md); the same
    tie rule. None when no pair is reachable.

    >>> best_reachable_head({"dep_to_head": [[2, 4]], "head_to_dep": [[3, 1]]}, {"dep_to_head": 4, "head_to_dep": 3})
    {'layer': 0, 'head': 0, 'direction': 'head_to_dep', 'accuracy': 1.0}
    """
    denominators = np.array([reachable[d] for d in DIRECTIONS], dtype=float)
    if not denominators.any():
        return None
    correct = np.stack([np.asarray(heads[d], dtype=float) for d in DIRECTIONS])  # [direction, layer, head]
    with np.errstate(divide="ignore", invalid="ignore"):
        accuracy = np.where(denominators[:, None, None] > 0, correct / denominators[:, None, None], -1.0)
    direction, layer, head = best_cell(accuracy)
    return {"layer": layer, "head": head, "direction": DIRECTIONS[direction], "accuracy": float(accuracy[direction, layer, head])}


def best_baseline(baselines: dict[str, int], offsets, total: int) -> dict | None:
    """The most accurate offset by :func:`probing.stats.selection.select_offset` (ties: the offset listed first)."""
    choice = select_offset([baselines[str(o)] for o in offsets], list(offsets), total)
    return None if choice is None else {"offset": choice.offset, "accuracy": choice.correct / total}


def counts_from_result(result: dict) -> ProbeCounts:
    """The running counts of a (validated) probe result, for merges and intervals: its ``state``.

    >>> from probing.analyses.probe.api import score
    >>> from probing.testing import tiny_bert
    >>> result = score(model=tiny_bert(), limit=3, bootstrap=10)
    >>> counts_from_result(result).boot_total.shape[0], counts_from_result(result).sentences
    (10, 3)
    """
    return ProbeAccumulator.from_result(result).counts


def treebank_block(source, stats, counts: ProbeCounts) -> dict:
    """The probe contract's ``treebank`` object (docs/results.md)."""
    return {
        "path": source.recorded_path,
        "sha256": source.sha256,
        "sentences_total": stats.units_total,
        "sentences_scored": counts.sentences,
        "words_scored": counts.words,
        "skipped": {"too_long": stats.too_long},
        "unk_substituted_words": stats.unk_substituted_words,
        **apart_count(stats),
        **({"half": source.half_rule()} if getattr(source, "half", None) else {}),
    }
