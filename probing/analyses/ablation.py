"""Disabling heads (Kovaleva et al. 2019, section 4.5): uniform attention in chosen heads.

A disabled head's attention, after the softmax, is replaced by the uniform
distribution over the keys its row may see (the non-padding keys; for a
causal model, the allowed keys up to the query), and its output is
recomputed from that; every other head keeps the weights and output of the
model's own eager attention, bit for bit.

The intervention goes through transformers' attention interface: one
function, registered once with ``AttentionInterface`` (and the eager mask
with ``AttentionMaskInterface``) under :data:`ATTENTION_NAME`, wraps the
model's own ``eager_attention_forward``; :class:`disabled_heads` switches
the model to it and back. No model file or weight is touched. Architectures
whose attention does not dispatch through the interface are refused with a
clear error, and :meth:`disabled_heads.verify` checks after a forward pass
that every targeted layer was reached.

>>> import torch
>>> from transformers import AutoModel
>>> from probing.testing import tiny_bert
>>> model = AutoModel.from_pretrained(tiny_bert(), attn_implementation="eager").eval()
>>> ids = torch.tensor([[2, 10, 11, 12, 3]])
>>> with disabled_heads(model, {(0, 1)}) as intervention:
...     weights = model(ids, output_attentions=True).attentions[0]
>>> intervention.verify()
>>> torch.allclose(weights[0, 1], torch.full((5, 5), 0.2))
True
>>> model.config._attn_implementation
'eager'
"""

from __future__ import annotations

import csv
import sys
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

from ..alignment import maximum_length
from ..errors import ProbingError
from ..inputs import TextUnit, read_units, token_batches
from ..relations import DEFAULT_RELATIONS
from ..scoring.bootstrap import poisson_weights
from ..scoring.predictions import DIRECTIONS

ATTENTION_NAME = "probing_uniform_heads"
"""The name under which the disabling attention function is registered."""

_DISABLED: "weakref.WeakKeyDictionary[torch.nn.Module, torch.Tensor]" = weakref.WeakKeyDictionary()
"""Attention module -> bool [head]: the heads of that module to disable (only while a context is active)."""
_REACHED: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()


def _uniform_heads_attention(module, query, key, value, attention_mask, **kwargs):
    """The model's eager attention, then uniform weights (and their output) in the disabled heads.

    weights: [batch, head, query, key]; output: [batch, query, head, head_dim].
    """
    eager = getattr(sys.modules.get(type(module).__module__), "eager_attention_forward", None)
    if eager is None:
        raise ProbingError(f"{type(module).__name__} has no eager_attention_forward to wrap; cannot disable its heads")
    output, weights = eager(module, query, key, value, attention_mask, **kwargs)
    disabled = _DISABLED.get(module)
    if disabled is None:
        return output, weights
    _REACHED.add(module)
    if not bool(disabled.any()):
        return output, weights
    heads = disabled.to(weights.device).nonzero().flatten()
    allowed = _allowed_keys(module, attention_mask, weights)  # bool [batch, 1 or head, query, key]
    uniform = allowed.to(weights.dtype) / allowed.sum(dim=-1, keepdim=True).clamp(min=1).to(weights.dtype)
    new_weights = weights.clone()
    new_weights[:, heads] = uniform.expand_as(weights)[:, heads]
    values = _per_head_values(value, weights.shape[1])  # [batch, head, key, head_dim]
    if output.shape[:3] != (weights.shape[0], weights.shape[2], weights.shape[1]):
        raise ProbingError(
            f"{type(module).__name__}: unexpected attention output shape {tuple(output.shape)}; cannot disable heads"
        )
    new_output = output.clone()
    # [batch, disabled head, query, head_dim] -> [batch, query, disabled head, head_dim]
    new_output[:, :, heads] = torch.matmul(new_weights[:, heads], values[:, heads]).transpose(1, 2).to(output.dtype)
    return new_output, new_weights


