"""Whole dependency trees from attention as an accumulator of the engine (``probing trees``).

:class:`TreesAccumulator` counts, over one pass, everything a trees result
reports on its treebank, as integers that add up across shards, processes
and resumed parts:

- every layer, head and direction as a tree of its own (Htut et al. 2019):
  UAS and UUAS under ``max`` and ``mst`` decoding, and the right- and
  left-branching baselines (:class:`probing.analyses.trees.counts.TreeCounts`);
- with a selection made on another treebank (``evaluate``): each chosen head
  ensemble's relation accuracy beside its best single head's, the UAS/UUAS of
  the trees decoded from the ensembles together
  (:class:`probing.analyses.trees.ensembles.EnsembleCounts`), and each trained
  attention probe's UAS/UUAS under ``argmax`` and ``mst`` decoding
  (:class:`probing.analyses.trees.probes.ProbeTreeCounts`).

Its state is one flat dict of integer tensors (``single.*``, ``ensembles.*``,
``probe.NAME.*``), so the engine's checkpoints, torchrun merges and
``probing merge`` work as for every analysis. ``result()`` derives the
``trees`` block (counts per head, best heads in-sample) and, with a
selection, the ``heldout`` block (the selection's choices measured here,
with 95% Poisson-bootstrap intervals); both are recomputed from the state
after a merge. The selection itself (chosen heads, ensembles, trained
probes) is made by :mod:`probing.analyses.trees.selection`.

>>> from probing.data.treebank import Sentence
>>> s = Sentence(words=("the", "cat", "sat"), heads=(1, 2, -1), labels=("det", "nsubj", "root"),
...              upos=("DET", "NOUN", "VERB"))
>>> W = torch.tensor([[0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.3, 0.6, 0.1]])  # each word attends to its head
>>> trees = TreesAccumulator(1, 1)
>>> trees.add(W[None, None, None], [s], torch.tensor([3]))
>>> block = trees.result()["trees"]
>>> block["words"], block["decodings"]["mst"]["uas"]["dep_to_head"], block["baselines"]["right_branching"]
(2, [[2]], {'uas': 2, 'uuas': 2})
"""

from __future__ import annotations

import torch

from probing.analyses.trees.counts import BASELINES, DECODINGS, METRICS, TreeCounts
from probing.analyses.trees.ensembles import Ensemble, EnsembleCounts
from probing.analyses.trees.probes import DECODINGS as PROBE_DECODINGS
from probing.analyses.trees.probes import ProbeTreeCounts
from probing.engine.accumulator import Accumulator, BatchView
from probing.errors import ProbingError
from probing.naming import DIRECTIONS
from probing.stats.bootstrap import BootstrapSpec
from probing.stats.intervals import LEVEL, accuracy_interval, bootstrap_block, paired_difference
from probing.stats.selection import select_head

METHOD = (
    "best single head per decoding and metric (ties: lower layer, lower head, dep_to_head first), head "
    "ensembles and attention probes chosen or trained on the selection treebank; counts and 95% percentile "
    "intervals (Poisson bootstrap over sentences, weights seeded by sentence index) on this result's "
    "treebank; layers and heads from 0"
)

CAUSAL = "causal"
"""The direction name of the causal reading (a decoder's later word's attention to the earlier one)."""

def _measured(correct: int, total: int, boot_correct, boot_total, level: float) -> dict:
    """Counts here, the accuracy, and its interval from replicate counts (None without replicates)."""
    interval = accuracy_interval(boot_correct, boot_total, level) if boot_correct is not None else None
    return {"correct": correct, "total": total, "accuracy": correct / total if total else None,
            "interval": None if interval is None else list(interval)}


