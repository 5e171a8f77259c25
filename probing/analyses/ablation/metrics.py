"""What ``probing ablate`` measures under each condition (``--metric``), a batch's stacked copies at a time:

- ``mlm``: masked-LM loss per masked token, on seeded masks (probing.model.masking);
- ``lm``: a causal LM's next-token negative log-likelihood per token;
- ``probe``: the best head's accuracy per relation (Clark et al.'s probe);
- ``classification``: accuracy of a sequence classifier on a labelled CSV;
- ``minimal-pairs``: a causal LM's BLiMP accuracy, overall, per field and per
  phenomenon, its units the pairs (probing.analyses.ablation.minimal_pairs).
"""

from __future__ import annotations

import torch

from probing.engine.batching import Batch
from probing.errors import ProbingError
from probing.model.interventions import uniform_heads
from probing.model.masking import IGNORED, MASK_RATE, mask_batch
from probing.model.token_scores import exact_head, token_log_probs
from probing.registry import Registry

LOGIT_CELLS = 1 << 26
"""Budget of (copies x batch x tokens x vocabulary) logits per forward pass (256 MiB of float32)."""


class Metric:
    """What is measured under each condition, and how its sums are kept: the ablation's accumulator asks the metric
    (:meth:`state`, :meth:`add`, :meth:`details`) and never which metric it is. ``head``: the task head the model
    is loaded with; ``key``: its name on the command line (``--metric``)."""

    name = ""
    key = ""
    head: str | None = None
    higher_is_better = True
    description = ""
    needs_trees = False
    reads_predictions = False
    """Whether it counts the heads' own predictions under each condition (the probe) rather than a model output."""
    reads_logits = False
    """Whether each forward pass holds the whole vocabulary's logits, so that :data:`LOGIT_CELLS` caps the copies a
    pass stacks (a masked LM's)."""

    def parts(self) -> list[str]:
        return [self.name]

    def setup(self, loaded) -> None:
        """Checks of the loaded model, once, before the pass."""

    def state(self, conditions: int, num_layers: int, num_heads: int, *, bootstrap: int, seed: int, causal: bool,
              offsets) -> tuple[dict, list | None]:
        """The accumulator's state tensors for ``conditions`` conditions, and the counts behind them where the
        metric keeps counts of its own (the probe's per condition), else None."""
        raise NotImplementedError

    def add(self, state: dict, batch, group: list[int], measured, *, bootstrap: int, seed: int) -> None:
        """Add what :meth:`measure` gave for the conditions ``group`` (copies of ``batch``, in that order) to
        ``state``."""
        raise NotImplementedError

    def details(self, counts: list | None, conditions: int) -> list[list[str | None]]:
        """Each condition's detail of each part (the probe: its best head), None where a metric has none."""
        return [[None] * len(self.parts()) for _ in range(conditions)]


METRICS: Registry[type[Metric]] = Registry("metric", option="--metric")


def registered(key: str):
    """Register a metric class under ``key`` (``--metric KEY``), which it then knows as its ``key``."""

    def register(cls: type[Metric]) -> type[Metric]:
        cls.key = key
        return METRICS.register(key)(cls)

    return register