def _allowed_keys(module, attention_mask, weights: torch.Tensor) -> torch.Tensor:
    """Which keys each query row may see: bool [batch, 1 or head, query, key]."""
    batch, _, queries, keys = weights.shape
    if attention_mask is None:
        allowed = torch.ones(queries, keys, dtype=torch.bool, device=weights.device)
        if getattr(module, "is_causal", False) and queries > 1:
            allowed = torch.tril(allowed, diagonal=keys - queries)
        return allowed.expand(batch, 1, queries, keys)
    mask = attention_mask[..., :keys]
    if mask.dtype == torch.bool:
        return mask
    # an additive mask: 0 where allowed, the dtype's minimum (or -inf) where not
    return mask > torch.finfo(mask.dtype).min / 2


def _per_head_values(value: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Values per query head: grouped-query models share one key/value head among several."""
    groups = num_heads // value.shape[1]
    return value if groups == 1 else value.repeat_interleave(groups, dim=1)


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

    AttentionInterface.register(ATTENTION_NAME, _uniform_heads_attention)
    # Without a registered mask function, transformers builds no padding mask for a custom name.
    AttentionMaskInterface.register(ATTENTION_NAME, ALL_MASK_ATTENTION_FUNCTIONS["eager"])


def _quietly(function, *args) -> None:
    """Call without transformers' warning for models that cannot switch (the caller raises a clearer one)."""
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        function(*args)
    finally:
        hf_logging.set_verbosity(verbosity)


def attention_modules(model: torch.nn.Module, num_layers: int) -> dict[torch.nn.Module, int]:
    """Every module that may call the attention function, with its layer (from 0).

    transformers' attention modules carry their ``layer_idx``; a model whose
    modules do not is read by position in its list of ``num_layers`` layers.
    """
    found = {module: module.layer_idx for module in model.modules() if isinstance(getattr(module, "layer_idx", None), int)}
    if found:
        return found
    for module in model.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == num_layers:
            return {sub: index for index, layer in enumerate(module) for sub in layer.modules()}
    raise ProbingError(f"cannot find the {num_layers} attention layers of {type(model).__name__}")


class disabled_heads:
    """Context manager: the given heads attend uniformly while it is active.

    ``heads`` holds ``(layer, head)`` pairs counted from 0. On exit the
    model's previous attention implementation is restored.
    """

    def __init__(self, model: torch.nn.Module, heads: Iterable[tuple[int, int]]):
        self.model = model
        self.heads = frozenset((int(layer), int(head)) for layer, head in heads)
        config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        self.num_layers = config.num_hidden_layers
        self.num_heads = config.num_attention_heads
        for layer, head in self.heads:
            if not (0 <= layer < self.num_layers and 0 <= head < self.num_heads):
                raise ProbingError(
                    f"head {layer + 1}-{head + 1} does not exist: the model has {self.num_layers} layers of "
                    f"{self.num_heads} heads",
                    source="--heads",
                )
        self._previous: str | None = None
        self._modules: dict[torch.nn.Module, int] = {}
        self._reached: set[int] | None = None

    def __enter__(self) -> "disabled_heads":
        _register()
        self._reached = None
        self._modules = attention_modules(self.model, self.num_layers)
        self._previous = self.model.config._attn_implementation
        _quietly(self.model.set_attn_implementation, ATTENTION_NAME)
        if self.model.config._attn_implementation != ATTENTION_NAME:
            _quietly(self.model.set_attn_implementation, self._previous)
            raise ProbingError(
                f"{type(self.model).__name__} computes attention in its own code rather than through "
                "transformers' AttentionInterface, so its heads cannot be disabled without editing the model",
                source="--model",
            )
        for module, layer in self._modules.items():
            mask = torch.zeros(self.num_heads, dtype=torch.bool)
            mask[[head for target, head in self.heads if target == layer]] = True
            _DISABLED[module] = mask
        return self

    def __exit__(self, *exc) -> None:
        self._reached = self._reached_layers()
        for module in self._modules:
            _DISABLED.pop(module, None)
            _REACHED.discard(module)
        _quietly(self.model.set_attn_implementation, self._previous)

    def _reached_layers(self) -> set[int]:
        return {layer for module, layer in self._modules.items() if module in _REACHED}

    def verify(self) -> None:
        """After a forward pass (inside the context or after it): raise unless every layer with a
        disabled head went through the function."""
        reached = self._reached if self._reached is not None else self._reached_layers()
        missed = sorted({layer for layer, _ in self.heads} - reached)
        if missed:
            raise ProbingError(
                f"{type(self.model).__name__}: layer(s) {', '.join(str(layer + 1) for layer in missed)} never called "
                "the attention interface, so their heads could not be disabled",
                source="--model",
            )


def parse_heads(text: str, num_layers: int, num_heads: int) -> frozenset[tuple[int, int]]:
    """``"3-5,7-1"`` (layer-head, counted from 1) -> ``{(2, 4), (6, 0)}`` (counted from 0).

    >>> sorted(parse_heads("3-5,7-1", 12, 12))
    [(2, 4), (6, 0)]
    """
    heads = set()
    for part in text.split(","):
        try:
            layer, head = (int(piece) for piece in part.strip().split("-"))
        except ValueError:
            raise ProbingError(f"expected LAYER-HEAD pairs such as 3-5,7-1 (counted from 1), got {part!r}", source="--heads") from None
        if not (1 <= layer <= num_layers and 1 <= head <= num_heads):
            raise ProbingError(
                f"head {layer}-{head} does not exist: the model has {num_layers} layers of {num_heads} heads "
                "(counted from 1)",
                source="--heads",
            )
        heads.add((layer - 1, head - 1))
    return frozenset(heads)


def heads_label(heads: Iterable[tuple[int, int]]) -> str:
    """``{(2, 4), (6, 0)}`` -> ``"3-5,7-1"`` (counted from 1)."""
    return ",".join(f"{layer + 1}-{head + 1}" for layer, head in sorted(heads))


def each_head(num_layers: int, num_heads: int) -> list[tuple[str, frozenset]]:
    """One condition per head."""
    return [(f"{layer + 1}-{head + 1}", frozenset({(layer, head)})) for layer in range(num_layers) for head in range(num_heads)]


def each_layer(num_layers: int, num_heads: int) -> list[tuple[str, frozenset]]:
    """One condition per layer: all its heads at once."""
    return [
        (f"layer {layer + 1}", frozenset((layer, head) for head in range(num_heads))) for layer in range(num_layers)
    ]


# ---------------------------------------------------------------- metrics


@dataclass(frozen=True)
class AblationConfig:
    """What ``probing ablate`` measures, on what; frozen and written into the result."""

    model: str
    input: str | None = None
    metric: str = "mlm"
    labels: str | None = None
    relations: tuple[str, ...] = DEFAULT_RELATIONS
    limit: int | None = None
    batch_size: int = 16
    max_length: int | None = None
    mask_rate: float = 0.15
    bootstrap: int = 1000
    seed: int = 0
    device: str = "cpu"


@dataclass
class Score:
    """A metric's value for each of its parts (one, or one per relation), with bootstrap replicates.

    value: float [part]; replicates: float [replicate, part], computed on
    Poisson weights that depend only on (seed, unit index), so that two
    scores of the same units are paired replicate by replicate.
    """

    parts: list[str]
    value: np.ndarray
    replicates: np.ndarray
    detail: list[str | None]


class Metric:
    """A metric of one model on fixed units: ``evaluate()`` under the current intervention."""

    name = ""
    higher_is_better = True
    description = ""
    model: torch.nn.Module

    def evaluate(self) -> Score:
        raise NotImplementedError


METRICS: dict[str, type[Metric]] = {}


def register_metric(cls: type[Metric]) -> type[Metric]:
    METRICS[cls.name] = cls
    return cls


def make_metric(config: AblationConfig) -> Metric:
    if config.metric not in METRICS:
        raise ProbingError(f"unknown metric {config.metric!r}; use one of {', '.join(METRICS)}", source="--metric")
    return METRICS[config.metric](config)


def _ratio_score(part: str, indices: list[int], numerator, denominator, config: AblationConfig, detail=None) -> Score:
    """value = sum(numerator) / sum(denominator) over units; replicates with the units' Poisson weights."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    if denominator.sum() == 0:
        raise ProbingError("nothing to score: no unit yielded a token or a label", source="INPUT")
    value = np.array([numerator.sum() / denominator.sum()])
    weights = poisson_weights(indices, replicates=config.bootstrap, seed=config.seed).numpy()  # [replicate, unit]
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = (weights @ numerator) / (weights @ denominator)
    return Score([part], value, replicates[:, None], [detail])


def _load_task_model(config: AblationConfig, auto_class: str, head_prefixes: tuple[str, ...], what: str):
    """A checkpoint with a task head, refused when the head's weights are not in it."""
    import transformers
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the missing-weights report is turned into one clear error below
    try:
        model, info = getattr(transformers, auto_class).from_pretrained(
            config.model, attn_implementation="eager", output_loading_info=True
        )
    except (OSError, ValueError, KeyError) as error:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise ProbingError(f"cannot load {config.model!r} as a {what} model: {first}", source="MODEL") from None
    finally:
        hf_logging.set_verbosity(verbosity)
    missing = sorted(key for key in info.get("missing_keys", ()) if "pooler" not in key)
    untrained = [key for key in missing if any(part in key for part in head_prefixes)] or missing
    if untrained:
        raise ProbingError(
            f"{config.model} has no trained {what} head: {len(untrained)} of its weights are not in the checkpoint "
            f"({', '.join(untrained[:3])}{', ...' if len(untrained) > 3 else ''}). Sentence-transformers "
            "checkpoints such as all-MiniLM-L6-v2 keep only the encoder (--metric probe needs no head)",
            source="MODEL",
        )
    return model.eval().to(config.device)


def _require_input(config: AblationConfig) -> str:
    if not config.input:
        raise ProbingError(f"--metric {config.metric} needs an INPUT file", source="INPUT")
    return config.input


@register_metric
class MaskedLMLoss(Metric):
    """Masked-LM loss per masked token (lower is better) on seeded masks of the input's units.

    Each unit masks ``mask_rate`` of its non-special tokens (at least one),
    drawn from (seed, unit index), all replaced by the mask token.
    """

    name = "mlm"
    higher_is_better = False
    description = "masked-LM loss per masked token"

    def __init__(self, config: AblationConfig):
        from ..extraction import load_model

        self.config = config
        self.model = _load_task_model(config, "AutoModelForMaskedLM", ("cls.", "lm_head", "predictions"), "masked-LM")
        loaded = load_model(config.model, device=config.device)
        tokenizer = loaded.tokenizer
        if tokenizer.mask_token_id is None:
            raise ProbingError(f"the tokenizer of {config.model} has no mask token", source="MODEL")
        max_length = maximum_length(tokenizer, self.model.config, config.max_length)
        units = read_units(_require_input(config), limit=config.limit)
        self.batches = [
            self._masked(batch, tokenizer.mask_token_id)
            for batch in token_batches(tokenizer, units, batch_size=config.batch_size, max_length=max_length)
        ]

    def _masked(self, batch, mask_id: int) -> dict:
        eligible = batch.attention_mask.bool() & ~batch.is_special  # [batch, tok]
        labels = torch.full_like(batch.input_ids, -100)  # [batch, tok]; -100: not scored
        for row, unit in enumerate(batch.units):
            positions = eligible[row].nonzero().flatten().numpy()
            if len(positions) == 0:
                continue
            count = max(1, int(round(self.config.mask_rate * len(positions))))
            chosen = np.random.default_rng([self.config.seed, unit.index]).choice(positions, count, replace=False)
            labels[row, chosen] = batch.input_ids[row, chosen]
        input_ids = torch.where(labels >= 0, torch.full_like(labels, mask_id), batch.input_ids)
        return {"input_ids": input_ids, "attention_mask": batch.attention_mask, "labels": labels,
                "indices": [unit.index for unit in batch.units]}

    def evaluate(self) -> Score:
        indices, losses, counts = [], [], []
        for batch in self.batches:
            with torch.inference_mode():
                logits = self.model(
                    input_ids=batch["input_ids"].to(self.config.device),
                    attention_mask=batch["attention_mask"].to(self.config.device),
                ).logits.float()  # [batch, tok, vocab]
            labels = batch["labels"].to(logits.device)
            loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels, reduction="none", ignore_index=-100)
            losses += loss.sum(dim=1).tolist()
            counts += (labels >= 0).sum(dim=1).tolist()
            indices += batch["indices"]
        return _ratio_score("loss", indices, losses, counts, self.config)


