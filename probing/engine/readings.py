"""Three ways to read a layer's attention: the weights, norm-based attention, rollout.

An attention weight ``alpha_h[i, j]`` says how much of token j's *value
vector* head h mixes into token i, not how much of token j reaches token i: a
large weight on a token whose transformed value is tiny moves almost nothing
(the "no-op" attention to [SEP] is the classic case). Every analysis that
reads attention can read one of these instead of the raw weights:

``weights``
    The softmax weights as the model returns them (the default).
``norms``
    Norm-based attention (Kobayashi, Kuribayashi, Yokoi and Inui 2020,
    "Attention is Not Only a Weight"): ``N_h[i, j] = alpha_h[i, j] *
    ||f_h(x_j)||`` with ``f_h(x_j) = (x_j W_V^h + b_V^h) W_O^h``, where
    ``x_j`` is what the layer's value projection reads, ``W_V^h, b_V^h`` head
    h's slice of the value projection and ``W_O^h`` the block of the
    attention output projection that reads head h's values. The output bias
    is left out and ``N`` is not renormalised. With grouped-query attention
    (Llama, Mistral, Qwen) head h reads the values of its key-value group
    through its own ``W_O^h``. The norms are recorded by hooks on each
    layer's value projection during the same forward pass that returns the
    weights (:class:`ValueNorms`).
``rollout``
    Attention rollout (Abnar and Zuidema 2020, "Quantifying Attention Flow
    in Transformers"): per layer ``A_l = 0.5 * mean_h alpha_l^h + 0.5 * I``
    over the real tokens, rows renormalised to 1, then ``R_1 = A_1`` and
    ``R_l = A_l R_{l-1}``. ``R_l[i, j]`` is how much of token j's input
    reaches token i after layer l. There is one map per layer, so rollout
    has one "head" per layer; the product of lower-triangular maps stays
    lower triangular, so a causal stack stays causal.

Every reading comes out in the weights' axis order, float32 ``[batch,
layer, head, query, key]`` (rollout: ``head`` of size 1), padded keys of real
rows 0 (rollout also zeroes padded rows), so pooling, argmax and statistics
take it unchanged. Rows of ``weights`` and
``rollout`` sum to 1 over the real tokens; rows of ``norms`` do not, so a
share ("how much of a row goes to [SEP]") under norms is a part of the row's
sum of ``N`` (:attr:`Reading.rows_sum_to_one` says which; the surface
statistics divide by the row sum when it is False).

A pass, as the engine runs it::

    reading = READINGS[name]                      # unknown name: ProbingError listing the known ones
    with reading.attached(loaded):                # an unreadable model fails here, before any batch
        for batch in batches:
            values = reading.read(loaded, batch)  # [batch, layer, head, query, key]

>>> READINGS.names(), [READINGS[name].heads(12) for name in READINGS], READINGS["norms"].rows_sum_to_one
(['weights', 'norms', 'rollout'], [12, 12, 1], False)
"""

from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass
from typing import Any, ContextManager

import torch

from probing.errors import ProbingError
from probing.model.extraction import attention, each_layer  # noqa: F401  (attention: the doctests use it)
from probing.model.hooks import Change, ForwardHook, PreForwardHook, hooked
from probing.model.layout import AttentionLayout, find_self_attentions, scored_stack
from probing.registry import Registry

OPTION = "--attention"
"""The command-line option that names a reading (every error of this module points at it)."""


# --------------------------------------------------------------------------------------------
# Where a self-attention keeps its value and output projections (probing.model.layout finds them)


def _cannot_read(loaded, why: str) -> ProbingError:
    message = f"{loaded.name_or_path}: {why}; {OPTION} norms cannot read this model (use weights or rollout)"
    return ProbingError(message, source=OPTION)


def _linear_weight(module: torch.nn.Module) -> torch.Tensor | None:
    """The weight as ``[out, in]`` (``y = x W^T + b``) of a Linear or of transformers' Conv1D."""
    if isinstance(module, torch.nn.Linear):
        return module.weight
    if type(module).__name__ == "Conv1D" and isinstance(getattr(module, "weight", None), torch.Tensor):
        return module.weight.t()  # Conv1D keeps [in, out]: y = x W + b
    return None


# --------------------------------------------------------------------------------------------
# Recording ||f_h(x_j)|| during the forward pass


