"""Run one padded batch through a loaded model and read its attention.

Attention leaves this module as float32 whatever the model's dtype, so that
pooling and argmax do not depend on half-precision rounding: one layer at a
time through :func:`each_layer` (``[batch, head, query, key]``, handed on as
soon as the layer has computed it and dropped after, so a pass holds one
layer's token attention, never the model's), or stacked by :func:`attention`
(``[batch, layer, head, query, key]``). Which stack is read (an
encoder-decoder's encoder or decoder) and which path reads it
(:data:`ATTENTION_PATHS`) were settled at load time (probing.model.loading).

>>> import torch
>>> from probing.model.loading import load_model
>>> from probing.testing import tiny_bert
>>> loaded = load_model(tiny_bert())
>>> attention(loaded, torch.tensor([[2, 10, 11, 3]]), torch.ones(1, 4, dtype=torch.long)).shape
torch.Size([1, 2, 4, 4, 4])
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import torch

from probing.errors import ProbingError
from probing.model.alignment import align_words
from probing.model.fused import FUSED, fused_with_weights
from probing.model.hooks import AttentionImplementation, ForwardHook, StopPass, hooked, until_stopped
from probing.model.layout import find_self_attentions, recorded_attentions

ATTENTION_PATHS = {
    "fused": "the forward pass runs fused attention (SDPA); each layer's weights are rebuilt from its queries and "
             "keys with the model's own mask, one layer at a time",
    "eager": "eager attention, each layer's weights read from its attention module one layer at a time",
    "returned": "eager attention, every layer's weights as the model returns them at the end of its pass",
}
"""How a loaded model's attention is read (``LoadedModel.attention_path``, written in every result)."""

FUSED_TOLERANCE = dict(rtol=1e-4, atol=1e-6)
"""How close the fused path's float32 weights must be to eager attention's, on the probe batch, to be used."""


def fused_tolerance(dtype: torch.dtype) -> dict:
    """How close fused weights in ``dtype`` must be to eager ones: :data:`FUSED_TOLERANCE` in float32; in half
    precision four units of rounding of a weight of 1 (4 x eps: 0.031 in bfloat16, 0.0039 in float16).

    In half precision the fused kernel's layer output rounds differently from eager's and later layers inherit
    it: on the probe batch, in bfloat16, MiniLM's weights differ by up to 0.012, gemma-3-270m's 0.016 and
    SmolLM2's 0.023 (both are bfloat16 models; neither is the more exact). The formula itself is checked to
    float32 tolerance; what this bound must still catch, a wrong mask or head order, moves weights by tenths.

    >>> fused_tolerance(torch.bfloat16)
    {'rtol': 0.0, 'atol': 0.03125}
    """
    if dtype in (torch.float16, torch.bfloat16):
        return {"rtol": 0.0, "atol": 4 * torch.finfo(dtype).eps}
    return dict(FUSED_TOLERANCE)

PROBE_WORDS = ("The", "probe", "reads", "every", "head", ".")
"""A short sentence run once at load time: causality, layer and head counts, attention present."""


def read_shape_and_causality(loaded, trust_remote_code: bool) -> None:
    """Run the probe sentence once through ``loaded`` (a LoadedModel, not yet probed): layers, heads,
    and whether the stack is causal."""
    probe = align_words(loaded.tokenizer, [PROBE_WORDS], prepend=loaded.prepend_token_id)[0]
    input_ids = torch.tensor([probe.input_ids])  # [batch=1, tok]
    layers = _stack_attention(loaded, input_ids, torch.ones_like(input_ids))
    if not layers or any(layer is None for layer in layers):
        raise ProbingError(_no_attention_message(loaded, trust_remote_code), source="--model")
    shapes = {tuple(layer.shape) for layer in layers}
    if len(shapes) != 1 or next(iter(shapes))[-2:] != (len(probe), len(probe)):
        raise ProbingError(
            f"{loaded.name} returns attention of shape {sorted(shapes)} for {len(probe)} tokens, not "
            "[batch, head, token, token] (windowed or compressed attention); its heads cannot be scored",
            source="--model",
        )
    stacked = torch.stack([layer.float() for layer in layers], dim=1)  # [1, layer, head, tok, tok]
    loaded.num_layers, loaded.num_heads = stacked.shape[1], stacked.shape[2]
    above_diagonal = torch.ones(stacked.shape[-2:], dtype=torch.bool).triu(diagonal=1)
    loaded.is_causal = bool((stacked[..., above_diagonal.to(stacked.device)] == 0).all())
    loaded.attention_tap = _attention_tap(loaded, input_ids, layers)
    loaded.attention_path = _attention_path(loaded, probe.input_ids)


