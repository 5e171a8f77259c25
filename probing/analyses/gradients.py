"""How much the masked-LM loss depends on attention (Clark et al. 2019, Figure 3).

The paper observes that heads in the middle layers put most of their attention
on [SEP], yet the loss barely changes when that attention changes: [SEP] may
be a "no-op" target. Here, for a checkpoint with a trained masked-language-
model head:

1. in every unit, a seeded :data:`MASK_RATE` (15%) of the real, non-special
   tokens (at least one) are replaced by the mask token; the choice depends
   only on the seed and the unit's index, so batch size and order change nothing;
2. the loss is the sum over units of each unit's mean cross-entropy on its
   masked tokens (a per-unit mean, so that no unit's gradient depends on the
   others in its batch);
3. the gradient of that loss with respect to every attention weight (the
   softmax output of eager attention, returned by ``output_attentions``) is
   taken, and its magnitude |dL/dA[i, j]| averaged, per layer and head, over
   the weights from real queries to keys of each kind: the first special token,
   separators, ``.``/``,``, and other tokens.

Checkpoints without a trained masked-LM head (sentence-transformers
checkpoints such as all-MiniLM-L6-v2 are saved without one) raise a
ProbingError rather than give numbers of a random head.

>>> import torch
>>> mask = choose_masked(torch.tensor([1, 1, 1, 1]), torch.tensor([1, 0, 0, 1]), seed=0, index=0)
>>> mask.tolist()
[False, True, False, False]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import torch

from ..errors import ProbingError
from ..extraction import LoadedModel, load_model
from ..inputs import TokenBatch
from .surface import TokenRoles

MASK_RATE = 0.15
KEY_KINDS = ("first_special", "separator", "punctuation", "other")
SIGNIFICANT = 6


def load_masked_lm(
    name_or_path: str,
    *,
    revision: str | None = None,
    device: str = "cpu",
    trust_remote_code: bool = False,
) -> LoadedModel:
    """A checkpoint with its masked-LM head (eager attention, eval mode, float32).

    Raises ProbingError when the architecture has no masked-LM class, the
    tokenizer has no mask token, or the checkpoint lacks the head's weights.
    """
    from transformers import AutoModelForMaskedLM
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES
    from transformers.utils import logging as hf_logging

    # The base model's loader validates the device, reads the tokenizer and the shape;
    # the masked-LM model then replaces its model.
    loaded = load_model(name_or_path, revision=revision, device=device, trust_remote_code=trust_remote_code)
    model_type = getattr(loaded.model.config, "model_type", "")
    if model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES and not trust_remote_code:
        raise ProbingError(
            f"{name_or_path} ({model_type}) has no masked-language-model architecture; gradient importance needs one",
            source="--model",
        )
    if loaded.tokenizer.mask_token_id is None:
        raise ProbingError(f"the tokenizer of {name_or_path} has no mask token", source="--model")
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # missing weights are reported below, in one line
    try:
        model, info = AutoModelForMaskedLM.from_pretrained(
            name_or_path,
            attn_implementation="eager",
            dtype=torch.float32,
            output_loading_info=True,
            revision=revision,
            trust_remote_code=trust_remote_code,
        )
    except (OSError, KeyError, ValueError) as error:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise ProbingError(f"cannot load a masked-LM model from {name_or_path!r}: {first_line}", source="--model") from None
    finally:
        hf_logging.set_verbosity(verbosity)
    _check_trained_head(name_or_path, info)
    model.eval().to(device)
    return dataclasses.replace(loaded, model=model, architecture=type(model).__name__, dtype="float32")


def _check_trained_head(name_or_path: str, info: dict) -> None:
    missing = sorted(info.get("missing_keys") or [])
    if missing:
        shown = ", ".join(missing[:4]) + (f", ... ({len(missing)} in all)" if len(missing) > 4 else "")
        raise ProbingError(
            f"{name_or_path} has no trained masked-language-model head: the checkpoint lacks {shown}. "
            "Sentence-embedding checkpoints (sentence-transformers, e.g. all-MiniLM-L6-v2) are saved without "
            "one; the gradient of an MLM loss through a randomly initialised head would be meaningless",
            source="--model",
        )


def choose_masked(real: torch.Tensor, special: torch.Tensor, *, seed: int, index: int, rate: float = MASK_RATE) -> torch.Tensor:
    """bool [tok]: the tokens of one unit to mask (``rate`` of its candidates, at least one).

    Candidates are real, non-special tokens; the draw depends on (seed, index) only.
    """
    candidates = torch.nonzero(real.bool() & ~special.bool()).flatten()
    chosen = torch.zeros(real.shape[0], dtype=torch.bool)
    if len(candidates) == 0:
        return chosen
    generator = torch.Generator().manual_seed(seed * 1_000_003 + index)
    count = max(1, round(rate * len(candidates)))
    chosen[candidates[torch.randperm(len(candidates), generator=generator)[:count]]] = True
    return chosen


class GradientStats:
    """Running sums of |dL/dA| per key kind, layer and head, and of the attention itself.

    ``sums``: float64 [kind, layer, head] of |gradient|; ``weights``: how many
    attention weights each kind's sum covers; ``attention``: [kind, layer, head]
    sum over real queries of the attention mass on that kind of key.
    """

    def __init__(self, num_layers: int, num_heads: int):
        self.num_layers, self.num_heads = num_layers, num_heads
        shape = (len(KEY_KINDS), num_layers, num_heads)
        self.sums = torch.zeros(shape, dtype=torch.float64)
        self.attention = torch.zeros(shape, dtype=torch.float64)
        self.weights = torch.zeros(len(KEY_KINDS), dtype=torch.float64)
        self.queries = 0.0
        self.masked_tokens = 0
        self.loss_sum = 0.0
        self.units = 0

    def update(self, gradient: torch.Tensor, attention: torch.Tensor, roles: TokenRoles, *, loss: float, masked: int) -> None:
        """gradient, attention: [batch, layer, head, query, key]; loss: the batch's summed unit losses."""
        kinds = key_kinds(roles).to(gradient.device)  # [kind, batch, key]
        real = roles.real.to(gradient.device)
        self.sums += torch.einsum("blhqk,cbk,bq->clh", gradient.abs(), kinds, real).double().cpu()
        self.attention += torch.einsum("blhqk,cbk,bq->clh", attention, kinds, real).double().cpu()
        self.weights += torch.einsum("cbk,bq->c", kinds, real).double().cpu()
        self.queries += float(real.sum())
        self.masked_tokens += masked
        self.loss_sum += loss
        self.units += gradient.shape[0]

    def merge(self, other: "GradientStats") -> "GradientStats":
        for name in ("sums", "attention", "weights"):
            getattr(self, name).add_(getattr(other, name))
        self.queries += other.queries
        self.masked_tokens += other.masked_tokens
        self.loss_sum += other.loss_sum
        self.units += other.units
        return self

    def result(self) -> dict:
        gradient = self.sums / self.weights.clamp_min(1).view(-1, 1, 1)  # [kind, layer, head]
        share = self.attention / max(self.queries, 1.0)
        present = self.weights > 0
        return {
            "gradient": {kind: _rounded(gradient[k]) if present[k] else None for k, kind in enumerate(KEY_KINDS)},
            "layer_gradient": {
                kind: _rounded(gradient[k].mean(dim=1)) if present[k] else None for k, kind in enumerate(KEY_KINDS)
            },
            "layer_attention": {kind: _rounded(share[k].mean(dim=1)) for k, kind in enumerate(KEY_KINDS)},
            "weights": {kind: int(self.weights[k]) for k, kind in enumerate(KEY_KINDS)},
            "masked_tokens": self.masked_tokens,
            "mean_unit_loss": round(self.loss_sum / self.units, 6) if self.units else None,
            "units": self.units,
            "definition": "mean |d loss / d attention weight| over weights from real queries to keys of each kind",
        }


