"""Disabling heads (Kovaleva et al. 2019, section 4.5) as an accumulator of the engine.

A *condition* is a set of heads made uniform (probing.model.interventions); the
first condition is always the intact model. For every batch of the pass,
each condition's metric is measured on the batch's units, so ``--each-head``
on a long input is one pass that shards, runs under torchrun and resumes
after a kill like every other. Conditions are evaluated many at a time: the
batch is repeated once per condition, each copy with its own heads
disabled, in one forward pass (as many copies as fit a memory budget), and
the layers below a group's first disabled layer are not recomputed: they
return what the intact model's pass recorded (probing.model.prefix).

The metrics (``--metric``) are in probing.analyses.ablation.metrics, the conditions in
probing.analyses.ablation.conditions, the tables in probing.analyses.ablation.tables.

Every value has Poisson-bootstrap replicates over units, seeded by unit
index, so a condition's change from the intact model has a paired interval;
minimal pairs are resampled within paradigms as ``probing pairs`` does.

>>> from probing.analyses.ablation.conditions import each_head
>>> from probing.analyses.ablation.metrics import NextTokenLoss
>>> len(AblationAccumulator(NextTokenLoss(), each_head(2, 2), 2, 2, bootstrap=10).conditions)
5
"""

from __future__ import annotations

import numpy as np
import torch

from probing.analyses.ablation.conditions import INTACT, Condition
from probing.analyses.ablation.metrics import (
    LOGIT_CELLS,
    METRICS,
    Metric,
    stacked_inputs,
)
from probing.analyses.probe.counts import OFFSETS
from probing.analyses.probe.pairs import collect_pairs
from probing.engine.accumulator import Accumulator, BatchView
from probing.engine.batching import Batch
from probing.errors import ProbingError
from probing.model.interventions import uniform_heads
from probing.stats.intervals import finite_interval

CONDITION_CELLS = 1 << 19
"""Budget of (copies x batch x tokens^2) attention cells per forward pass of stacked conditions."""

CPU_CONDITION_CELLS = 1 << 16
"""The budget on a CPU, where stacking buys no parallelism and a stack's activations outgrow the caches:
all-MiniLM-L6-v2's probe grid on 20 sentences took 15% longer stacked to :data:`CONDITION_CELLS` than one
condition a pass (benchmarks/RESULTS.md, "Affordable heavy runs")."""

SHARE_PREFIX = True
"""Reuse the intact model's layers below each condition's first disabled layer (probing.model.prefix)."""