@dataclass(frozen=True)
class AttentionTap:
    """The modules whose outputs hold each layer's attention weights (at ``index``), in call order;
    ``asks``: whether the pass must ask for them (``output_attentions``) for the modules to return them."""

    modules: tuple
    index: int
    asks: bool = True


def _attention_tap(loaded, input_ids: torch.Tensor, layers) -> AttentionTap | None:
    """Where a pass can read the weights and stop, or None.

    Everything after the last layer's attention weights (its output
    projection, its feed-forward block, a final norm, a pooler) is of no use to
    an attention reading: by multiply-adds, an eighth of all-MiniLM-L6-v2's
    forward pass and a sixteenth of all-mpnet-base-v2's (attention scores aside).
    Two places are tried, innermost first: the modules transformers itself
    records attentions from (``_can_record_outputs``), and the self-attention
    modules :func:`probing.model.layout.find_self_attentions` finds (second item of
    their outputs). One is trusted only when, on the probe sentence, it gives
    exactly the attention the model returns, layer by layer; else passes run
    the whole model, as before.
    """
    for tap in _candidate_taps(loaded):
        try:
            captured = _captured(loaded, tap, input_ids, torch.ones_like(input_ids))
        except Exception:  # a module whose outputs do not hold the weights there
            continue
        if len(captured) == len(layers) and all(
            isinstance(mine, torch.Tensor) and mine.shape == theirs.shape and torch.equal(mine, theirs)
            for mine, theirs in zip(captured, layers)
        ):
            return tap
    return None


def _candidate_taps(loaded) -> list[AttentionTap]:
    """Without asking first: a model whose attention modules return their weights unasked (transformers'
    own attention functions do) then keeps none of them in its output."""
    places = []
    recorded, index = recorded_attentions(loaded)
    if recorded:
        places.append((recorded, index))
    found = tuple(module for _, module, _ in find_self_attentions(loaded))
    if found:
        places.append((found, 1))
    return [AttentionTap(modules, index, asks) for modules, index in places for asks in (False, True)]