def key_kinds(roles: TokenRoles) -> torch.Tensor:
    """float [kind, batch, key] masks in :data:`KEY_KINDS` order; they partition the real keys."""
    punctuation = roles.punctuation * (1 - roles.first - roles.separator)
    other = roles.real - roles.first - roles.separator - punctuation
    return torch.stack([roles.first, roles.separator, punctuation, other])


def masked_batch(batch: TokenBatch, mask_token_id: int, seed: int, rate: float = MASK_RATE) -> tuple[torch.Tensor, torch.Tensor]:
    """(input ids with masks, labels with -100 where not masked), both [batch, tok]."""
    chosen = torch.stack(
        [
            choose_masked(batch.attention_mask[row], batch.is_special[row], seed=seed, index=unit.index, rate=rate)
            for row, unit in enumerate(batch.units)
        ]
    )  # [batch, tok]
    input_ids = torch.where(chosen, torch.full_like(batch.input_ids, mask_token_id), batch.input_ids)
    labels = torch.where(chosen, batch.input_ids, torch.full_like(batch.input_ids, -100))
    return input_ids, labels


def batch_gradients(loaded: LoadedModel, batch: TokenBatch, seed: int, rate: float = MASK_RATE):
    """Attention [batch, layer, head, query, key], its gradient (same shape), the summed unit loss, masked count."""
    input_ids, labels = masked_batch(batch, loaded.tokenizer.mask_token_id, seed, rate)
    device = loaded.device
    with torch.enable_grad():
        output = loaded.model(
            input_ids=input_ids.to(device), attention_mask=batch.attention_mask.to(device), output_attentions=True
        )
        layers = output.attentions
        if not layers or any(layer is None or not layer.requires_grad for layer in layers):
            raise ProbingError(f"{loaded.name_or_path} returned no differentiable attention weights", source="--model")
        labels = labels.to(device)
        losses = torch.nn.functional.cross_entropy(
            _at_least_float32(output.logits).transpose(1, 2), labels, ignore_index=-100, reduction="none"
        )  # [batch, tok]
        per_unit = (labels != -100).sum(dim=1)  # [batch]
        loss = (losses.sum(dim=1) / per_unit.clamp_min(1)).sum()
        gradients = torch.autograd.grad(loss, layers)
    attention = torch.stack([layer.detach().float() for layer in layers], dim=1)  # [batch, layer, head, query, key]
    gradient = torch.stack([g.float() for g in gradients], dim=1)  # [batch, layer, head, query, key]
    return attention, gradient, loss.item(), int(per_unit.sum())


def _at_least_float32(tensor: torch.Tensor) -> torch.Tensor:
    """Half-precision logits are upcast for the loss; float64 stays float64."""
    return tensor.to(torch.promote_types(tensor.dtype, torch.float32))


def accumulate(loaded: LoadedModel, batches: Iterator[TokenBatch], seed: int, rate: float = MASK_RATE) -> GradientStats:
    """Gradient statistics over every batch."""
    stats = GradientStats(loaded.num_layers, loaded.num_heads)
    for batch in batches:
        attention, gradient, loss, masked = batch_gradients(loaded, batch, seed, rate)
        stats.update(gradient, attention, TokenRoles.of_batch(batch), loss=loss, masked=masked)
    return stats


def _rounded(value: torch.Tensor) -> list:
    """Gradients are small numbers: keep significant digits, not decimals."""
    return [_rounded(row) for row in value] if value.dim() > 1 else [float(f"{v:.{SIGNIFICANT}g}") for v in value.tolist()]
