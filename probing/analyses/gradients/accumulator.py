"""How much a language model's loss depends on attention (Clark et al. 2019, Figure 3).

The paper observes that heads in the middle layers put most of their
attention on [SEP], yet the loss barely changes when that attention changes:
[SEP] may be a "no-op" target. For a checkpoint with a trained LM head:

1. the loss of each unit is its mean cross-entropy: on a seeded 15% of its
   real, non-special tokens replaced by the mask token (a masked LM;
   probing.model.masking, the same masks as ``ablate --metric mlm``), or on every
   next token (a causal LM, whose first token is the attention sink);
2. the loss of a batch is the sum of its units' losses (so no unit's gradient
   depends on the others in its batch);
3. the gradient of that loss with respect to every attention weight (the
   softmax output of eager attention) is taken, and |dL/dA[i, j]| averaged,
   per layer and head, over the weights from real queries to keys of each
   kind: the first special token, separators, ``.``/``,``, and other tokens.

Checkpoints without a trained LM head (sentence-embedding checkpoints such as
all-MiniLM-L6-v2) are refused at load time rather than give numbers of a
random head.

>>> import torch
>>> from probing.engine.token_roles import TokenRoles
>>> roles = TokenRoles.from_masks(torch.ones(1, 3), torch.tensor([[1, 0, 1]]), torch.zeros(1, 3))
>>> key_kinds(roles)[:, 0].tolist()   # [CLS] w [SEP]: first special, separator, punctuation, other
[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
"""

from __future__ import annotations

import torch

from probing.analyses.gradients.payload import KEY_KINDS, LOSSES
from probing.engine.accumulator import Accumulator, BatchView
from probing.engine.token_roles import TokenRoles
from probing.errors import ProbingError
from probing.model.masking import IGNORED, MASK_RATE, mask_batch

SIGNIFICANT = 6


class GradientAccumulator(Accumulator):
    """Running sums of |dL/dA| per key kind, layer and head, and of the attention itself.

    State: ``gradient`` and ``attention`` float64 [kind, layer, head] (sums over real
    queries), ``weights`` [kind] (attention weights each kind's sum covers), and the
    scalars ``queries``, ``scored_tokens``, ``loss``, ``units``.
    """

    analysis = "gradients"
    needs_attention = False

    def __init__(self, num_layers: int, num_heads: int, *, loss: str = "masked_lm", seed: int = 0,
                 mask_rate: float = MASK_RATE, token_names: dict | None = None):
        super().__init__()
        if loss not in LOSSES:
            raise ProbingError(f"unknown loss {loss!r}; use one of {', '.join(LOSSES)}")
        self.shape, self.loss, self.seed, self.mask_rate = (num_layers, num_heads), loss, seed, mask_rate
        self.token_names = token_names or {"first_special": "first special", "separator": "separator"}
        shape = (len(KEY_KINDS), num_layers, num_heads)
        zeros = lambda *s: torch.zeros(s, dtype=torch.float64)  # noqa: E731
        self.state_tensors = {"gradient": zeros(*shape), "attention": zeros(*shape), "weights": zeros(len(KEY_KINDS)),
                              "queries": zeros(), "scored_tokens": zeros(), "loss": zeros(), "units": zeros()}

    def identity(self) -> dict:
        return {"analysis": self.analysis, "loss": self.loss, "seed": self.seed, "mask_rate": self.mask_rate,
                "shape": list(self.shape)}

    @classmethod
    def for_result(cls, result: dict) -> "GradientAccumulator":
        config, model = result["config"], result["model"]
        return cls(model["num_layers"], model["num_heads"], loss=config["loss"], seed=config["seed"],
                   mask_rate=config["mask_rate"], token_names=result.get("token_names"))

    def update(self, view: BatchView) -> None:
        attention, gradient, loss, scored = batch_gradients(view, self.loss, self.seed, self.mask_rate)
        self.add(gradient, attention, TokenRoles.of_view(view), loss=loss, scored=scored)

    def add(self, gradient: torch.Tensor, attention: torch.Tensor, roles: TokenRoles, *, loss: float, scored: int) -> None:
        """gradient, attention: [batch, layer, head, query, key]; loss: the batch's summed unit losses."""
        kinds = key_kinds(roles).to(gradient.device)  # [kind, batch, key]
        real = roles.real.to(gradient.device)
        state = self.state_tensors
        state["gradient"] += torch.einsum("blhqk,cbk,bq->clh", gradient.abs(), kinds, real).double().cpu()
        state["attention"] += torch.einsum("blhqk,cbk,bq->clh", attention, kinds, real).double().cpu()
        state["weights"] += torch.einsum("cbk,bq->c", kinds, real).double().cpu()
        state["queries"] += float(real.sum())
        state["scored_tokens"] += scored
        state["loss"] += loss
        state["units"] += gradient.shape[0]

    def result(self) -> dict:
        state = self.state_tensors
        gradient = state["gradient"] / state["weights"].clamp_min(1).view(-1, 1, 1)  # [kind, layer, head]
        share = state["attention"] / max(float(state["queries"]), 1.0)
        present = state["weights"] > 0
        units = int(state["units"])
        return {
            "token_names": self.token_names,
            "gradients": {
                "gradient": {kind: _rounded(gradient[k]) if present[k] else None for k, kind in enumerate(KEY_KINDS)},
                "layer_gradient": {
                    kind: _rounded(gradient[k].mean(dim=1)) if present[k] else None for k, kind in enumerate(KEY_KINDS)
                },
                "layer_attention": {kind: _rounded(share[k].mean(dim=1)) for k, kind in enumerate(KEY_KINDS)},
                "weights": {kind: int(state["weights"][k]) for k, kind in enumerate(KEY_KINDS)},
                "scored_tokens": int(state["scored_tokens"]),
                "mean_unit_loss": round(float(state["loss"]) / units, 6) if units else None,
                "units": units,
                "loss": self.loss,
                "definition": "mean |d loss / d attention weight| over weights from real queries to keys of each kind",
            },
            "state": self.encoded_state(),
        }