@dataclass
class _HookedAttention:
    """One self-attention module: how to read its values and turn them into ||f_h(x_j)||.

    With W_O^h = Q_h R_h (QR decomposition, Q_h with orthonormal columns),
    ||W_O^h v|| = ||R_h v||: a d x d product per head and token instead of
    d x hidden, and without squaring the matrix (which would lose precision
    where W_O^h shrinks a direction). ``group_factors`` [kv_head, d, rep *
    rank] holds R_h^T of the ``rep`` query heads that read each key-value
    group side by side, so one batched product serves every head.
    """

    value_module: torch.nn.Module
    value_start: int  # first column of the values in the value projection's output
    num_heads: int
    num_kv_heads: int
    head_dim: int
    group_factors: torch.Tensor  # float32 [kv_head, d, rep * rank]

    @classmethod
    def build(cls, value_module, value_start, num_heads, num_kv_heads, head_dim, factors) -> "_HookedAttention":
        """factors: R_h, float32 [head, rank, d]. Head h reads key-value group h // rep
        (transformers' repeat_kv order)."""
        rep, rank = num_heads // num_kv_heads, factors.shape[1]
        grouped = factors.reshape(num_kv_heads, rep, rank, head_dim).permute(0, 3, 1, 2)  # [kv, d, rep, rank]
        return cls(value_module, value_start, num_heads, num_kv_heads, head_dim,
                   grouped.reshape(num_kv_heads, head_dim, rep * rank).contiguous())

    def norms(self, projected: torch.Tensor) -> torch.Tensor:
        """projected: the value projection's output [batch, tok, width] -> float32 [batch, head, tok]."""
        batch, tokens, _ = projected.shape
        kv, rep = self.num_kv_heads, self.num_heads // self.num_kv_heads
        values = projected[..., self.value_start : self.value_start + kv * self.head_dim].float()
        values = values.reshape(batch * tokens, kv, self.head_dim).transpose(0, 1)  # [kv_head, batch*tok, d]
        mapped = torch.bmm(values, self.group_factors)  # [kv_head, batch*tok, rep*rank]: R_h v for each head
        norms = torch.linalg.vector_norm(mapped.reshape(kv, batch, tokens, rep, -1), dim=-1)  # [kv, batch, tok, rep]
        return norms.permute(1, 0, 3, 2).reshape(batch, self.num_heads, tokens)


_FACTOR_CACHE: "weakref.WeakKeyDictionary[torch.nn.Module, tuple[tuple, torch.Tensor]]" = weakref.WeakKeyDictionary()
"""Output projection -> (weight identity, R factors), so attaching once per batch costs no QR."""


def _output_factors(output: torch.nn.Module, weight: torch.Tensor, num_heads: int, head_dim: int) -> torch.Tensor:
    """R_h of W_O^h = Q_h R_h for every head: float32 [head, rank, head_dim], cached per weight."""
    identity = (weight.data_ptr(), weight._version, weight.device, weight.dtype, num_heads)
    cached = _FACTOR_CACHE.get(output)
    if cached is not None and cached[0] == identity:
        return cached[1]
    with torch.inference_mode(False), torch.no_grad():
        blocks = weight.detach().double().reshape(weight.shape[0], num_heads, head_dim).permute(1, 0, 2)  # [head, out, d]
        factors = torch.linalg.qr(blocks, mode="r").R.float().contiguous()  # [head, min(out, d), d]
    _FACTOR_CACHE[output] = (identity, factors)
    return factors


def _hooked_attention(loaded, module: torch.nn.Module, layout: AttentionLayout) -> _HookedAttention:
    value_module, output_module = module.get_submodule(layout.value), module.get_submodule(layout.output)
    value_weight, output_weight = _linear_weight(value_module), _linear_weight(output_module)
    if value_weight is None or output_weight is None:
        kinds = f"{type(value_module).__name__} and {type(output_module).__name__}"
        raise _cannot_read(loaded, f"its attention's value and output projections are {kinds}, not linear layers")
    heads = loaded.num_heads
    inner = output_weight.shape[1]  # the output projection reads every head's values side by side
    if inner % heads:
        raise _cannot_read(loaded, f"its attention output projection reads {inner} values, not a multiple of {heads} heads")
    head_dim = inner // heads
    width = inner if layout.fused else value_weight.shape[0]
    start = value_weight.shape[0] - inner if layout.fused else 0  # fused: queries, keys, then values
    kv_heads = width // head_dim
    if (layout.fused and value_weight.shape[0] != 3 * inner) or width % head_dim or not kv_heads or heads % kv_heads:
        raise _cannot_read(loaded, f"its value projection gives {value_weight.shape[0]} values for {heads} heads of {head_dim}")
    factors = _output_factors(output_module, output_weight, heads, head_dim)
    return _HookedAttention.build(value_module, start, heads, kv_heads, head_dim, factors)


