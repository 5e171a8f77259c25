"""Fused attention for the forward pass, the weights of a layer rebuilt from its queries and keys.

A fused kernel (PyTorch's ``scaled_dot_product_attention``, FlashAttention)
never materialises the softmax weights, which is why probing has run eager
attention. Yet the weights of one layer are cheap to rebuild from what the
kernel is given: ``softmax(q k^T * scaling + mask)``, with the model's own
mask (causal, sliding window, padding), its grouped key-value heads repeated
as eager attention repeats them (transformers' ``repeat_kv``: query head h
reads group ``h // (heads / kv_heads)``) and the rotary positions already
applied (the model rotates q and k before it calls the attention function).
:func:`fused_with_weights` is such an attention function: the layer's output
comes from the fused kernel, its weights from that formula, in eager's
precision (float32 softmax, then the query's dtype), so the reader gets what
eager attention would have returned and the pass keeps the kernel.

It is registered under :data:`FUSED` with SDPA's masks (boolean, or None
where the kernel's causal flag masks), through
:class:`probing.model.hooks.AttentionImplementation`; whether a model may use
it is decided once at load time, on the probe sentence, against eager
attention (probing.model.extraction).

>>> import torch
>>> class Layer(torch.nn.Module):
...     is_causal, num_key_value_groups = True, 2
>>> q, k, v = torch.randn(1, 4, 3, 8), torch.randn(1, 2, 3, 8), torch.randn(1, 2, 3, 8)
>>> output, weights = fused_with_weights(Layer(), q, k, v, None, scaling=8 ** -0.5)
>>> tuple(output.shape), tuple(weights.shape), bool(weights[0, 0, 0, 1:].eq(0).all())
((1, 3, 4, 8), (1, 4, 3, 3), True)
"""

from __future__ import annotations

import torch

FUSED = "probing_sdpa"
"""The name the fused function is registered under while a pass runs."""


def fused_with_weights(module, query, key, value, attention_mask, dropout: float = 0.0, scaling: float | None = None,
                       **kwargs):
    """transformers' attention-function signature: (output [batch, tok, head, d], weights [batch, head, q, k]).

    query [batch, head, q, d], key and value [batch, kv_head, k, d]; attention_mask as SDPA is given it.
    """
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    output, _ = sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                       **kwargs)
    return output, weights_from_queries_and_keys(module, query, key, attention_mask, scaling, **kwargs)


def weights_from_queries_and_keys(module, query, key, attention_mask, scaling: float | None = None, *,
                                  is_causal: bool | None = None, position_bias=None, **_) -> torch.Tensor:
    """The softmax weights the fused kernel applied, in the query's dtype [batch, head, q, k].

    Masking follows ``sdpa_attention_forward``: a boolean mask keeps True, a
    float mask is added, and no mask on a causal module with several queries
    means the kernel's causal flag (upper-left aligned).
    """
    groups = query.shape[1] // key.shape[1]
    keys = key.repeat_interleave(groups, dim=1) if groups > 1 else key  # repeat_kv's order
    scale = query.shape[-1] ** -0.5 if scaling is None else scaling
    scores = torch.matmul(query, keys.transpose(2, 3)).mul_(scale)  # [batch, head, q, k]; its own tensor
    if position_bias is not None:
        scores = scores + position_bias
    queries, length = scores.shape[-2], scores.shape[-1]
    causal = getattr(module, "is_causal", True) if is_causal is None else is_causal
    if attention_mask is None and causal and queries > 1:
        attention_mask = torch.ones(queries, length, dtype=torch.bool, device=scores.device).tril()
    if attention_mask is not None:
        attention_mask = attention_mask[..., :length]
        if attention_mask.dtype == torch.bool:
            scores = scores.float().add_(additive_mask(attention_mask))  # float32 from here, as the softmax runs
        else:
            scores = scores + attention_mask
    return torch.nn.functional.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)


def additive_mask(keep: torch.Tensor) -> torch.Tensor:
    """A boolean mask (True: attended) as float32 terms to add to scores: 0 where kept, float32's minimum where not.

    Added to float32 scores it gives the weights that filling the masked scores with their dtype's minimum gives
    (the softmax runs in float32 either way): a kept score is unchanged, a masked one becomes exactly float32's
    minimum (any score below 1e31 in size vanishes in the sum), and its weight is 0 as before; a row masked
    throughout stays uniform. On a CPU, filling by a boolean mask broadcast over the heads is slower than adding
    this small float mask.

    >>> additive_mask(torch.tensor([True, False])).tolist() == [0.0, torch.finfo(torch.float32).min]
    True
    """
    return torch.zeros(keep.shape, dtype=torch.float32, device=keep.device).masked_fill_(
        ~keep, torch.finfo(torch.float32).min)
