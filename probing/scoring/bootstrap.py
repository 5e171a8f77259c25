"""Poisson bootstrap weights that depend only on a sentence's index.

Each sentence gets, per replicate, a weight drawn from Poisson(1), seeded by
``(seed, sentence index)``. A replicate's count is the weighted sum of the
per-sentence counts, so replicates accumulate in a stream, merge across shards
and processes by addition, and never need the corpus in memory (the Poisson
bootstrap approximates resampling n sentences with replacement).

>>> w = poisson_weights([0, 1, 2], replicates=4, seed=0)
>>> w.shape, bool((poisson_weights([1], replicates=4, seed=0)[:, 0] == w[:, 1]).all())
(torch.Size([4, 3]), True)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


def poisson_weights(sentence_indices: Sequence[int], *, replicates: int, seed: int) -> torch.Tensor:
    """float64 [replicate, sentence] weights; column s depends on (seed, index s) only."""
    columns = [np.random.default_rng([seed, int(index)]).poisson(1.0, replicates) for index in sentence_indices]
    return torch.from_numpy(np.stack(columns, axis=1).astype(np.float64))  # [replicate, sentence]