class AblationAccumulator(Accumulator):
    """Each condition's metric over the pass, with bootstrap replicates (``update`` / ``merge`` / ``result``).

    State for ratio metrics: ``numerator``, ``denominator`` float64 [condition, part] and
    ``boot_numerator``, ``boot_denominator`` [replicate, condition, part]; for the probe
    metric, the probe's counts of every condition (``c{i}.NAME``).
    """

    analysis = "ablation"
    needs_attention = False
    identity_options = dict.fromkeys(("conditions", "heads"),
                                     "--heads, --each-head, --each-layer, --chosen, --k, --random and --select-on")

    def __init__(self, metric: Metric, conditions: list[Condition], num_layers: int, num_heads: int, *,
                 bootstrap: int = 1000, seed: int = 0, causal: bool = False, offsets=OFFSETS,
                 pool_from: str = "mean"):
        super().__init__()
        if bootstrap < 1:
            raise ProbingError("needs bootstrap replicates for its intervals (1 or more)", source="--bootstrap")
        if conditions[0] != INTACT:
            conditions = [INTACT, *conditions]
        self.metric, self.conditions = metric, conditions
        self.shape, self.bootstrap, self.seed, self.causal, self.offsets = (num_layers, num_heads), bootstrap, seed, causal, tuple(offsets)
        self.pool_from = pool_from
        self._prefix, self._prefix_of = None, None  # probing.model.prefix's reusable layers, and the model they are of
        masks = torch.zeros(len(conditions), num_layers, num_heads, dtype=torch.bool)
        for index, condition in enumerate(conditions):
            for layer, head in condition.heads:
                masks[index, layer, head] = True
        self.masks = masks  # [condition, layer, head]
        self.state_tensors, self.counts = metric.state(len(conditions), num_layers, num_heads, bootstrap=bootstrap,
                                                       seed=seed, causal=causal, offsets=self.offsets)

    def identity(self) -> dict:
        # the heads too: a --chosen run's labels (det@4:chosen) name sets whose heads come from --select-on
        return {"analysis": self.analysis, "metric": self.metric.name, "parts": self.metric.parts(),
                "conditions": [condition.label for condition in self.conditions],
                "heads": [[list(head) for head in condition.heads] for condition in self.conditions],
                "bootstrap": self.bootstrap, "seed": self.seed, "shape": list(self.shape)}

    def fresh(self) -> "AblationAccumulator":
        return AblationAccumulator(self.metric, self.conditions, *self.shape, bootstrap=self.bootstrap, seed=self.seed,
                                   causal=self.causal, offsets=self.offsets, pool_from=self.pool_from)

    @classmethod
    def for_result(cls, result: dict) -> "AblationAccumulator":
        config = result["config"]
        metric = METRICS[config["metric"]](**config.get("metric_options", {}))
        conditions = [Condition(c["label"], tuple(tuple(h) for h in c["heads"])) for c in result["conditions"]]
        return cls(metric, conditions, result["model"]["num_layers"], result["model"]["num_heads"],
                   bootstrap=config["bootstrap"]["replicates"], seed=config["bootstrap"]["seed"],
                   causal=result["model"]["is_causal"], offsets=config.get("offsets", OFFSETS),
                   pool_from=config.get("pooling", {}).get("from", "mean"))

    def group_size(self, batch: Batch, device: str = "cpu") -> int:
        """How many conditions one forward pass stacks, within the attention and logit budgets (``device``'s)."""
        cells = len(batch) * batch.input_ids.shape[1] ** 2
        budget = min(CONDITION_CELLS, CPU_CONDITION_CELLS) if str(device).startswith("cpu") else CONDITION_CELLS
        copies = max(1, budget // max(cells, 1))
        if self.metric.reads_logits:
            vocabulary = self._vocabulary
            copies = min(copies, max(1, LOGIT_CELLS // max(1, len(batch) * batch.input_ids.shape[1] * vocabulary)))
        return copies

    def update(self, view: BatchView) -> None:
        loaded, batch = view.loaded, view.batch
        self._vocabulary = getattr(loaded.model.config, "vocab_size", 1) or 1
        copies = self.group_size(batch, loaded.device)
        probe = self.metric.reads_predictions
        prefix = self._shared_prefix(loaded)
        if probe and loaded.attention_tap is None:  # the model's own attention tuple: every layer is computed
            prefix = None
        if prefix is None:
            for start in range(0, len(self.conditions), copies):
                group = list(range(start, min(start + copies, len(self.conditions))))
                self._probe(view, group) if probe else self._measure(loaded, batch, group)
            return
        with prefix.recording():  # the intact model, whose layer outputs (and predictions) the others reuse
            intact = self._probe(view, [0]) if probe else self._measure(loaded, batch, [0])
        # Grouped by their lowest disabled layer: each group reruns only the layers from there up.
        by_layer: dict[int, list[int]] = {}
        for condition in range(1, len(self.conditions)):
            by_layer.setdefault(self._first_layer(condition), []).append(condition)
        for first_layer, conditions in sorted(by_layer.items()):
            for start in range(0, len(conditions), copies):
                group = conditions[start : start + copies]
                with prefix.reusing(first_layer, copies=len(group)):
                    if probe:  # the layers below have the intact model's attention, so its predictions
                        self._probe(view, group, first_layer, intact[:, :, :first_layer])
                    else:
                        self._measure(loaded, batch, group)

    def _mask(self, group, batch: Batch) -> torch.Tensor:
        """bool [copies * batch, layer, head]: each condition's heads, one copy of the batch each."""
        return self.masks[list(group)].repeat_interleave(len(batch), dim=0)

    def _first_layer(self, condition: int) -> int:
        """The condition's lowest disabled layer; 0 (a whole pass) when it disables nothing, as a matched random
        set does when the chosen set holds every head of its layers."""
        layers = self.masks[condition].any(dim=1).nonzero()
        return int(layers[0]) if len(layers) else 0

    def _shared_prefix(self, loaded):
        """probing.model.prefix's reusable layers of this model (found once per accumulator), or None."""
        from probing.model.prefix import SharedPrefix

        if not SHARE_PREFIX:
            return None
        if self._prefix_of is not loaded:
            self._prefix, self._prefix_of = SharedPrefix.find(loaded), loaded
        return self._prefix

    def _measure(self, loaded, batch: Batch, group: list[int]) -> None:
        measured = self.metric.measure(loaded, batch, len(group), self._mask(group, batch))
        self.metric.add(self.state_tensors, batch, group, measured, bootstrap=self.bootstrap, seed=self.seed)

    def _probe(self, view: BatchView, group: list[int], first_layer: int = 0,
               below: torch.Tensor | None = None) -> torch.Tensor:
        """Count ``group``'s conditions on the batch (copies of it stacked in one pass); the predictions
        [copies * batch, direction, layer, head, word]. ``first_layer``: the lowest layer the pass computes (those
        below reused, probing.model.prefix), whose predictions ``below`` [batch, direction, layer, head, word] gives."""
        from probing.engine.pooling import WordPooling
        from probing.engine.predictions import HeadPrediction
        from probing.model.extraction import each_layer

        loaded, batch = view.loaded, view.batch
        copies = len(group)
        input_ids, attention_mask = stacked_inputs(batch, copies)
        # Each layer pooled and predicted as it comes (one layer's token attention held at a time), the
        # batch's token-to-word map and prediction masks made once for all of them.
        pooling = WordPooling(batch.word_of_token.repeat(copies, 1), self.pool_from)
        prediction = HeadPrediction(batch.num_words.repeat(copies))
        layers = [below.repeat(copies, 1, 1, 1, 1)] if first_layer else []  # [copies * batch, dir, layer, H, word]
        with uniform_heads(loaded.base, self._mask(group, batch)) as intervention:
            each_layer(loaded, input_ids, attention_mask,
                       lambda layer, weights: layers.append(prediction(pooling(weights[:, None]))),
                       first_layer=first_layer)
        intervention.verify()
        predictions = torch.cat(layers, dim=2)  # [copies * batch, direction, layer, head, word]
        pairs = collect_pairs(batch.sentences, self.metric.relations)
        for offset, condition in enumerate(group):
            rows = slice(offset * len(batch), (offset + 1) * len(batch))
            self.counts[condition].update(predictions[rows], pairs, sentence_indices=batch.indices,
                                          num_words=batch.num_words.tolist())
            # state_tensors holds the replicate sums themselves, which the engine reads without asking the
            # counts: weigh this batch's sentences now rather than a chunk at a time
            self.counts[condition].replicates.flush()
        return predictions

    def encoded_state(self) -> dict:
        """The state as a result file keeps it: the probe metric's conditions relative to the intact model
        (probing.analyses.ablation.scores.relative_state), which its byte planes compress to a fraction."""
        from probing.analyses.ablation.scores import relative_state
        from probing.results.schema.arrays import encode_array

        state = {name: tensor.numpy() for name, tensor in self.state().items()}
        return {name: encode_array(array) for name, array in relative_state(state).items()}

    @classmethod
    def from_result(cls, result: dict) -> "AblationAccumulator":
        from probing.analyses.ablation.scores import decoded_state

        return cls.for_result(result).load_state({name: torch.from_numpy(np.array(array))
                                                  for name, array in decoded_state(result).items()})

    def load_state(self, state: dict) -> "AblationAccumulator":
        from probing.analyses.ablation.scores import SCORES_ONLY

        if set(state) == set(SCORES_ONLY):
            raise ProbingError("keeps each condition's scores only (ablate --scores-only), not the sums they come "
                               "from: it cannot be merged or resumed", source="the ablation result")
        super().load_state(state)
        for counts in self.counts or ():  # the probe's counters are sums of the total tensors' pairs
            counts.sentences = counts.words = 0
        return self

    # -- results -------------------------------------------------------------------------

    def scores(self) -> tuple[np.ndarray, np.ndarray, list[list[str | None]]]:
        """value [condition, part], replicates [replicate, condition, part], detail [condition][part]."""
        from probing.analyses.ablation.scores import condition_scores

        state = {name: tensor.numpy() for name, tensor in self.state_tensors.items()}
        values, replicates = condition_scores(self.metric.key, state, len(self.conditions),
                                              layout=getattr(self.metric, "layout", None), bootstrap=self.bootstrap,
                                              seed=self.seed)
        return values, replicates, self.metric.details(self.counts, len(self.conditions))

    def result(self) -> dict:
        values, replicates, details = self.scores()
        parts = self.metric.parts()
        intact = {part: {"value": _number(values[0, p]), "interval": finite_interval(replicates[:, 0, p]),
                         "detail": details[0][p]} for p, part in enumerate(parts)}
        conditions = []
        for index, condition in enumerate(self.conditions[1:], start=1):
            changes = {}
            for p, part in enumerate(parts):
                change = values[index, p] - values[0, p]
                interval = finite_interval(replicates[:, index, p] - replicates[:, 0, p])
                better = change if self.metric.higher_is_better else -change
                helps = interval is not None and (interval[0] > 0 if self.metric.higher_is_better else interval[1] < 0)
                hurts = interval is not None and (interval[1] < 0 if self.metric.higher_is_better else interval[0] > 0)
                changes[part] = {
                    "value": _number(values[index, p]), "change": _number(change), "interval": interval,
                    "improvement": _number(better), "verdict": "helps" if helps else "hurts" if hurts else "no clear change",
                    "detail": details[index][p],
                }
            conditions.append({"label": condition.label, "heads": [list(head) for head in condition.heads], "parts": changes})
        return {
            "metric": {"name": self.metric.name, "description": self.metric.description,
                       "higher_is_better": self.metric.higher_is_better, "parts": parts},
            "intervention": "attention after the softmax replaced by the uniform distribution over the allowed keys",
            "baseline": intact,
            "conditions": [{"label": INTACT.label, "heads": [], "parts": {}}] + conditions,
            "state": self.encoded_state(),
        }

    @staticmethod
    def finish_merge(merged: dict, parts: list[dict]) -> dict:
        """A ``--chosen`` run's ``versus`` block recomputed from the merged conditions and state: each shard's block
        measured its own units, and the merge starts from the first shard's."""
        if "versus" not in merged:
            return merged
        from probing.analyses.ablation.versus import versus_block

        return {**merged, "versus": versus_block(merged)}


def _number(value) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None
