"""How attention is read: the raw weights (more readings register here).

A reading attaches to a loaded model for a whole pass (hooks it may need)
and turns one batch into the tensor every analysis reads:
float32 [batch, layer, head, query, key].

>>> READINGS.names()
['weights']
"""

from __future__ import annotations

import contextlib

import torch

from .registry import Registry


class Reading:
    """The raw attention weights (softmax output), as the model computes them."""

    name = "weights"

    def heads(self, num_heads: int) -> int:
        """How many "heads" per layer this reading yields."""
        return num_heads

    def attached(self, loaded) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def read(self, loaded, batch) -> torch.Tensor:
        from .extraction import attention

        return attention(loaded, batch.input_ids, batch.attention_mask)


READINGS: Registry[Reading] = Registry("attention reading", option="--attention")
READINGS.register("weights", Reading())