class TreesAccumulator(Accumulator):
    """UAS/UUAS counts of single-head trees, and of a selection's ensembles and probes.

    ``selection``: the choices made on a selection treebank (see
    :mod:`probing.analyses.trees.selection`), or None. ``evaluate``: count the
    selection's ensembles and probes on this pass (a held-out report); without
    it the selection is only carried into the result (an in-sample run that
    chose on its own treebank). ``probe_modules`` (name -> trained module) and
    ``vectors`` (a word-vector source) are what the probes need at run time;
    they are rebuilt from the selection, never stored in the state.
    """

    analysis = "trees"

    def __init__(self, num_layers: int, num_heads: int, *, bootstrap: BootstrapSpec | None = None,
                 causal: bool = False, selection: dict | None = None, evaluate: bool = False,
                 probe_modules: dict | None = None, vectors=None):
        super().__init__()
        if evaluate and selection is None:
            raise ValueError("evaluating a selection needs one")
        self.shape = (num_layers, num_heads)
        self.bootstrap, self.causal = bootstrap, causal
        self.selection, self.evaluate = selection, evaluate
        self.probe_modules, self.vectors = probe_modules or {}, vectors
        self.single = TreeCounts(num_layers, num_heads, bootstrap, causal=causal)
        self.ensembles = None
        self.probes: dict[str, ProbeTreeCounts] = {}
        if evaluate:
            chosen = ensembles_of(selection)
            self.ensembles = EnsembleCounts(chosen, causal, bootstrap) if chosen else None
            self.probes = {name: ProbeTreeCounts(bootstrap) for name in selection.get("probes") or {}}
        self.vector_counts = torch.zeros(2, dtype=torch.long)  # words looked up in a vector file, and not found
        self.state_tensors = {"vector_counts": self.vector_counts}

    # -- counting ------------------------------------------------------------------------------

    def update(self, view: BatchView) -> None:
        batch = view.batch
        self.add(view.word_attention, batch.sentences, batch.num_words, predictions=view.predictions)
        if self.probes:
            self._count_probes(view)

    def add(self, word_attention: torch.Tensor, sentences, num_words, predictions=None) -> None:
        """Single heads and ensembles of one batch: word_attention [batch, layer, head, word, word]."""
        if tuple(word_attention.shape[1:3]) != self.shape:
            raise ProbingError(f"attention of {tuple(word_attention.shape[1:3])} heads does not fit {self.shape}")
        self.single.update(word_attention, sentences, num_words, predictions=predictions)
        if self.ensembles is not None:
            self.ensembles.update(word_attention, sentences, num_words)

    def _count_probes(self, view: BatchView) -> None:
        from probing.analyses.trees.features import ProbeBatch

        if self.vectors is None or set(self.probe_modules) != set(self.probes):
            raise RuntimeError("the probes' modules and word vectors must be set before a pass")
        batch = view.batch
        vectors, looked_up, unknown = self.vectors(view)
        self.vector_counts += torch.tensor([looked_up, unknown])
        features = ProbeBatch.from_engine(view.word_attention, view.attention, batch.word_of_token,
                                          batch.attention_mask, vectors, batch.num_words.cpu())
        features = ProbeBatch(features.attention.cpu(), features.special.cpu(), features.vectors.cpu(),
                              features.num_words)
        for name, counts in self.probes.items():
            counts.update(self.probe_modules[name], features, batch.sentences)

    # -- the engine's protocol -----------------------------------------------------------------

    identity_options = {"selection": "--select-on"}

    def identity(self) -> dict:
        return {
            "analysis": self.analysis,
            "shape": list(self.shape),
            "bootstrap": None if self.bootstrap is None else [self.bootstrap.replicates, self.bootstrap.seed],
            "causal": self.causal,
            "evaluate": self.evaluate,
            "selection": None if self.selection is None else self.selection["digest"],
        }

    def count_parts(self) -> dict:
        """The count objects (probing.engine.counts gives state, load_state and merge), by the prefix of their
        names in the state; ``vector_counts`` is the accumulator's own."""
        parts = {"single.": self.single}
        if self.ensembles is not None:
            parts["ensembles."] = self.ensembles
        parts.update({f"probe.{name}.": counts for name, counts in self.probes.items()})
        return parts

    def fresh(self) -> TreesAccumulator:
        return TreesAccumulator(*self.shape, bootstrap=self.bootstrap, causal=self.causal, selection=self.selection,
                                evaluate=self.evaluate, probe_modules=self.probe_modules, vectors=self.vectors)

    def merge(self, other: TreesAccumulator) -> TreesAccumulator:
        if isinstance(other, TreesAccumulator) and other.identity()["selection"] != self.identity()["selection"]:
            raise ProbingError("parts were not all made with the same selection (the heads, ensembles and probes "
                               "chosen on DEV differ); give every part the same --select-on")
        return super().merge(other)

    # -- results -------------------------------------------------------------------------------

    def result(self) -> dict:
        payload = {"trees": self.summary()}
        if self.selection is not None:
            payload["selection"] = self.selection
        if self.evaluate:
            payload["heldout"] = self.heldout()
        payload["state"] = self.encoded_state()
        return payload

    @classmethod
    def for_result(cls, result: dict) -> TreesAccumulator:
        trees = result["trees"]
        boot = trees.get("bootstrap")
        return cls(trees["layers"], trees["heads"], bootstrap=BootstrapSpec(boot["replicates"], boot["seed"]) if boot else None,
                   causal=bool(result["model"].get("is_causal", False)), selection=result.get("selection"),
                   evaluate="heldout" in result)

    def best_heads(self) -> dict:
        """Per decoding and metric, the best (layer, head, direction) by the one tie rule, with its counts."""
        total = self.single.total
        best = {}
        for d, decoding in enumerate(DECODINGS):
            best[decoding] = {}
            for m, metric in enumerate(METRICS):
                choice = select_head(self.single.heads[m, d].numpy(), total)
                best[decoding][metric] = None if choice is None else {
                    "layer": choice.layer, "head": choice.head, "direction": choice.direction,
                    "correct": choice.correct, "total": total, "ties": choice.ties,
                }
        return best

    def causal_best_heads(self) -> dict | None:
        """A decoder's best head per decoding and metric in the causal reading (ties: lower layer, then lower
        head), with its counts; None for an encoder."""
        if not self.causal:
            return None
        total = self.single.total
        best = {}
        for d, decoding in enumerate(DECODINGS):
            best[decoding] = {}
            for m, metric in enumerate(METRICS):
                counts = self.single.causal_heads[m, d].numpy()
                choice = select_head(counts[None], total)
                best[decoding][metric] = None if choice is None else {
                    "layer": choice.layer, "head": choice.head, "direction": CAUSAL,
                    "correct": choice.correct, "total": total, "ties": choice.ties,
                }
        return best

    def summary(self) -> dict:
        """The ``trees`` block: counts of every head, direction, decoding and metric (layers and heads from 0)."""
        single = self.single
        decodings = {}
        best = self.best_heads()
        for d, decoding in enumerate(DECODINGS):
            entry = {}
            for m, metric in enumerate(METRICS):
                entry[metric] = {direction: single.heads[m, d, r].tolist() for r, direction in enumerate(DIRECTIONS)}
                choice = best[decoding][metric]
                entry[f"best_{metric}"] = None if choice is None else {
                    **{key: choice[key] for key in ("layer", "head", "direction", "correct", "ties")},
                    "accuracy": choice["correct"] / single.total,
                }
            decodings[decoding] = entry
        block = {
            "layers": self.shape[0],
            "heads": self.shape[1],
            "sentences": {"scored": single.sentences, "skipped": dict(single.skipped)},
            "words": single.total,
            "decodings": decodings,
            "baselines": {baseline: {metric: int(single.baselines[m, b]) for m, metric in enumerate(METRICS)}
                          for b, baseline in enumerate(BASELINES)},
            "bootstrap": None if self.bootstrap is None else bootstrap_block(self.bootstrap.replicates,
                                                                             self.bootstrap.seed),
        }
        if self.causal:
            block["causal"] = self._causal_summary()
        if self.ensembles is not None:
            counts = self.ensembles
            block["ensembles"] = [
                {"relation": e.relation, "direction": e.direction,
                 "members": [{"layer": layer, "head": head} for layer, head in e.members],
                 "single": {"layer": e.single[0], "head": e.single[1]},
                 "total": int(counts.total[i]), "correct": int(counts.correct[i]),
                 "single_correct": int(counts.single_correct[i])}
                for i, e in enumerate(counts.ensembles)
            ]
            block["ensemble_trees"] = {
                "decoding": "mst", "sentences": {"scored": counts.sentences, "skipped": dict(counts.skipped)},
                "words": counts.words, **{metric: int(counts.trees[m]) for m, metric in enumerate(METRICS)},
            }
            if counts.has_causal:  # a decoder's trees from its causal ensembles alone
                block["causal_ensemble_trees"] = {
                    "decoding": "mst", "words": counts.words,
                    **{metric: int(counts.causal_trees[m]) for m, metric in enumerate(METRICS)},
                }
        if self.probes:
            block["probes"] = {
                name: {"sentences": {"scored": counts.sentences, "skipped": dict(counts.skipped)},
                       "words": counts.total,
                       **{decoding: {metric: int(counts.heads[m, k]) for m, metric in enumerate(METRICS)}
                          for k, decoding in enumerate(PROBE_DECODINGS)}}
                for name, counts in self.probes.items()
            }
            vectors = (self.selection.get("word_vectors") or {})
            if vectors.get("source") == "file":
                block["word_vectors"] = {"looked_up": int(self.vector_counts[0]), "unknown": int(self.vector_counts[1])}
        return block

    def _causal_summary(self) -> dict:
        """The ``trees.causal`` block of a decoder: every head's counts in the causal reading, per decoding and
        metric, and the in-sample best."""
        single, best = self.single, self.causal_best_heads()
        block = {}
        for d, decoding in enumerate(DECODINGS):
            entry = {metric: single.causal_heads[m, d].tolist() for m, metric in enumerate(METRICS)}
            for metric in METRICS:
                choice = best[decoding][metric]
                entry[f"best_{metric}"] = None if choice is None else {
                    **{key: choice[key] for key in ("layer", "head", "direction", "correct", "ties")},
                    "accuracy": choice["correct"] / single.total,
                }
            block[decoding] = entry
        block["head_first"] = int(single.head_first)
        return block

    def heldout(self, level: float = LEVEL) -> dict:
        """The selection's choices measured on this pass, with ``level`` intervals (when bootstrapped)."""
        single, selection = self.single, self.selection
        boot = self.bootstrap is not None

        def measured(correct: int, total: int, boot_correct=None, boot_total=None) -> dict:
            return _measured(correct, total, boot_correct if boot else None, boot_total, level)

        best_heads = self._heldout_best_heads(selection["best_heads"], measured, level)
        baselines = {
            baseline: {metric: measured(int(single.baselines[m, b]), single.total,
                                        single.boot_baselines[:, m, b].numpy() if boot else None,
                                        single.boot_total.numpy() if boot else None)
                       for m, metric in enumerate(METRICS)}
            for b, baseline in enumerate(BASELINES)
        }
        block = {
            "method": METHOD,
            "level": level,
            "replicates": self.bootstrap.replicates if boot else 0,
            "seed": self.bootstrap.seed if boot else None,
            "select_on": {key: selection.get(key) for key in ("made_on", "model", "source", "created")},
            "best_heads": best_heads,
            "baselines": baselines,
        }
        if self.causal and "causal_best_heads" in selection:  # chosen on DEV as the classic ones
            block["causal_best_heads"] = self._heldout_best_heads(selection["causal_best_heads"], measured, level)
        if self.ensembles is not None:
            block["ensembles"], block["ensemble_trees"] = self._heldout_ensembles(level)
            if self.ensembles.has_causal:
                boot_trees = self.ensembles.boot_causal_trees if self.bootstrap is not None else None
                block["causal_ensemble_trees"] = self._heldout_trees(self.ensembles.causal_trees, boot_trees, level)
        if self.probes:
            block["probes"] = {}
            for name, counts in self.probes.items():
                block["probes"][name] = {
                    decoding: {metric: measured(int(counts.heads[m, k]), counts.total,
                                                counts.boot_heads[:, m, k].numpy() if boot else None,
                                                counts.boot_total.numpy() if boot else None)
                               for m, metric in enumerate(METRICS)}
                    for k, decoding in enumerate(PROBE_DECODINGS)
                }
        return block

    def _heldout_best_heads(self, choices: dict, measured, level: float) -> dict:
        """Per decoding and metric, the head chosen on DEV (``choices``, as :meth:`best_heads` or
        :meth:`causal_best_heads` made them) measured here, with its paired difference to right-branching."""
        single, boot = self.single, self.bootstrap is not None
        best_heads = {}
        for d, decoding in enumerate(DECODINGS):
            best_heads[decoding] = {}
            for m, metric in enumerate(METRICS):
                choice = choices[decoding][metric]
                if choice is None:
                    best_heads[decoding][metric] = None
                    continue
                causal = choice["direction"] == CAUSAL
                counts = single.causal_heads if causal else single.heads
                cell = (m, d) if causal else (m, d, DIRECTIONS.index(choice["direction"]))
                cell += (choice["layer"], choice["head"])
                boot_correct = None
                if boot:
                    boot_counts = single.boot_causal if causal else single.boot_heads
                    boot_correct = boot_counts[(slice(None),) + cell].numpy()
                boot_total = single.boot_total.numpy() if boot else None
                entry = {key: choice[key] for key in ("layer", "head", "direction")}
                entry["dev"] = {"correct": choice["correct"], "total": choice["total"],
                                "accuracy": choice["correct"] / choice["total"] if choice["total"] else None}
                entry.update(measured(int(counts[cell]), single.total, boot_correct, boot_total))
                if boot:
                    right = single.boot_baselines[:, m, BASELINES.index("right_branching")].numpy()
                    difference = paired_difference(boot_correct, right, boot_total, level)
                    value = (int(counts[cell]) - int(single.baselines[m, 0])) / single.total if single.total else None
                    entry["vs_right_branching"] = {
                        "value": value,
                        "interval": None if difference["interval"] is None else list(difference["interval"]),
                        "p_not_better": difference["p_not_better"],
                    }
                best_heads[decoding][metric] = entry
        return best_heads

    def _heldout_ensembles(self, level: float) -> tuple[list, dict]:
        counts, boot = self.ensembles, self.bootstrap is not None
        rows = []
        for i, ensemble in enumerate(counts.ensembles):
            total, correct, single = int(counts.total[i]), int(counts.correct[i]), int(counts.single_correct[i])
            boot_total = counts.boot_total[:, i].numpy() if boot else None
            boot_correct = counts.boot_correct[:, i].numpy() if boot else None
            boot_single = counts.boot_single_correct[:, i].numpy() if boot else None
            interval = accuracy_interval(boot_correct, boot_total, level) if boot else None
            single_interval = accuracy_interval(boot_single, boot_total, level) if boot else None
            difference = paired_difference(boot_correct, boot_single, boot_total, level) if boot else None
            rows.append({
                "relation": ensemble.relation,
                "direction": ensemble.direction,
                "members": [{"layer": layer, "head": head} for layer, head in ensemble.members],
                "dev": {"total": ensemble.total, "accuracy": ensemble.accuracy if ensemble.total else None,
                        "single_accuracy": ensemble.single_correct / ensemble.total if ensemble.total else None},
                "total": total,
                "correct": correct,
                "accuracy": correct / total if total else None,
                "interval": None if interval is None else list(interval),
                "single": {"layer": ensemble.single[0], "head": ensemble.single[1], "correct": single,
                           "accuracy": single / total if total else None,
                           "interval": None if single_interval is None else list(single_interval)},
                "difference": {
                    "value": (correct - single) / total if total else None,
                    "interval": None if not difference or difference["interval"] is None else list(difference["interval"]),
                    "p_not_better": None if not difference else difference["p_not_better"],
                },
            })
        return rows, self._heldout_trees(counts.trees, counts.boot_trees if boot else None, level)

    def _heldout_trees(self, trees: torch.Tensor, boot_trees: torch.Tensor | None, level: float) -> dict:
        """UAS and UUAS of combined ensemble trees: ``trees`` [metric] counts over the ensembles' scored words,
        with intervals from ``boot_trees`` [replicate, metric] when bootstrapped."""
        counts, boot = self.ensembles, self.bootstrap is not None
        measured = {}
        for m, metric in enumerate(METRICS):
            interval = accuracy_interval(boot_trees[:, m].numpy(), counts.boot_words.numpy(), level) if boot else None
            measured[metric] = {"correct": int(trees[m]), "total": counts.words,
                                "accuracy": int(trees[m]) / counts.words if counts.words else None,
                                "interval": None if interval is None else list(interval)}
        return measured


def ensembles_of(selection: dict | None) -> list[Ensemble]:
    """The :class:`Ensemble` objects a selection records (in its order)."""
    return [
        Ensemble(entry["relation"], entry["direction"],
                 tuple((member["layer"], member["head"]) for member in entry["members"]),
                 entry["correct"], (entry["single"]["layer"], entry["single"]["head"]), entry["single_correct"],
                 entry["total"])
        for entry in (selection or {}).get("ensembles") or []
    ]