def _captured(loaded, tap: AttentionTap, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> list:
    captured: list = []
    _attention_until_last(loaded, tap, input_ids, attention_mask, lambda layer, weights: captured.append(weights))
    return captured


def _attention_until_last(loaded, tap: AttentionTap, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                          consume: Callable, first_layer: int = 0) -> None:
    """Run the scored stack up to its last layer's attention; ``consume(layer, weights)`` in call order.

    The weights leave the module's output once consumed (the model goes on
    without them), so no layer's weights outlive ``consume``. A module shared
    by every layer (ALBERT) is called once per layer, so the pass stops at the
    ``num_layers``-th call, whatever the number of modules. ``first_layer``: the
    first layer whose attention is computed (those below return recorded outputs,
    probing.model.prefix), so the first call is that layer's.
    """
    seen = [first_layer]

    def take(module, args, output):
        weights = output[tap.index]
        consume(seen[0], weights)
        seen[0] += 1
        if seen[0] == loaded.num_layers:
            raise StopPass
        if isinstance(output, tuple):
            return output[: tap.index] + (None,) + output[tap.index + 1 :]
        return None

    with hooked(*(ForwardHook(module, take) for module in tap.modules)):
        until_stopped(lambda: _run_stack(loaded, input_ids, attention_mask, asks=tap.asks))


def _attention_path(loaded, probe_ids: list[int]) -> str:
    """``fused`` where the model runs transformers' SDPA and the rebuilt weights equal eager attention's on a
    padded batch of the probe sentence (all of it, and all but its last two tokens), else ``eager`` with a tap,
    else ``returned``."""
    if loaded.attention_tap is None:
        return "returned"
    if not _may_fuse(loaded):
        return "eager"
    short = len(probe_ids) - 2
    probe_ids = list(probe_ids)
    input_ids = torch.tensor([probe_ids, probe_ids[:short] + [probe_ids[-1]] * 2])  # [batch=2, tok]
    attention_mask = torch.ones_like(input_ids)
    attention_mask[1, short:] = 0
    eager = _captured(loaded, loaded.attention_tap, input_ids, attention_mask)
    calls = [0]

    def counted(*args, **kwargs):
        calls[0] += 1
        return fused_with_weights(*args, **kwargs)

    try:
        with hooked(AttentionImplementation(loaded.base, FUSED, counted, mask="sdpa")):
            fused = _captured(loaded, loaded.attention_tap, input_ids, attention_mask)
    except Exception:  # a model whose attention code cannot run the fused function: it stays eager
        return "eager"
    real = attention_mask.bool().to(loaded.device)[:, None, :, None]  # padded query rows are no word's
    same = calls[0] == loaded.num_layers and len(fused) == len(eager) and all(
        isinstance(mine, torch.Tensor) and mine.shape == theirs.shape
        and torch.allclose(mine.float() * real.to(mine.device), theirs.float().to(mine.device) * real.to(mine.device),
                           **fused_tolerance(theirs.dtype))  # under a device map, on the layer's own device
        for mine, theirs in zip(fused, eager)
    )
    return "fused" if same else "eager"


def _may_fuse(loaded) -> bool:
    """Runs transformers' eager attention function (not its own code, not a function a caller registered)
    and says it supports SDPA."""
    config = loaded.base.config
    return getattr(config, "_attn_implementation", None) == "eager" and bool(getattr(loaded.base, "_supports_sdpa", False))


def _fused(loaded):
    """The fused implementation for the block where the load-time check chose it and nothing since has
    replaced eager attention (an intervention's own function keeps running). Inside a block that holds it
    already (:func:`fused_throughout`) the model runs FUSED, not eager, so this switches nothing."""
    if getattr(loaded, "attention_path", None) == "fused" and _may_fuse(loaded):
        return hooked(AttentionImplementation(loaded.base, FUSED, fused_with_weights, mask="sdpa"))
    return contextlib.nullcontext()


def fused_throughout(loaded):
    """The fused implementation held over a block of many batches, switched once rather than around every
    batch (each switch walks the model's modules and configs: about a millisecond on a small model). Only for
    a block in which nothing but :func:`each_layer` runs the model: anything else would find FUSED where the
    loaded model runs eager.

    >>> from probing.model.loading import load_model
    >>> from probing.testing import tiny_bert
    >>> loaded = load_model(tiny_bert())
    >>> with fused_throughout(loaded):
    ...     inside = loaded.base.config._attn_implementation
    >>> inside == (FUSED if loaded.attention_path == "fused" else "eager"), loaded.base.config._attn_implementation
    (True, 'eager')
    """
    return _fused(loaded)


def _no_attention_message(loaded, trust_remote_code: bool) -> str:
    implementation = getattr(loaded.model.config, "_attn_implementation", None)
    if implementation == "eager":
        message = (f"{loaded.name_or_path} returned no attention weights although it runs eager attention: its code "
                   "ignores output_attentions")
    else:
        message = (
            f"{loaded.name_or_path} returned no attention weights: its attention implementation "
            f"({implementation}) cannot report them and it could not be switched to eager"
        )
    if getattr(loaded.model.config, "auto_map", None) and not trust_remote_code:
        return message + "; pass --trust-remote-code to run the model's own code, which may return them"
    return message + "; no option of probing can change that"


def attention(loaded, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Token attention of every layer and head of the scored stack, for one padded batch.

    input_ids, attention_mask: [batch, tok]. Returns float32
    [batch, layer, head, query, key] on the model's device; padded keys get 0.
    """
    layers: list[torch.Tensor] = []
    each_layer(loaded, input_ids, attention_mask, lambda layer, weights: layers.append(weights))
    return torch.stack(layers, dim=1)  # [batch, layer, head, query, key]


def each_layer(loaded, input_ids: torch.Tensor, attention_mask: torch.Tensor,
               consume: Callable[[int, torch.Tensor], None], first_layer: int = 0) -> None:
    """``consume(layer, weights)`` for every layer of the scored stack, in order, as soon as the layer has
    computed them: float32 [batch, head, query, key] on the model's device, padded keys 0.

    On the ``fused`` and ``eager`` paths the pass goes on without them once
    consumed and stops after the last layer's attention; on ``returned`` the
    model's own tuple is handed on layer by layer. ``first_layer``: the layers below
    it are not computed (their outputs reused, probing.model.prefix, on the
    ``fused`` and ``eager`` paths only), so ``consume`` sees that layer and those above.

    >>> from probing.model.loading import load_model
    >>> from probing.testing import tiny_bert
    >>> loaded = load_model(tiny_bert())
    >>> seen = []
    >>> each_layer(loaded, torch.tensor([[2, 10, 11, 3]]), torch.ones(1, 4, dtype=torch.long),
    ...            lambda layer, weights: seen.append((layer, tuple(weights.shape))))
    >>> seen
    [(0, (1, 4, 4, 4)), (1, (1, 4, 4, 4))]
    """
    seen = [first_layer]
    if first_layer and loaded.attention_tap is None:
        raise ValueError("layers below the first can be skipped only where the pass reads attention by a tap")

    def checked(layer: int, weights) -> None:
        if weights is None:
            raise ProbingError(_no_attention_message(loaded, trust_remote_code=True), source="--model")
        seen[0] += 1
        consume(layer, weights.float())

    if loaded.attention_tap is not None:
        with _fused(loaded):
            _attention_until_last(loaded, loaded.attention_tap, input_ids, attention_mask, checked, first_layer)
    else:
        layers = _run_stack(loaded, input_ids, attention_mask)
        if not layers:
            raise ProbingError(_no_attention_message(loaded, trust_remote_code=True), source="--model")
        for index in range(len(layers)):
            checked(index, layers[index])
        del layers
    if seen[0] != loaded.num_layers:
        raise ProbingError(
            f"{loaded.name_or_path} returned attention for {seen[0]} layers but has {loaded.num_layers}",
            source="--model",
        )


def _stack_attention(loaded, input_ids: torch.Tensor, attention_mask: torch.Tensor):
    """The per-layer attention of the scored stack (entries may be None); the pass stops after the
    last layer's attention where the load-time check allowed it."""
    if loaded.attention_tap is not None:
        return _captured(loaded, loaded.attention_tap, input_ids, attention_mask)
    return _run_stack(loaded, input_ids, attention_mask)


def _run_stack(loaded, input_ids: torch.Tensor, attention_mask: torch.Tensor, asks: bool = True):
    """The whole forward pass of the scored stack; its attention tuple (entries may be None) when ``asks``."""
    run = _STACK_RUNNERS[(loaded.is_encoder_decoder, loaded.stack)]
    with torch.inference_mode():
        return run(loaded.base, input_ids.to(loaded.device, non_blocking=True),
                   attention_mask.to(loaded.device, non_blocking=True), asks)


def _run_single_stack(model, input_ids, attention_mask, asks):
    output = model(input_ids=input_ids, attention_mask=attention_mask, output_attentions=asks)
    return getattr(output, "attentions", None)


def _run_encoder_of_pair(model, input_ids, attention_mask, asks):
    output = model.get_encoder()(input_ids=input_ids, attention_mask=attention_mask, output_attentions=asks)
    return getattr(output, "attentions", None)


def _run_decoder_of_pair(model, input_ids, attention_mask, asks):
    """The decoder reads the sentence after its start token (prepended at alignment);
    the encoder reads the same sentence without it."""
    output = model(
        input_ids=input_ids[:, 1:],
        attention_mask=attention_mask[:, 1:],
        decoder_input_ids=input_ids,
        decoder_attention_mask=attention_mask,
        output_attentions=asks,
    )
    return getattr(output, "decoder_attentions", None)


_STACK_RUNNERS: dict[tuple[bool, str], Callable] = {
    (False, "encoder"): _run_single_stack,
    (False, "decoder"): _run_single_stack,
    (True, "encoder"): _run_encoder_of_pair,
    (True, "decoder"): _run_decoder_of_pair,
}
"""(is encoder-decoder, stack) -> how to run the model and read that stack's attention."""
