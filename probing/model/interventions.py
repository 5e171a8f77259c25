"""Changing what heads do, through transformers' attention interface: one mechanism for every override.

:func:`attention_override` registers an attention function with
``AttentionInterface`` (and the eager padding mask with
``AttentionMaskInterface``) and switches a model to it for the duration of a
block, through the one mechanism that changes a running model
(probing.model.hooks); no model file or weight is touched, and the previous
implementation is restored after. Architectures whose attention does not dispatch through the
interface are refused with a clear error.

:func:`uniform_heads` is the override of ``probing ablate`` (Kovaleva et
al.'s head disabling): a disabled head's weights, after the softmax, are
replaced by the uniform distribution over the keys its row may see, and its
output is recomputed from them; every other head keeps the model's own eager
weights and output bit for bit. The mask is per batch row, so one forward pass
can evaluate many conditions: copies of a batch, each with its own heads
disabled.

>>> import torch
>>> from transformers import AutoModel
>>> from probing.testing import tiny_bert
>>> model = AutoModel.from_pretrained(tiny_bert(), attn_implementation="eager").eval()
>>> ids = torch.tensor([[2, 10, 11, 12, 3]] * 2)
>>> mask = torch.zeros(2, 2, 4, dtype=torch.bool); mask[1, 0, 1] = True   # row 1: head 1-2 off
>>> with uniform_heads(model, mask) as intervention:
...     weights = model(ids, output_attentions=True).attentions[0]
>>> intervention.verify()
>>> torch.allclose(weights[1, 1], torch.full((5, 5), 0.2)), torch.allclose(weights[0, 1], torch.full((5, 5), 0.2))
(True, False)
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from typing import ContextManager

import torch

from probing.errors import ProbingError
from probing.model.hooks import AttentionImplementation, hooked
from probing.model.layout import attention_layers, text_config
from probing.naming import head_name


def eager_attention(module) -> Callable:
    """The model's own ``eager_attention_forward`` (the function an override wraps)."""
    eager = getattr(sys.modules.get(type(module).__module__), "eager_attention_forward", None)
    if eager is None:
        raise ProbingError(f"{type(module).__name__} has no eager_attention_forward to wrap", source="--model")
    return eager


def attention_override(model: torch.nn.Module, function: Callable, *, name: str) -> ContextManager[None]:
    """Within the block, every attention module of ``model`` calls ``function`` (transformers' signature:
    ``function(module, query, key, value, attention_mask, **kwargs) -> (output, weights)``)."""
    refused = "its heads cannot be changed without editing the model"
    return hooked(AttentionImplementation(model, name, function, refused=refused))


class uniform_heads:
    """Context manager: the heads ``mask[row, layer, head]`` attend uniformly in batch row ``row``.

    ``mask`` is bool [rows, layer, head] (rows must match the batch run inside
    the block), or a set of ``(layer, head)`` pairs counted from 0 for every row.
    """

    NAME = "probing_uniform_heads"

    def __init__(self, model: torch.nn.Module, mask):
        config = text_config(model)
        self.model = model
        self.num_layers, self.num_heads = config.num_hidden_layers, config.num_attention_heads
        if not isinstance(mask, torch.Tensor):
            heads = set(mask)
            for layer, head in heads:
                if not (0 <= layer < self.num_layers and 0 <= head < self.num_heads):
                    raise ProbingError(f"head {head_name(layer, head)} does not exist: the model has {self.num_layers} "
                                       f"layers of {self.num_heads} heads", source="--heads")
            mask = torch.zeros(1, self.num_layers, self.num_heads, dtype=torch.bool)
            for layer, head in heads:
                mask[0, layer, head] = True
        self.mask = mask  # [rows or 1, layer, head]
        self.layers: dict[torch.nn.Module, int] = {}
        self.reached: set[int] = set()
        self._override = None

    def __enter__(self) -> "uniform_heads":
        self.layers = attention_layers(self.model, self.num_layers)
        self.reached = set()
        layers, mask, reached = weakref.WeakKeyDictionary(self.layers), self.mask, self.reached

        def attend(module, query, key, value, attention_mask, **kwargs):
            output, weights = eager_attention(module)(module, query, key, value, attention_mask, **kwargs)
            layer = layers.get(module)
            if layer is None:
                return output, weights
            reached.add(layer)
            disabled = mask[:, layer].to(weights.device)  # [rows or 1, head]
            if not bool(disabled.any()):
                return output, weights
            return _uniform(module, weights, output, value, attention_mask, disabled)

        self._override = attention_override(self.model, attend, name=self.NAME)
        self._override.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._override.__exit__(*exc)

    def verify(self) -> None:
        """After a forward pass: raise unless every layer with a disabled head went through the override."""
        wanted = {layer for layer in range(self.num_layers) if bool(self.mask[:, layer].any())}
        missed = sorted(wanted - self.reached)
        if missed:
            raise ProbingError(
                f"{type(self.model).__name__}: layer(s) {', '.join(str(layer + 1) for layer in missed)} never called "
                "the attention interface, so their heads could not be disabled",
                source="--model",
            )


def _uniform(module, weights: torch.Tensor, output: torch.Tensor, value: torch.Tensor, attention_mask,
             disabled: torch.Tensor):
    """weights [batch, head, query, key] and output [batch, query, head, head_dim], with the disabled
    (row, head) cells made uniform over their visible keys."""
    batch, heads = weights.shape[:2]
    if output.shape[:3] != (batch, weights.shape[2], heads):
        raise ProbingError(f"{type(module).__name__}: unexpected attention output shape {tuple(output.shape)}; "
                           "cannot disable heads", source="--model")
    allowed = _allowed_keys(module, attention_mask, weights)  # bool [batch, 1 or head, query, key]
    uniform = allowed.to(weights.dtype) / allowed.sum(dim=-1, keepdim=True).clamp(min=1).to(weights.dtype)
    cells = disabled.expand(batch, heads)[:, :, None, None]  # [batch, head, 1, 1]
    new_weights = torch.where(cells, uniform.expand_as(weights), weights)
    values = value if value.shape[1] == heads else value.repeat_interleave(heads // value.shape[1], dim=1)
    recomputed = torch.matmul(new_weights, values).transpose(1, 2).to(output.dtype)  # [batch, query, head, dim]
    new_output = torch.where(cells.permute(0, 2, 1, 3), recomputed, output)
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