@register_metric
class ProbeAccuracy(Metric):
    """The best head's accuracy per relation on a treebank (Clark et al.'s probe, spec/scoring.md)."""

    name = "probe"
    higher_is_better = True
    description = "best head's accuracy per relation"

    def __init__(self, config: AblationConfig):
        from ..config import ScoreConfig
        from ..extraction import load_model

        self.config = config
        self.score_config = ScoreConfig(
            model=config.model,
            treebank=_require_input(config),
            relations=config.relations,
            limit=config.limit,
            batch_size=config.batch_size,
            max_length=config.max_length,
            bootstrap=config.bootstrap,
            seed=config.seed,
            device=config.device,
        ).validated()
        self.loaded = load_model(config.model, device=config.device)
        self.model = self.loaded.model

    def evaluate(self) -> Score:
        from ..pipeline import run_probe
        from ..tables import head_label

        counts = run_probe(self.score_config, loaded=self.loaded).counts
        total = counts.total.numpy().astype(np.float64)  # [relation]
        flat = counts.heads.flatten(start_dim=1).numpy()  # [relation, direction * layer * head]
        best = flat.argmax(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            value = flat.max(axis=1) / total
            boot = counts.boot_heads.flatten(start_dim=2).numpy().max(axis=2) / counts.boot_total.numpy()
        shape = counts.heads.shape[1:]  # direction, layer, head
        detail = []
        for relation, index in enumerate(best):
            direction, layer, head = np.unravel_index(index, shape)
            name = DIRECTIONS[direction]
            detail.append(head_label({"layer": int(layer), "head": int(head), "direction": name}) if total[relation] else None)
        return Score(list(counts.relations), value, boot, detail)


@register_metric
class ClassificationAccuracy(Metric):
    """Accuracy of a sequence-classification checkpoint on a CSV with ``text`` and ``label`` columns."""

    name = "classification"
    higher_is_better = True
    description = "accuracy on the labelled file"

    def __init__(self, config: AblationConfig):
        from ..extraction import load_model

        self.config = config
        path = config.labels or _require_input(config)
        self.model = _load_task_model(config, "AutoModelForSequenceClassification", ("classifier", "score"), "sequence-classification")
        tokenizer = load_model(config.model, device=config.device).tokenizer
        texts, self.labels = read_labelled(path, self.model.config, config.limit)
        units = [TextUnit(first=text, index=index) for index, text in enumerate(texts)]
        max_length = maximum_length(tokenizer, self.model.config, config.max_length)
        self.batches = list(token_batches(tokenizer, units, batch_size=config.batch_size, max_length=max_length))

    def evaluate(self) -> Score:
        indices, correct = [], []
        for batch in self.batches:
            with torch.inference_mode():
                logits = self.model(
                    input_ids=batch.input_ids.to(self.config.device),
                    attention_mask=batch.attention_mask.to(self.config.device),
                ).logits  # [batch, label]
            rows = [unit.index for unit in batch.units]
            correct += (logits.argmax(dim=-1).cpu() == torch.tensor([self.labels[i] for i in rows])).long().tolist()
            indices += rows
        return _ratio_score("accuracy", indices, correct, [1] * len(correct), self.config)


def read_labelled(path: str, model_config, limit: int | None = None) -> tuple[list[str], list[int]]:
    """Texts and label ids from a CSV with ``text`` and ``label`` columns.

    A label is a name of the model's ``label2id`` or a label id.
    """
    label2id = {str(name): int(index) for name, index in (getattr(model_config, "label2id", None) or {}).items()}
    num_labels = int(getattr(model_config, "num_labels", len(label2id)))
    texts, labels = [], []
    try:
        with open(path, encoding="utf-8", newline="") as stream:
            reader = csv.DictReader(stream)
            if not reader.fieldnames or not {"text", "label"} <= set(reader.fieldnames):
                raise ProbingError(f"needs a header with text and label columns, got {reader.fieldnames}", source=path)
            for line, row in enumerate(reader, start=2):
                if limit is not None and len(texts) >= limit:
                    break
                texts.append(row["text"])
                labels.append(_label_id(row["label"], label2id, num_labels, path, line))
    except OSError as error:
        raise ProbingError(f"cannot read the labelled file: {error.strerror}", source=path) from None
    if not texts:
        raise ProbingError("the labelled file holds no row", source=path)
    return texts, labels


def _label_id(label: str, label2id: dict[str, int], num_labels: int, path: str, line: int) -> int:
    label = label.strip()
    if label in label2id:
        return label2id[label]
    if label.lstrip("-").isdigit() and 0 <= int(label) < num_labels:
        return int(label)
    raise ProbingError(f"label {label!r} is neither a label of the model ({', '.join(label2id)}) nor an id below {num_labels}", source=path, line=line)


# ---------------------------------------------------------------- running and reporting


def run_ablation(metric: Metric, conditions: list[tuple[str, frozenset]], *, progress=None) -> dict:
    """The metric without intervention, then with each condition's heads disabled.

    Returns ``{"baseline": {part: {...}}, "conditions": [...]}``; a
    condition's change is ``after - before`` with a paired 95% percentile
    interval over the bootstrap replicates.
    """
    with disabled_heads(metric.model, ()):
        pass  # refuses a model that cannot be intervened on, before any time is spent
    baseline = metric.evaluate()
    results = []
    for label, heads in conditions:
        with disabled_heads(metric.model, heads) as intervention:
            after = metric.evaluate()
        intervention.verify()
        results.append({"label": label, "heads": sorted([layer, head] for layer, head in heads), "parts": _compare(baseline, after, metric.higher_is_better)})
        if progress is not None:
            progress(len(results), len(conditions))
    return {
        "baseline": {
            part: {"value": _number(baseline.value[index]), "interval": _interval(baseline.replicates[:, index]), "detail": baseline.detail[index]}
            for index, part in enumerate(baseline.parts)
        },
        "conditions": results,
    }


def _compare(before: Score, after: Score, higher_is_better: bool) -> dict:
    parts = {}
    for index, part in enumerate(before.parts):
        change = after.value[index] - before.value[index]
        interval = _interval(after.replicates[:, index] - before.replicates[:, index])
        better = change if higher_is_better else -change
        helps = bool(interval is not None and (interval[0] > 0 if higher_is_better else interval[1] < 0))
        hurts = bool(interval is not None and (interval[1] < 0 if higher_is_better else interval[0] > 0))
        parts[part] = {
            "value": _number(after.value[index]),
            "change": _number(change),
            "interval": interval,
            "improvement": _number(better),
            "verdict": "helps" if helps else "hurts" if hurts else "no clear change",
            "detail": after.detail[index],
        }
    return parts


def _interval(values: np.ndarray) -> list[float] | None:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    return [float(v) for v in np.percentile(values, [2.5, 97.5])]


def _number(value) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None


def ranked(result: dict, part: str) -> list[dict]:
    """The conditions for one part, those whose removal helps most first."""
    rows = [condition for condition in result["conditions"] if condition["parts"][part]["improvement"] is not None]
    return sorted(rows, key=lambda condition: -condition["parts"][part]["improvement"])


def ablation_tables(result: dict, top: int | None = None) -> str:
    """One table per part (the loss, or each relation), sorted so that helpful removals come first."""
    from tabulate import tabulate

    scale, unit = (100.0, " %") if result["metric"]["higher_is_better"] else (1.0, "")
    blocks = []
    for part, base in result["baseline"].items():
        rows = ranked(result, part)
        shown = rows if top is None else rows[:top]
        table = [
            [
                condition["label"],
                _fmt(condition["parts"][part]["value"], scale),
                _fmt(condition["parts"][part]["change"], scale, signed=True),
                "-" if condition["parts"][part]["interval"] is None
                else f"[{_fmt(condition['parts'][part]['interval'][0], scale, signed=True)}, {_fmt(condition['parts'][part]['interval'][1], scale, signed=True)}]",
                condition["parts"][part]["verdict"],
            ]
            + ([condition["parts"][part]["detail"] or "-"] if base["detail"] else [])
            for condition in shown
        ]
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