class ValueNorms:
    """While open, records ``||f_h(x_j)||`` of every layer of the scored stack as the model runs.

    A forward hook on each layer's value projection turns its output into
    norms [batch, head, key] at once (the values themselves are not kept); a
    pre-hook on the stack starts a new pass. ALBERT's one shared layer is
    hooked once and records once per call, so once per layer. Making one
    finds the projections (or raises a ProbingError naming ``--attention
    norms``); :meth:`changes` are its hooks, for :func:`probing.model.hooks.hooked`
    (opening it installs them); :meth:`take` gives the last pass's norms.

    >>> from probing.model.loading import load_model
    >>> from probing.testing import tiny_bert
    >>> loaded = load_model(tiny_bert())
    >>> ids = torch.tensor([[2, 20, 21, 3]])
    >>> with ValueNorms(loaded) as capture:
    ...     weights = attention(loaded, ids, torch.ones_like(ids))
    ...     norms = capture.take()
    >>> tuple(norms.shape)  # [batch, layer, head, key]
    (1, 2, 4, 4)
    """

    def __init__(self, loaded):
        self.loaded = loaded
        found = find_self_attentions(loaded)
        if not found:
            raise _cannot_read(loaded, "no self-attention with a known value and output projection was found")
        self._attentions = [_hooked_attention(loaded, module, layout) for _, module, layout in found]
        self._records: list[torch.Tensor] = []
        self._open: contextlib.AbstractContextManager | None = None

    def changes(self) -> list[Change]:
        """The hooks that record the norms: a pre-hook on the stack, one forward hook per value projection."""
        return [PreForwardHook(scored_stack(self.loaded), self._new_pass),
                *(ForwardHook(hooked_attention.value_module, self._recorder(hooked_attention))
                  for hooked_attention in self._attentions)]

    def __enter__(self) -> "ValueNorms":
        if self._open is not None:
            raise RuntimeError("this ValueNorms is already attached")
        self._records = []
        opened = hooked(*self.changes())
        opened.__enter__()
        self._open = opened
        return self

    def __exit__(self, *exc) -> None:
        opened, self._open = self._open, None
        opened.__exit__(*exc)

    def _new_pass(self, module, args) -> None:
        self._records = []

    def _recorder(self, hooked_attention: _HookedAttention):
        def record(module, args, output) -> None:
            self._records.append(hooked_attention.norms(output))

        return record

    def recorded(self, layer: int) -> torch.Tensor:
        """The norms of ``layer`` in the pass running now, float32 [batch, head, key] (its value projection
        runs before its attention weights exist)."""
        if layer >= len(self._records):
            raise _cannot_read(self.loaded, f"its layer {layer} gave attention weights before its values")
        return self._records[layer]

    def take(self) -> torch.Tensor:
        """The norms of the last pass, float32 [batch, layer, head, key]; clears them."""
        records, self._records = self._records, []
        if len(records) != self.loaded.num_layers:
            raise _cannot_read(
                self.loaded,
                f"its value projections ran {len(records)} times in a pass of {self.loaded.num_layers} layers",
            )
        return torch.stack(records, dim=1)


def norm_weighted(weights: torch.Tensor, value_norms: torch.Tensor) -> torch.Tensor:
    """Norm-based attention ``N[b, l, h, i, j] = weights[b, l, h, i, j] * value_norms[b, l, h, j]``.

    weights [batch, layer, head, query, key]; value_norms [batch, layer, head, key].
    Padded keys stay 0 (their weights are 0); rows are not renormalised.

    >>> weights = torch.tensor([0.75, 0.25]).expand(1, 1, 1, 2, 2)
    >>> norm_weighted(weights, torch.tensor([[[[0.1, 2.0]]]]))[0, 0, 0]
    tensor([[0.0750, 0.5000],
            [0.0750, 0.5000]])
    """
    return weights * value_norms.to(weights.device, weights.dtype).unsqueeze(-2)


# --------------------------------------------------------------------------------------------
# Attention rollout


