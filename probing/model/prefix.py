"""Reusing the layers below the first disabled head: ablation conditions share the intact model's prefix.

A condition that disables heads only in layer ``L`` and above computes
layers ``0 .. L-1`` exactly as the intact model does. :class:`SharedPrefix`
records each layer's output during the intact model's pass over a batch and,
while a group of conditions runs, makes the layers below the group's first
disabled layer return those outputs (repeated once per stacked copy) instead
of computing them. ``--each-head`` over ``L`` layers then costs about half
of one full forward pass per condition: a head in layer ``l`` reruns only
``L - l`` layers.

Layers are the ``num_layers`` blocks of the transformer's layer list (a
``ModuleList`` of that length in which every block holds one attention
module). A model whose blocks cannot be found that way (ALBERT shares one
block) or whose blocks give other numbers when skipped (the check in
:meth:`SharedPrefix.find` runs a tiny batch both ways) runs every condition
whole, as before.

>>> import torch
>>> from probing.model.loading import load_model
>>> from probing.testing import tiny_bert
>>> loaded = load_model(tiny_bert())
>>> prefix = SharedPrefix.find(loaded)
>>> ids = torch.tensor([[2, 10, 11, 3]])
>>> with prefix.recording():
...     whole = loaded.base(input_ids=ids).last_hidden_state
>>> with prefix.reusing(first_layer=1, copies=1):  # the same shapes as recorded: the same numbers, bit for bit
...     again = loaded.base(input_ids=ids).last_hidden_state
>>> torch.equal(again, whole)
True

Two copies make a batch of another shape, whose matrix products may round
differently (a batch of 2 and a batch of 1 differ by 1.2e-7 on some CPUs):
equal within :data:`TOLERANCE` of the largest value.

>>> with prefix.reusing(first_layer=1, copies=2):
...     reused = loaded.base(input_ids=ids.repeat(2, 1)).last_hidden_state
>>> within_tolerance(reused, whole.repeat(2, 1, 1))
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

from probing.model.hooks import ForwardHook, ReplacedForward, hooked
from probing.model.layout import attention_layers

TOLERANCE = (1e-5, 1e-6)
"""(relative to the largest value, absolute): how far a reused pass may be from the whole one. Float32
rounding of matrix products of other shapes; SmolLM2's 30 layers differ by 4e-6 on hidden states of size 56."""


def within_tolerance(reused: torch.Tensor, whole: torch.Tensor) -> bool:
    """Whether a reused pass gives the whole pass's numbers up to :data:`TOLERANCE` (relative to the
    largest value rather than to each one: small values carry the rounding of large ones)."""
    relative, absolute = TOLERANCE
    reused, whole = reused.detach(), whole.detach()
    return float((reused - whole).abs().max()) <= relative * float(whole.abs().max()) + absolute


class SharedPrefix:
    """The blocks of one loaded model, and the outputs its last intact pass recorded."""

    def __init__(self, blocks: list[torch.nn.Module]):
        self.blocks = blocks
        self.outputs: list = []

    @classmethod
    def find(cls, loaded) -> "SharedPrefix | None":
        """The model's blocks, when skipping them is exact on a tiny batch; else None."""
        blocks = _blocks(loaded.base, loaded.num_layers)
        if blocks is None:
            return None
        prefix = cls(blocks)
        try:
            return prefix if prefix._agrees(loaded) else None
        except Exception:  # a block whose output cannot be repeated row-wise, a cache that needs every layer
            return None

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Within the block, each forward pass of the model keeps every layer's output."""
        self.outputs = [None] * len(self.blocks)

        def keeper(index: int):
            def keep(module, args, output) -> None:
                self.outputs[index] = output

            return keep

        with hooked(*(ForwardHook(block, keeper(index)) for index, block in enumerate(self.blocks))):
            yield

    def reusing(self, first_layer: int, copies: int) -> contextlib.AbstractContextManager[None]:
        """Within the block, layers below ``first_layer`` are not computed: each returns the recorded output
        of layer ``first_layer - 1`` repeated ``copies`` times along the batch (the rows of a stacked pass
        are copy-major), which is all the layers above read."""
        if first_layer <= 0:
            return contextlib.nullcontext()
        reused = _repeated(self.outputs[first_layer - 1], copies)
        return hooked(*(ReplacedForward(block, lambda *args, **kwargs: reused) for block in self.blocks[:first_layer]))

    def _agrees(self, loaded) -> bool:
        """Whether the last layer computed on the recorded input of the layers below gives the whole pass."""
        ids = torch.tensor([[loaded.prepend_token_id or 0, 5, 6, 7, 8]], device=loaded.device)
        ones = torch.ones_like(ids)
        with torch.inference_mode():
            with self.recording():
                whole = loaded.base(input_ids=ids, attention_mask=ones).last_hidden_state
            with self.reusing(len(self.blocks) - 1, copies=2):
                reused = loaded.base(input_ids=ids.repeat(2, 1), attention_mask=ones.repeat(2, 1)).last_hidden_state
        return within_tolerance(reused, whole.repeat(2, 1, 1))  # the reused pass multiplies matrices of other shapes


def _blocks(base: torch.nn.Module, num_layers: int) -> list[torch.nn.Module] | None:
    """The ``num_layers`` blocks of the layer list, each holding one layer's attention modules."""
    try:
        layer_of = attention_layers(base, num_layers)
    except Exception:
        return None
    for module in base.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == num_layers:
            blocks = list(module)
            owned = [{layer_of[sub] for sub in block.modules() if sub in layer_of} for block in blocks]
            if all(layers == {index} for index, layers in enumerate(owned)):
                return blocks
    return None


def _repeated(output, copies: int):
    """A block's output (a tensor, or a tuple of tensors and None) with every tensor's rows repeated."""
    if isinstance(output, torch.Tensor):
        return output.repeat(copies, *([1] * (output.dim() - 1)))
    if isinstance(output, tuple):
        return type(output)(_repeated(item, copies) for item in output)
    if output is None:
        return None
    raise TypeError(f"cannot repeat a layer output of type {type(output).__name__}")