class RatioMetric(Metric):
    """A metric that is sum(numerator) / sum(denominator) over units (a loss per token, an accuracy), with the
    bootstrap's replicate sums of both."""

    def measure(self, loaded, batch: Batch, copies: int, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """numerator and denominator float64 [copy, unit, part] for ``copies`` stacked copies of ``batch``."""
        raise NotImplementedError

    def state(self, conditions, num_layers, num_heads, *, bootstrap, seed, causal, offsets):
        parts = len(self.parts())

        def zeros(*shape):
            return torch.zeros(shape, dtype=torch.float64)

        return {"numerator": zeros(conditions, parts), "denominator": zeros(conditions, parts),
                "boot_numerator": zeros(bootstrap, conditions, parts),
                "boot_denominator": zeros(bootstrap, conditions, parts)}, None

    def add(self, state, batch, group, measured, *, bootstrap, seed):
        """``measured``: numerator, denominator [copy, unit, part], the copies in the order of ``group``."""
        from probing.stats.bootstrap import poisson_weights

        numerator, denominator = measured
        weights = poisson_weights(batch.indices, replicates=bootstrap, seed=seed)  # [replicate, unit]
        rows = torch.tensor(group)
        state["numerator"][rows] += numerator.sum(dim=1)
        state["denominator"][rows] += denominator.sum(dim=1)
        state["boot_numerator"][:, rows] += torch.einsum("ru,cup->rcp", weights, numerator)
        state["boot_denominator"][:, rows] += torch.einsum("ru,cup->rcp", weights, denominator)


def stacked_inputs(batch: Batch, copies: int) -> tuple[torch.Tensor, torch.Tensor]:
    """input ids and attention mask repeated ``copies`` times, copy-major: [copies * batch, tok]."""
    return batch.input_ids.repeat(copies, 1), batch.attention_mask.repeat(copies, 1)


@registered("mlm")
class MaskedLMLoss(RatioMetric):
    """Masked-LM loss per masked token (lower is better) on seeded masks of each unit's tokens."""

    reads_logits = True

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


def check_causal_lm_head(loaded, option: str, otherwise: str) -> None:
    """Refuse, in one line naming ``option``, a model that is not a causal LM or whose logits are more than
    its LM head on the last hidden state (what the metrics compute in row chunks: probing.model.token_scores)."""
    if not loaded.is_causal:
        raise ProbingError(f"{loaded.name} is not a causal LM; {otherwise}", source=option)
    if not exact_head(loaded.model, first=loaded.prepend_token_id or 0, tolerance=1e-4, device=loaded.device):
        raise ProbingError(f"{loaded.name} transforms its logits beyond its LM head (soft-capping or scaling), "
                           f"which {option} does not reproduce", source=option)


@registered("lm")
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

    def measure(self, loaded, batch, copies, mask):
        input_ids, attention_mask = stacked_inputs(batch, copies)
        with uniform_heads(loaded.model, mask) as intervention, torch.inference_mode():
            hidden = loaded.base(input_ids=input_ids.to(loaded.device),
                                 attention_mask=attention_mask.to(loaded.device)).last_hidden_state
            targets = input_ids[:, 1:].to(hidden.device)  # [rows, tok - 1]: token t + 1 predicted at t
            scored = (attention_mask[:, 1:].bool() & ~batch.is_special[:, 1:].repeat(copies, 1)).to(hidden.device)
            # The LM head runs on the scored positions only (no padding, no special token), in chunks of
            # positions (probing.model.token_scores, the one home of token log-probabilities).
            rows, steps = scored.nonzero(as_tuple=True)
            loss = hidden.new_zeros(scored.shape, dtype=torch.float32)  # [rows, tok - 1]
            loss[rows, steps] = -token_log_probs(loaded.model.get_output_embeddings(), hidden[rows, steps],
                                                 targets[rows, steps], LOGIT_CELLS)
        intervention.verify()
        numerator = loss.sum(dim=1).double().view(copies, len(batch), 1).cpu()
        denominator = scored.sum(dim=1).double().view(copies, len(batch), 1).cpu()
        return numerator, denominator


@registered("classification")
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
        input_ids, attention_mask = stacked_inputs(batch, copies)
        with uniform_heads(loaded.model, mask) as intervention, torch.inference_mode():
            logits = loaded.model(input_ids=input_ids.to(loaded.device),
                                  attention_mask=attention_mask.to(loaded.device)).logits  # [rows, label]
        intervention.verify()
        gold = torch.tensor([self.label_id(unit) for unit in batch.units]).repeat(copies)
        correct = (logits.argmax(dim=-1).cpu() == gold).double().view(copies, len(batch), 1)
        return correct, torch.ones_like(correct)


@registered("minimal-pairs")
class MinimalPairAccuracy(Metric):
    """BLiMP accuracy (probing.analyses.ablation.minimal_pairs): overall, per field and per phenomenon.

    ``layout``: the paradigms read, in order, each {uid, field, term, pairs} (what a result file records).
    """

    name, head, higher_is_better = "accuracy", "causal_lm", True
    description = "minimal-pair accuracy (overall: the mean of the paradigm accuracies)"

    def __init__(self, layout=(), **_):
        self.layout = [dict(entry) for entry in layout]

    @classmethod
    def of_pairs(cls, pairs) -> "MinimalPairAccuracy":
        from probing.analyses.ablation.pair_parts import layout_of

        return cls(layout_of(pairs))

    def parts(self) -> list[str]:
        from probing.analyses.ablation.pair_parts import part_names

        return part_names(self.layout)

    scoring = None
    """How the pairs are scored (probing.model.pair_rows.PairScoring), decided by :meth:`setup` for the loaded model:
    through its LM head (which :func:`check_causal_lm_head` requires), prefixes shared where the model agrees."""

    def setup(self, loaded) -> None:
        from probing.model.pair_rows import PairScoring

        check_causal_lm_head(loaded, "--metric minimal-pairs",
                             otherwise="minimal pairs need a trained causal LM head (BLiMP scores sentences)")
        # once per model, before the pass: its tiny forward passes are no condition's
        self.scoring = PairScoring.of(loaded.model, loaded.device, split=True, cells=LOGIT_CELLS)

    def state(self, conditions, num_layers, num_heads, *, bootstrap, seed, causal, offsets):
        """One bit per (condition, pair): right or not (resampled within paradigms when scored)."""
        pairs = sum(entry["pairs"] for entry in self.layout)
        return {"right": torch.zeros(conditions, pairs, dtype=torch.int64)}, None

    def add(self, state, batch, group, measured, *, bootstrap, seed):
        state["right"][torch.tensor(group)[:, None], torch.tensor(batch.rows)] = measured.long()

    def measure(self, loaded, batch, copies, mask) -> torch.Tensor:
        """right or not, bool [copy, pair], for ``copies`` stacked copies of a batch of pairs
        (probing.engine.pair_passes.PairBatch), the heads ``mask`` [copy * sentence, layer, head] disabled."""
        from probing.analyses.ablation.minimal_pairs import disabled_heads
        from probing.model.pair_rows import batch_log_probs

        with torch.inference_mode():
            scores = batch_log_probs(loaded.model, batch.pairs, self.scoring, loaded.device, copies=copies,
                                     around=disabled_heads(loaded, mask))  # [copy, sentence]
        return scores[:, 0::2] > scores[:, 1::2]  # good before bad; a tie is wrong


@registered("probe")
class ProbeAccuracy(Metric):
    """The best head's accuracy per relation on a treebank (the probe, under each condition)."""

    name, head, higher_is_better, needs_trees = "probe", None, True, True
    description = "best head's accuracy per relation"
    reads_predictions = True

    def __init__(self, relations=("dobj", "det", "pobj", "poss", "all"), **_):
        self.relations = tuple(relations)

    def parts(self) -> list[str]:
        return list(self.relations)

    def state(self, conditions, num_layers, num_heads, *, bootstrap, seed, causal, offsets):
        """The probe's counts of every condition (``c{i}.NAME``), each a ProbeCounts of its own."""
        from probing.analyses.probe.counts import ProbeCounts
        from probing.stats.bootstrap import BootstrapSpec

        counts = [ProbeCounts(self.relations, num_layers, num_heads, offsets=offsets,
                              bootstrap=BootstrapSpec(bootstrap, seed), causal=causal) for _ in range(conditions)]
        return {f"c{i}.{name}": getattr(each, name) for i, each in enumerate(counts)
                for name in each.tensor_names()}, counts

    def details(self, counts, conditions):
        """The best head of each relation under each condition (the one tie rule), by name."""
        from probing.naming import DIRECTIONS, head_name
        from probing.stats.selection import best_cell

        details = []
        for each in counts:
            total = each.total.numpy()
            best = [best_cell(each.heads[r].numpy()) for r in range(len(total))]
            details.append([head_name(layer, head, DIRECTIONS[direction]) if total[r] else None
                            for r, (direction, layer, head) in enumerate(best)])
        return details
