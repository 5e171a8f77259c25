"""Run one padded batch through a loaded model and read its attention.

Attention leaves this module as float32 ``[batch, layer, head, query, key]``
whatever the model's dtype, so that pooling and argmax do not depend on
half-precision rounding. Which stack is read (an encoder-decoder's encoder or
decoder) was settled at load time (probing.model.loading).

>>> import torch
>>> from probing.model.loading import load_model
>>> from probing.testing import tiny_bert
>>> loaded = load_model(tiny_bert())
>>> attention(loaded, torch.tensor([[2, 10, 11, 3]]), torch.ones(1, 4, dtype=torch.long)).shape
torch.Size([1, 2, 4, 4, 4])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from probing.errors import ProbingError
from probing.model.alignment import align_words
from probing.model.hooks import ForwardHook, StopPass, hooked, until_stopped
from probing.model.layout import find_self_attentions, recorded_attentions

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


@dataclass(frozen=True)
class AttentionTap:
    """The modules whose outputs hold each layer's attention weights (at ``index``), in call order."""

    modules: tuple
    index: int


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
            captured = _attention_until_last(loaded, tap, input_ids, torch.ones_like(input_ids))
        except Exception:  # a module whose outputs do not hold the weights there
            continue
        if len(captured) == len(layers) and all(
            isinstance(mine, torch.Tensor) and mine.shape == theirs.shape and torch.equal(mine, theirs)
            for mine, theirs in zip(captured, layers)
        ):
            return tap
    return None


def _candidate_taps(loaded) -> list[AttentionTap]:
    taps = []
    recorded, index = recorded_attentions(loaded)
    if recorded:
        taps.append(AttentionTap(recorded, index))
    found = tuple(module for _, module, _ in find_self_attentions(loaded))
    if found:
        taps.append(AttentionTap(found, 1))
    return taps


def _attention_until_last(loaded, tap: AttentionTap, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> list:
    """Run the scored stack up to its last layer's attention; its per-layer weights, in call order.

    A module shared by every layer (ALBERT) is called once per layer, so the
    pass stops at the ``num_layers``-th call, whatever the number of modules.
    """
    captured: list = []

    def keep(module, args, output) -> None:
        captured.append(output[tap.index])
        if len(captured) == loaded.num_layers:
            raise StopPass

    with hooked(*(ForwardHook(module, keep) for module in tap.modules)):
        until_stopped(lambda: _run_stack(loaded, input_ids, attention_mask))
    return captured


def _no_attention_message(loaded, trust_remote_code: bool) -> str:
    implementation = getattr(loaded.model.config, "_attn_implementation", None)
    if implementation == "eager":
        message = f"{loaded.name_or_path} returned no attention weights although it runs eager attention: its code ignores output_attentions"
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
    layers = _stack_attention(loaded, input_ids, attention_mask)
    if not layers or any(layer is None for layer in layers):
        raise ProbingError(_no_attention_message(loaded, trust_remote_code=True), source="--model")
    if len(layers) != loaded.num_layers:
        raise ProbingError(
            f"{loaded.name_or_path} returned attention for {len(layers)} layers but has {loaded.num_layers}",
            source="--model",
        )
    # [batch, layer, head, query, key]
    return torch.stack([layer.float() for layer in layers], dim=1)


def _stack_attention(loaded, input_ids: torch.Tensor, attention_mask: torch.Tensor):
    """The per-layer attention of the scored stack (entries may be None); the pass stops after the
    last layer's attention where the load-time check allowed it."""
    if loaded.attention_tap is not None:
        return _attention_until_last(loaded, loaded.attention_tap, input_ids, attention_mask)
    return _run_stack(loaded, input_ids, attention_mask)


def _run_stack(loaded, input_ids: torch.Tensor, attention_mask: torch.Tensor):
    """The whole forward pass of the scored stack; its attention tuple (entries may be None)."""
    run = _STACK_RUNNERS[(loaded.is_encoder_decoder, loaded.stack)]
    with torch.inference_mode():
        return run(loaded.base, input_ids.to(loaded.device, non_blocking=True),
                   attention_mask.to(loaded.device, non_blocking=True))


def _run_single_stack(model, input_ids, attention_mask):
    output = model(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True)
    return getattr(output, "attentions", None)


def _run_encoder_of_pair(model, input_ids, attention_mask):
    output = model.get_encoder()(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True)
    return getattr(output, "attentions", None)


def _run_decoder_of_pair(model, input_ids, attention_mask):
    """The decoder reads the sentence after its start token (prepended at alignment);
    the encoder reads the same sentence without it."""
    output = model(
        input_ids=input_ids[:, 1:],
        attention_mask=attention_mask[:, 1:],
        decoder_input_ids=input_ids,
        decoder_attention_mask=attention_mask,
        output_attentions=True,
    )
    return getattr(output, "decoder_attentions", None)


_STACK_RUNNERS: dict[tuple[bool, str], Callable] = {
    (False, "encoder"): _run_single_stack,
    (False, "decoder"): _run_single_stack,
    (True, "encoder"): _run_encoder_of_pair,
    (True, "decoder"): _run_decoder_of_pair,
}
"""(is encoder-decoder, stack) -> how to run the model and read that stack's attention."""
