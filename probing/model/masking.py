"""Which tokens of a unit are masked for a masked-LM loss: one seeded rule for every command.

A unit masks ``rate`` of its real, non-special tokens (at least one),
drawn from a generator seeded by ``(seed, unit index)`` alone, so batch
size, order, shards and processes change nothing, and ``probing ablate
--metric mlm`` and ``probing gradients`` mask the same tokens for the same seed.

>>> import torch
>>> choose_masked(torch.tensor([1, 1, 1, 1, 1]), torch.tensor([1, 0, 0, 0, 1]), seed=0, index=3).tolist()
[False, False, True, False, False]
>>> masked = mask_batch(torch.tensor([[5, 6, 7, 8]]), torch.ones(1, 4), torch.tensor([[True, False, False, True]]),
...                     [3], mask_token_id=1, seed=0)
>>> masked.input_ids.tolist(), masked.labels.tolist()
([[5, 6, 1, 8]], [[-100, -100, 7, -100]])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

MASK_RATE = 0.15
IGNORED = -100
"""The label of tokens the loss ignores (transformers' convention)."""


def choose_masked(real: torch.Tensor, special: torch.Tensor, *, seed: int, index: int, rate: float = MASK_RATE) -> torch.Tensor:
    """bool [tok]: the tokens of one unit to mask (``rate`` of its candidates, at least one)."""
    candidates = torch.nonzero(real.bool() & ~special.bool()).flatten().numpy()
    chosen = torch.zeros(real.shape[0], dtype=torch.bool)
    if len(candidates) == 0:
        return chosen
    count = max(1, round(rate * len(candidates)))
    picked = np.random.default_rng([seed, index]).choice(candidates, count, replace=False)
    chosen[torch.from_numpy(np.sort(picked))] = True
    return chosen


@dataclass(frozen=True)
class MaskedBatch:
    """input ids with the mask token in place, and labels (``IGNORED`` where not masked): [batch, tok]."""

    input_ids: torch.Tensor
    labels: torch.Tensor


def mask_batch(input_ids: torch.Tensor, attention_mask: torch.Tensor, is_special: torch.Tensor,
               indices: Sequence[int], *, mask_token_id: int, seed: int, rate: float = MASK_RATE) -> MaskedBatch:
    """Mask every row of a padded batch by :func:`choose_masked` (row i is unit ``indices[i]``)."""
    chosen = torch.stack([
        choose_masked(attention_mask[row], is_special[row], seed=seed, index=index, rate=rate)
        for row, index in enumerate(indices)
    ])  # [batch, tok]
    masked = torch.where(chosen, torch.full_like(input_ids, mask_token_id), input_ids)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, IGNORED))
    return MaskedBatch(masked, labels)
