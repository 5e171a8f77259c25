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

Metrics (``--metric``):

- ``mlm``: masked-LM loss per masked token, on seeded masks (probing.model.masking);
- ``lm``: a causal LM's next-token negative log-likelihood per token;
- ``probe``: the best head's accuracy per relation (Clark et al.'s probe);
- ``classification``: accuracy of a sequence classifier on a labelled CSV;
- ``minimal-pairs``: a causal LM's BLiMP accuracy, overall, per field and per
  phenomenon, its units the pairs (probing.analyses.ablation.minimal_pairs).

Every value has Poisson-bootstrap replicates over units, seeded by unit
index, so a condition's change from the intact model has a paired interval;
minimal pairs are resampled within paradigms as ``probing pairs`` does.

>>> conditions = each_head(2, 2)
>>> [condition.label for condition in conditions]
['none', '1-1', '1-2', '2-1', '2-2']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from probing.analyses.probe.counts import OFFSETS, ProbeCounts
from probing.analyses.probe.pairs import collect_pairs
from probing.engine.accumulator import Accumulator, BatchView
from probing.engine.batching import Batch
from probing.errors import ProbingError
from probing.model.interventions import uniform_heads
from probing.model.masking import IGNORED, MASK_RATE, mask_batch
from probing.naming import DIRECTIONS, head_name, interval_text, parse_head_names
from probing.registry import Registry
from probing.stats.bootstrap import BootstrapSpec, poisson_weights
from probing.stats.intervals import finite_interval
from probing.stats.selection import best_cell

CONDITION_CELLS = 1 << 19
"""Budget of (copies x batch x tokens^2) attention cells per forward pass of stacked conditions."""

CPU_CONDITION_CELLS = 1 << 16
"""The budget on a CPU, where stacking buys no parallelism and a stack's activations outgrow the caches:
all-MiniLM-L6-v2's probe grid on 20 sentences took 15% longer stacked to :data:`CONDITION_CELLS` than one
condition a pass (benchmarks/RESULTS.md, "Affordable heavy runs")."""

LOGIT_CELLS = 1 << 26
"""Budget of (copies x batch x tokens x vocabulary) logits per forward pass (256 MiB of float32)."""

SHARE_PREFIX = True
"""Reuse the intact model's layers below each condition's first disabled layer (probing.model.prefix)."""


@dataclass(frozen=True)
class Condition:
    """A set of heads disabled together; ``label`` names them (from 1), "none" is the intact model."""

    label: str
    heads: tuple[tuple[int, int], ...]


INTACT = Condition("none", ())


def each_head(num_layers: int, num_heads: int) -> list[Condition]:
    """The intact model, then one condition per head."""
    return [INTACT] + [Condition(head_name(layer, head), ((layer, head),))
                       for layer in range(num_layers) for head in range(num_heads)]


def each_layer(num_layers: int, num_heads: int) -> list[Condition]:
    """The intact model, then one condition per layer: all its heads at once."""
    return [INTACT] + [Condition(f"layer {layer + 1}", tuple((layer, head) for head in range(num_heads)))
                       for layer in range(num_layers)]


def chosen_heads(texts: list[str], num_layers: int, num_heads: int) -> list[Condition]:
    """The intact model, then one condition per ``--heads 3-5,7-1`` (counted from 1)."""
    conditions = [INTACT]
    for text in texts:
        heads = tuple(parse_head_names(text, num_layers=num_layers, num_heads=num_heads))
        conditions.append(Condition(",".join(head_name(*head) for head in sorted(heads)), tuple(sorted(heads))))
    return conditions


# ---------------------------------------------------------------- metrics


class Metric:
    """What is measured under each condition. ``head``: the task head the model is loaded with."""

    name = ""
    head: str | None = None
    higher_is_better = True
    description = ""
    needs_trees = False

    def parts(self) -> list[str]:
        return [self.name]

    def setup(self, loaded) -> None:
        """Checks of the loaded model, once, before the pass."""


METRICS: Registry[type[Metric]] = Registry("metric", option="--metric")