def key_kinds(roles: TokenRoles) -> torch.Tensor:
    """float [kind, batch, key] masks in :data:`KEY_KINDS` order; they partition the real keys."""
    punctuation = roles.punctuation * (1 - roles.first - roles.separator)
    other = roles.real - roles.first - roles.separator - punctuation
    return torch.stack([roles.first, roles.separator, punctuation, other])


def batch_gradients(view: BatchView, loss: str, seed: int, rate: float = MASK_RATE):
    """Attention [batch, layer, head, query, key], its gradient (same shape), the summed unit loss,
    and the number of tokens the loss scored."""
    loaded, batch = view.loaded, view.batch
    device = loaded.device
    if loss == "masked_lm":
        masked = mask_batch(batch.input_ids, batch.attention_mask, batch.is_special, batch.indices,
                            mask_token_id=loaded.tokenizer.mask_token_id, seed=seed, rate=rate)
        input_ids, labels = masked.input_ids, masked.labels
    else:  # next token: every real, non-special token after the first, predicted from the ones before it
        input_ids = batch.input_ids
        scored = batch.attention_mask.bool() & ~batch.is_special
        scored[:, 0] = False
        labels = torch.where(scored, batch.input_ids, torch.full_like(batch.input_ids, IGNORED))
    with torch.enable_grad():
        output = loaded.model(input_ids=input_ids.to(device), attention_mask=batch.attention_mask.to(device),
                              output_attentions=True)
        layers = output.attentions
        if not layers or any(layer is None or not layer.requires_grad for layer in layers):
            raise ProbingError(f"{loaded.name} returned no differentiable attention weights", source="--model")
        logits = output.logits.to(torch.promote_types(output.logits.dtype, torch.float32))
        labels = labels.to(device)
        if loss == "causal_lm":
            logits, labels = logits[:, :-1], labels[:, 1:]
        losses = torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels, ignore_index=IGNORED,
                                                   reduction="none")  # [batch, tok]
        per_unit = (labels != IGNORED).sum(dim=1)  # [batch]
        total = (losses.sum(dim=1) / per_unit.clamp_min(1)).sum()
        gradients = torch.autograd.grad(total, layers)
    attention = torch.stack([layer.detach().float() for layer in layers], dim=1)  # [batch, layer, head, query, key]
    gradient = torch.stack([g.float() for g in gradients], dim=1)  # [batch, layer, head, query, key]
    return attention, gradient, total.item(), int(per_unit.sum())


def _rounded(value: torch.Tensor) -> list:
    """Gradients are small numbers: keep significant digits, not decimals."""
    return [_rounded(row) for row in value] if value.dim() > 1 else [float(f"{v:.{SIGNIFICANT}g}") for v in value.tolist()]