def rollout(weights: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Attention rollout of every layer, float32 [batch, layer, 1, query, key].

    weights [batch, layer, head, query, key]; attention_mask [batch, tok] (1 real, 0 padding).
    Padded rows and keys are 0 whatever the weights hold there, so padding
    never reaches a real row; real rows sum to 1.

    >>> weights = torch.tensor([[1.0, 0.0], [1.0, 0.0]]).expand(1, 2, 1, 2, 2)  # two layers: all to token 0
    >>> rollout(weights, torch.tensor([[1, 1]]))[0, :, 0]
    tensor([[[1.0000, 0.0000],
             [0.5000, 0.5000]],
    <BLANKLINE>
            [[1.0000, 0.0000],
             [0.7500, 0.2500]]])
    """
    rolled, step = [], RolloutStep(attention_mask)
    for layer in range(weights.shape[1]):
        rolled.append(step(weights[:, layer]))
    return torch.stack(rolled, dim=1).unsqueeze(2)


class RolloutStep:
    """Rollout one layer at a time: each call takes a layer's weights [batch, head, query, key] and returns
    ``R_l`` [batch, query, key]; only ``R_{l-1}`` is kept between calls."""

    def __init__(self, attention_mask: torch.Tensor):
        self.attention_mask, self.previous = attention_mask, None

    def __call__(self, weights: torch.Tensor) -> torch.Tensor:
        tokens = weights.shape[-1]
        real = self.attention_mask.to(weights.device).bool()  # [batch, tok]
        pairs = real[:, :, None] & real[:, None, :]  # [batch, query, key]
        identity = torch.eye(tokens, device=weights.device, dtype=torch.float32)
        mixed = 0.5 * weights.float().mean(dim=1) + 0.5 * identity  # [batch, query, key]
        # where, not a product: padded rows may hold anything (even NaN) and must not leak
        mixed = torch.where(pairs, mixed, torch.zeros((), device=weights.device))
        totals = mixed.sum(dim=-1, keepdim=True)
        mixed = torch.where(totals > 0, mixed / totals.clamp_min(torch.finfo(torch.float32).tiny), 0.0)
        self.previous = mixed if self.previous is None else torch.matmul(mixed, self.previous)  # R_l = A_l R_{l-1}
        return self.previous


# --------------------------------------------------------------------------------------------
# The registry


class Reading:
    """The raw attention weights (softmax output), as the model computes them.

    A reading attaches to a loaded model for a whole pass (:meth:`attached`)
    and turns one batch into the tensor every analysis reads (:meth:`read`),
    float32 [batch, layer, head, query, key]. ``rows_sum_to_one``: whether each
    real row of the reading sums to 1; when False (norms), a share of a row is
    its part of the row's sum.
    """

    name = "weights"
    summary = "the attention weights as the model returns them"
    rows_sum_to_one = True

    def heads(self, num_heads: int) -> int:
        """How many "heads" per layer this reading yields (the heads of its tables)."""
        return num_heads

    def attached(self, loaded) -> ContextManager[Any]:
        """Held around a whole pass; raises a ProbingError at once if the reading cannot read ``loaded``."""
        return contextlib.nullcontext()

    def read(self, loaded, batch) -> torch.Tensor:
        """One batch (``input_ids``, ``attention_mask`` [batch, tok]) -> [batch, layer, head, query, key]."""
        layers: list[torch.Tensor] = []
        self.each_layer(loaded, batch, lambda layer, values: layers.append(values))
        return torch.stack(layers, dim=1)

    def each_layer(self, loaded, batch, consume) -> None:
        """``consume(layer, values [batch, head, query, key])`` for every layer in order, each as soon as the
        model has computed it (probing.model.extraction.each_layer): a pass holds one layer's token attention."""
        each_layer(loaded, batch.input_ids, batch.attention_mask, consume)

    def __repr__(self) -> str:
        return f"<reading {self.name}>"


class NormsReading(Reading):
    """Norm-based attention: the weights times ||f_h(x_j)||, from the same forward pass.

    The value norms are captured around each batch's own pass (:class:`ValueNorms`,
    about 3 ms to attach on MiniLM), so any model can be read, e.g. the second
    model of a comparison, whatever was attached for the pass.
    """

    name = "norms"
    summary = "weights times the norm of each token's transformed value (Kobayashi et al. 2020)"
    rows_sum_to_one = False

    def attached(self, loaded) -> ContextManager[Any]:
        ValueNorms(loaded)  # finds the projections now: an unreadable model fails before any batch
        return contextlib.nullcontext()

    def each_layer(self, loaded, batch, consume) -> None:
        with ValueNorms(loaded) as capture:
            def weighted(layer: int, weights: torch.Tensor) -> None:  # weights [batch, head, query, key]
                consume(layer, norm_weighted(weights[:, None], capture.recorded(layer)[:, None])[:, 0])

            super().each_layer(loaded, batch, weighted)
            capture.take()  # every layer's value projection ran once


class RolloutReading(Reading):
    """Attention rollout: one map per layer, so one "head" per layer."""

    name = "rollout"
    summary = "attention rolled out through the layers and residual connections (Abnar and Zuidema 2020)"

    def heads(self, num_heads: int) -> int:
        return 1

    def each_layer(self, loaded, batch, consume) -> None:
        step = RolloutStep(batch.attention_mask)
        super().each_layer(loaded, batch, lambda layer, weights: consume(layer, step(weights).unsqueeze(1)))


READINGS: Registry[Reading] = Registry("attention reading", option=OPTION)
for _reading in (Reading(), NormsReading(), RolloutReading()):
    READINGS.register(_reading.name, _reading)