class RatioMetric(Metric):
    """A metric that is sum(numerator) / sum(denominator) over units (a loss per token, an accuracy)."""

    def measure(self, loaded, batch: Batch, copies: int, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """numerator and denominator float64 [copy, unit, part] for ``copies`` stacked copies of ``batch``."""
        raise NotImplementedError


def _stacked(batch: Batch, copies: int) -> tuple[torch.Tensor, torch.Tensor]:
    """input ids and attention mask repeated ``copies`` times, copy-major: [copies * batch, tok]."""
    return batch.input_ids.repeat(copies, 1), batch.attention_mask.repeat(copies, 1)


@METRICS.register("mlm")
class MaskedLMLoss(RatioMetric):
    """Masked-LM loss per masked token (lower is better) on seeded masks of each unit's tokens."""

    name, head, higher_is_better = "loss", "masked_lm", False
    description = "masked-LM loss per masked token"

    def __init__(self, seed: int = 0, mask_rate: float = MASK_RATE, **_):
        self.seed, self.mask_rate = seed, mask_rate

    def setup(self, loaded) -> None:
        if loaded.tokenizer.mask_token_id is None:
            raise ProbingError(f"the tokenizer of {loaded.name} has no mask token", source="--metric mlm")

    def measure(self, loaded, batch, copies, mask):
        masked = mask_batch(batch.input_ids, batch.attention_mask, batch.is_special, batch.indices,
                            mask_token_id=loaded.tokenizer.mask_token_id, seed=self.seed, rate=self.mask_rate)
        device = loaded.device
        with uniform_heads(loaded.model, mask) as intervention, torch.inference_mode():
            logits = loaded.model(input_ids=masked.input_ids.repeat(copies, 1).to(device),
                                  attention_mask=batch.attention_mask.repeat(copies, 1).to(device)).logits
        intervention.verify()
        labels = masked.labels.repeat(copies, 1).to(logits.device)  # [copies * batch, tok]
        loss = torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), labels, reduction="none",
                                                 ignore_index=IGNORED)  # [copies * batch, tok]
        numerator = loss.sum(dim=1).double().view(copies, len(batch), 1).cpu()
        denominator = (labels != IGNORED).sum(dim=1).double().view(copies, len(batch), 1).cpu()
        return numerator, denominator


def lm_head_logits(loaded, hidden: torch.Tensor) -> torch.Tensor:
    """The LM head on hidden states [row, token, hidden]: logits [row, token, vocab]."""
    return loaded.model.get_output_embeddings()(hidden)


def check_causal_lm_head(loaded, option: str, otherwise: str) -> None:
    """Refuse, in one line naming ``option``, a model that is not a causal LM or whose logits are more than
    its LM head on the last hidden state (what the metrics compute in row chunks)."""
    if not loaded.is_causal:
        raise ProbingError(f"{loaded.name} is not a causal LM; {otherwise}", source=option)
    ids = torch.tensor([[loaded.prepend_token_id or 0, 5, 6, 7]])
    with torch.inference_mode():
        full = loaded.model(input_ids=ids.to(loaded.device)).logits.float()
        mine = lm_head_logits(loaded, loaded.base(input_ids=ids.to(loaded.device)).last_hidden_state).float()
    if not torch.allclose(full, mine, rtol=1e-4, atol=1e-4):
        raise ProbingError(f"{loaded.name} transforms its logits beyond its LM head (soft-capping or scaling), "
                           f"which {option} does not reproduce", source=option)


@METRICS.register("lm")
class NextTokenLoss(RatioMetric):
    """A causal LM's negative log-likelihood per predicted token (lower is better).

    Every real, non-special token after the first is predicted from the tokens
    before it; the logits are the LM head applied to the last hidden state, in
    row chunks, so the vocabulary never multiplies the whole stacked batch.
    """

    name, head, higher_is_better = "loss", "causal_lm", False
    description = "next-token loss per token (nats)"

    def __init__(self, **_):
        pass

    def setup(self, loaded) -> None:
        check_causal_lm_head(loaded, "--metric lm", otherwise="use --metric mlm")

    @staticmethod
    def _logits(loaded, hidden: torch.Tensor) -> torch.Tensor:
        return lm_head_logits(loaded, hidden)

    def measure(self, loaded, batch, copies, mask):
        input_ids, attention_mask = _stacked(batch, copies)
        with uniform_heads(loaded.model, mask) as intervention, torch.inference_mode():
            hidden = loaded.base(input_ids=input_ids.to(loaded.device),
                                 attention_mask=attention_mask.to(loaded.device)).last_hidden_state
            targets = input_ids[:, 1:].to(hidden.device)  # [rows, tok - 1]: token t + 1 predicted at t
            scored = (attention_mask[:, 1:].bool() & ~batch.is_special[:, 1:].repeat(copies, 1)).to(hidden.device)
            # The LM head runs on the scored positions only (no padding, no special token), in chunks
            # of rows, and the loss is logsumexp - the target's logit: no log-softmax over the vocabulary
            # is written out, which costs as much again as reading the logits once.
            rows, steps = scored.nonzero(as_tuple=True)
            states, wanted = hidden[rows, steps], targets[rows, steps]  # [scored, hidden], [scored]
            vocabulary = loaded.model.get_output_embeddings().weight.shape[0]
            chunk = max(1, LOGIT_CELLS // vocabulary)
            losses = []
            for start in range(0, len(wanted), chunk):
                logits = self._logits(loaded, states[start : start + chunk]).float()  # [chunk, vocab]
                picked = logits.gather(1, wanted[start : start + chunk, None])[:, 0]
                losses.append(torch.logsumexp(logits, dim=1) - picked)
            loss = hidden.new_zeros(scored.shape, dtype=torch.float32)  # [rows, tok - 1]
            loss[rows, steps] = torch.cat(losses) if losses else loss.new_zeros(0)
        intervention.verify()
        numerator = loss.sum(dim=1).double().view(copies, len(batch), 1).cpu()
        denominator = scored.sum(dim=1).double().view(copies, len(batch), 1).cpu()
        return numerator, denominator


@METRICS.register("classification")
class ClassificationAccuracy(RatioMetric):
    """Accuracy of a sequence-classification checkpoint on a labelled CSV (``--labels``)."""

    name, head, higher_is_better = "accuracy", "sequence_classification", True
    description = "accuracy on the labelled file"

    def __init__(self, **_):
        self.label_ids: dict[str, int] = {}

    def setup(self, loaded) -> None:
        config = loaded.model.config
        self.label_ids = {str(name): int(index) for name, index in (getattr(config, "label2id", None) or {}).items()}
        self.num_labels = int(getattr(config, "num_labels", len(self.label_ids)))

    def label_id(self, unit) -> int:
        label = (unit.label or "").strip()
        if label in self.label_ids:
            return self.label_ids[label]
        if label.lstrip("-").isdigit() and 0 <= int(label) < self.num_labels:
            return int(label)
        raise ProbingError(f"label {label!r} of row {unit.index + 2} is neither a label of the model "
                           f"({', '.join(self.label_ids)}) nor an id below {self.num_labels}", source="--labels")

    def measure(self, loaded, batch, copies, mask):
        input_ids, attention_mask = _stacked(batch, copies)
        with uniform_heads(loaded.model, mask) as intervention, torch.inference_mode():
            logits = loaded.model(input_ids=input_ids.to(loaded.device),
                                  attention_mask=attention_mask.to(loaded.device)).logits  # [rows, label]
        intervention.verify()
        gold = torch.tensor([self.label_id(unit) for unit in batch.units]).repeat(copies)
        correct = (logits.argmax(dim=-1).cpu() == gold).double().view(copies, len(batch), 1)
        return correct, torch.ones_like(correct)


@METRICS.register("minimal-pairs")
class MinimalPairAccuracy(Metric):
    """BLiMP accuracy (probing.analyses.ablation.minimal_pairs): overall, per field and per phenomenon.

    ``layout``: the paradigms read, in order, each {uid, field, term, pairs} (what a result file records).
    """

    name, head, higher_is_better = "accuracy", "causal_lm", True
    description = "BLiMP minimal-pair accuracy (overall: the mean of the paradigm accuracies)"

    def __init__(self, layout=(), **_):
        self.layout = [dict(entry) for entry in layout]

    @classmethod
    def of_pairs(cls, pairs) -> "MinimalPairAccuracy":
        from probing.analyses.ablation.pair_parts import layout_of

        return cls(layout_of(pairs))

    def parts(self) -> list[str]:
        from probing.analyses.ablation.pair_parts import part_names

        return part_names(self.layout)

    def setup(self, loaded) -> None:
        check_causal_lm_head(loaded, "--metric minimal-pairs",
                             otherwise="minimal pairs need a trained causal LM head (BLiMP scores sentences)")

    def measure(self, loaded, batch, copies, mask) -> torch.Tensor:
        """right or not, bool [copy, pair], for ``copies`` stacked copies of a PairBatch."""
        from probing.analyses.ablation.minimal_pairs import sentence_scores

        with uniform_heads(loaded.model, mask) as intervention, torch.inference_mode():
            scores = sentence_scores(loaded, batch, copies, LOGIT_CELLS)  # [copy, sentence]
        intervention.verify()
        return scores[:, 0::2] > scores[:, 1::2]  # good before bad; a tie is wrong


@METRICS.register("probe")
class ProbeAccuracy(Metric):
    """The best head's accuracy per relation on a treebank (the probe, under each condition)."""

    name, head, higher_is_better, needs_trees = "probe", None, True, True
    description = "best head's accuracy per relation"

    def __init__(self, relations=("dobj", "det", "pobj", "poss", "all"), **_):
        self.relations = tuple(relations)

    def parts(self) -> list[str]:
        return list(self.relations)


# ---------------------------------------------------------------- the accumulator


class AblationAccumulator(Accumulator):
    """Each condition's metric over the pass, with bootstrap replicates (``update`` / ``merge`` / ``result``).

    State for ratio metrics: ``numerator``, ``denominator`` float64 [condition, part] and
    ``boot_numerator``, ``boot_denominator`` [replicate, condition, part]; for the probe
    metric, the probe's counts of every condition (``c{i}.NAME``).
    """

    analysis = "ablation"
    needs_attention = False

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
        if isinstance(metric, ProbeAccuracy):
            self.counts = [ProbeCounts(metric.relations, num_layers, num_heads, offsets=self.offsets,
                                       bootstrap=BootstrapSpec(bootstrap, seed), causal=causal) for _ in conditions]
            self.state_tensors = {f"c{i}.{name}": getattr(counts, name)
                                  for i, counts in enumerate(self.counts) for name in counts.tensor_names()}
        elif isinstance(metric, MinimalPairAccuracy):  # one bit per (condition, pair): right or not
            pairs = sum(entry["pairs"] for entry in metric.layout)
            self.state_tensors = {"right": torch.zeros(len(conditions), pairs, dtype=torch.int64)}
        else:
            parts = len(metric.parts())
            zeros = lambda *shape: torch.zeros(shape, dtype=torch.float64)  # noqa: E731
            self.state_tensors = {
                "numerator": zeros(len(conditions), parts), "denominator": zeros(len(conditions), parts),
                "boot_numerator": zeros(bootstrap, len(conditions), parts),
                "boot_denominator": zeros(bootstrap, len(conditions), parts),
            }

    def identity(self) -> dict:
        return {"analysis": self.analysis, "metric": self.metric.name, "parts": self.metric.parts(),
                "conditions": [condition.label for condition in self.conditions], "bootstrap": self.bootstrap,
                "seed": self.seed, "shape": list(self.shape)}

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
        if isinstance(self.metric, MaskedLMLoss):
            vocabulary = self._vocabulary
            copies = min(copies, max(1, LOGIT_CELLS // max(1, len(batch) * batch.input_ids.shape[1] * vocabulary)))
        return copies

    def update(self, view: BatchView) -> None:
        loaded, batch = view.loaded, view.batch
        self._vocabulary = getattr(loaded.model.config, "vocab_size", 1) or 1
        copies = self.group_size(batch, loaded.device)
        probe = isinstance(self.metric, ProbeAccuracy)
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
        if isinstance(self.metric, MinimalPairAccuracy):
            right = self.metric.measure(loaded, batch, len(group), self._mask(group, batch))  # [copy, pair]
            self.state_tensors["right"][torch.tensor(group)[:, None], torch.tensor(batch.rows)] = right.long()
            return
        numerator, denominator = self.metric.measure(loaded, batch, len(group), self._mask(group, batch))
        self._add(batch, group, numerator, denominator)

    def _add(self, batch: Batch, group: list[int], numerator: torch.Tensor, denominator: torch.Tensor) -> None:
        """numerator, denominator: [copy, unit, part], the copies in the order of ``group`` (condition indices)."""
        weights = poisson_weights(batch.indices, replicates=self.bootstrap, seed=self.seed)  # [replicate, unit]
        state, rows = self.state_tensors, torch.tensor(group)
        state["numerator"][rows] += numerator.sum(dim=1)
        state["denominator"][rows] += denominator.sum(dim=1)
        state["boot_numerator"][:, rows] += torch.einsum("ru,cup->rcp", weights, numerator)
        state["boot_denominator"][:, rows] += torch.einsum("ru,cup->rcp", weights, denominator)

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
        input_ids, attention_mask = _stacked(batch, copies)
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

    def load_state(self, state: dict) -> "AblationAccumulator":
        from probing.analyses.ablation.scores import SCORES_ONLY

        if set(state) == set(SCORES_ONLY):
            raise ProbingError("keeps each condition's scores only (ablate --scores-only), not the sums they come "
                               "from: it cannot be merged or resumed", source="the ablation result")
        super().load_state(state)
        if isinstance(self.metric, ProbeAccuracy):
            for counts in self.counts:  # the counters are sums of the total tensors' pairs
                counts.sentences = counts.words = 0
        return self

    # -- results -------------------------------------------------------------------------

    def scores(self) -> tuple[np.ndarray, np.ndarray, list[list[str | None]]]:
        """value [condition, part], replicates [replicate, condition, part], detail [condition][part]."""
        from probing.analyses.ablation.scores import condition_scores

        metric = next(name for name in METRICS.names() if isinstance(self.metric, METRICS[name]))
        state = {name: tensor.numpy() for name, tensor in self.state_tensors.items()}
        values, replicates = condition_scores(metric, state, len(self.conditions), layout=getattr(self.metric, "layout", None),
                                              bootstrap=self.bootstrap, seed=self.seed)
        if isinstance(self.metric, ProbeAccuracy):  # the best head of each relation (the one tie rule), by name
            details = []
            for counts in self.counts:
                total = counts.total.numpy()
                best = [best_cell(counts.heads[r].numpy()) for r in range(len(total))]
                details.append([head_name(layer, head, DIRECTIONS[direction]) if total[r] else None
                                for r, (direction, layer, head) in enumerate(best)])
            return values, replicates, details
        return values, replicates, [[None] * values.shape[1] for _ in self.conditions]

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


def _number(value) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None


def ranked(result: dict, part: str) -> list[dict]:
    """The conditions for one part, those whose removal helps most first (the intact model left out)."""
    rows = [c for c in result["conditions"][1:] if c["parts"][part]["improvement"] is not None]
    return sorted(rows, key=lambda condition: -condition["parts"][part]["improvement"])


def ablation_tables(result: dict, top: int | None = None) -> str:
    """One table per part (the loss, or each relation), sorted so that helpful removals come first."""
    from tabulate import tabulate

    scale, unit = (100.0, " %") if result["metric"]["higher_is_better"] else (1.0, "")
    # a change's interval: signed percentage points, or a loss's signed change to four decimals
    interval_scale, decimals = ("points", None) if scale == 100.0 else ("nats", 4)
    blocks = []
    for part, base in result["baseline"].items():
        rows = ranked(result, part)
        shown = rows if top is None else rows[:top]
        table = []
        for condition in shown:
            entry = condition["parts"][part]
            table.append(
                [condition["label"], _fmt(entry["value"], scale), _fmt(entry["change"], scale, signed=True),
                 interval_text(entry["interval"], interval_scale, decimals=decimals),
                 entry["verdict"]] + ([entry["detail"] or "-"] if base["detail"] else [])
            )
        headers = ["disabled (layer-head)", f"{part}{unit}", "change", "95% interval", "removal"]
        if base["detail"]:
            headers.append("best head after")
        title = f"{part}: {_fmt(base['value'], scale)}{unit} with every head"
        if base["detail"]:
            title += f" (best head {base['detail']})"
        more = f"\n({len(rows) - len(shown)} more conditions in the JSON)" if len(shown) < len(rows) else ""
        blocks.append(title + "\n" + tabulate(table, headers=headers, tablefmt="simple", disable_numparse=True) + more)
    return "\n\n".join(blocks)


def _fmt(value: float | None, scale: float, signed: bool = False) -> str:
    if value is None:
        return "-"
    digits = 1 if scale == 100.0 else 4
    return f"{scale * value:{'+' if signed else ''}.{digits}f}"
