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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import prod

import numpy as np
import torch

from probing.stats.poisson_draws import poisson_draws

CHUNK_SENTENCES = 512
"""Sentences whose counts :class:`ReplicateSums` holds before weighting them: one [replicate, 512] x [512, N]
product instead of sixteen [replicate, 32] x [32, N] ones, and the result rounded, converted and added once
instead of sixteen times (benchmarks/RESULTS.md, "The bootstrap's weighting", measures both ways)."""

EXACT_IN_FLOAT32 = 2**24
"""Whole numbers below this are exact in float32, and so is every product and partial sum of such numbers."""


@dataclass(frozen=True)
class BootstrapSpec:
    """A count's Poisson bootstrap: how many replicates, and the seed every sentence's weights are drawn from."""

    replicates: int = 1000
    seed: int = 0


def poisson_weights(sentence_indices: Sequence[int], *, replicates: int, seed: int,
                    compact: bool = False) -> torch.Tensor:
    """float64 [replicate, sentence] weights; column s depends on (seed, index s) only: it is
    ``np.random.default_rng([seed, index]).poisson(1.0, replicates)``, drawn by a compiled copy of numpy's
    generator for a whole batch at once (probing.stats.poisson_draws; the same numbers, a test checks).

    ``compact``: the same whole numbers as uint8 (Poisson(1) draws stay far below 256; int64 in the
    unthinkable case they do not), an eighth of the bytes, for weights made on the input side that travel
    from a worker process (:func:`replicate` takes either).

    >>> poisson_weights([0], replicates=3, seed=0, compact=True).dtype
    torch.uint8
    """
    columns = poisson_draws(sentence_indices, replicates=replicates, seed=seed)  # the same numbers, compiled
    if columns is None:  # no numba, or an index beyond one 32-bit word: numpy's own generators
        columns = np.stack([np.random.default_rng([seed, int(index)]).poisson(1.0, replicates)
                            for index in sentence_indices], axis=1)  # int64 [replicate, sentence]
    if not compact:
        return torch.from_numpy(columns.astype(np.float64))
    return torch.from_numpy(columns.astype(np.uint8) if columns.size and columns.max() < 256 else columns)


def replicate(weights: torch.Tensor, per_sentence: torch.Tensor) -> torch.Tensor:
    """long [replicate, ...]: whole-number per-sentence counts [sentence, ...] weighted by ``weights``
    [replicate, sentence], on the counts' device; in float32 when every partial sum is a whole number below
    2**24 (then exact, and twice as fast), else in float64.

    >>> replicate(torch.tensor([[1., 2.]], dtype=torch.float64), torch.tensor([[3, 1], [1, 0]])).tolist()
    [[5, 1]]
    """
    flat = per_sentence.reshape(per_sentence.shape[0], -1)
    # every partial sum is at most the largest weight times the largest column total
    largest = float(weights.max()) * float(flat.sum(dim=0).max()) if flat.numel() else 0.0
    dtype = torch.float32 if largest < EXACT_IN_FLOAT32 else torch.float64
    weighted = weights.to(device=flat.device, dtype=dtype) @ flat.to(dtype)
    return weighted.round().long().view((weights.shape[0],) + per_sentence.shape[1:])


class replicated:  # noqa: N801 (used like ``property``)
    """A counter's ``boot_NAME`` attribute: its ``ReplicateSums``' sums of NAME (``self.replicates[NAME]``).

    >>> class Counts:
    ...     boot_words = replicated()
    ...     def __init__(self):
    ...         self.replicates = ReplicateSums(2, 0, {"words": ()})
    >>> Counts().boot_words.tolist()
    [0, 0]
    """

    def __set_name__(self, owner, name: str) -> None:
        self.key = name.removeprefix("boot_")

    def __get__(self, counts, owner=None):
        return self if counts is None else counts.replicates[self.key]


class ReplicateSums:
    """Bootstrap replicate sums of whole-number per-sentence counts, weighted in chunks of sentences.

    ``self[name][b] = sum over sentences s of poisson_weights[b, s] * counts[name][s]``, as long integers.
    :meth:`add` only keeps a batch's per-sentence counts (on their device); every ``chunk`` sentences, and
    whenever a sum is read, one product with those sentences' Poisson weights adds them in: in float32 when
    every partial sum is a whole number below 2**24 (then exact), else in float64. The sums do not depend on
    the chunking, so parts, shards and resumed runs still add up to one run's.

    >>> sums = ReplicateSums(replicates=3, seed=0, shapes={"correct": (2,)})
    >>> sums.add([0, 1], {"correct": torch.tensor([[1., 0.], [2., 1.]])})
    >>> expected = poisson_weights([0, 1], replicates=3, seed=0) @ torch.tensor([[1., 0.], [2., 1.]], dtype=torch.float64)
    >>> bool((sums["correct"] == expected.long()).all()), tuple(sums["correct"].shape)
    (True, (3, 2))
    """

    def __init__(self, replicates: int, seed: int, shapes: Mapping[str, tuple[int, ...]], chunk: int = CHUNK_SENTENCES):
        self.replicates, self.seed, self.chunk = replicates, seed, chunk
        self.shapes = {name: tuple(shape) for name, shape in shapes.items()}
        self._sums = {name: torch.zeros((replicates,) + shape, dtype=torch.long) for name, shape in self.shapes.items()}
        self._indices: list[int] = []
        self._pending: list[torch.Tensor] = []  # float32 [sentence, sum of the flattened shapes] per batch
        self._weights: list[torch.Tensor | None] = []  # the batches' Poisson weights, where drawn in advance

    def add(self, sentence_indices: Sequence[int], counts: Mapping[str, torch.Tensor],
            weights: torch.Tensor | None = None) -> None:
        """Keep one batch's counts: ``counts[name]`` [sentence, *shapes[name]], whole numbers (kept as float32,
        or as float64 when given so). ``weights`` are the batch's ``poisson_weights`` if drawn already (on the
        input side, off the model's way); else they are drawn when the chunk is weighted."""
        sentences = len(sentence_indices)
        # float32 holds every whole number below 2**24; a float64 count stays float64
        flat = [counts[name].reshape(sentences, prod(shape)) for name, shape in self.shapes.items()]
        flat = [part if part.dtype == torch.float64 else part.float() for part in flat]
        self._pending.append(torch.cat(flat, dim=1))
        self._weights.append(weights)
        self._indices.extend(int(index) for index in sentence_indices)
        if len(self._indices) >= self.chunk:
            self.flush()

    def flush(self) -> None:
        """Weight the kept sentences' counts and add them into the sums."""
        if not self._indices:
            return
        per_sentence = torch.cat(self._pending)
        if all(drawn is not None for drawn in self._weights):
            weights = torch.cat(self._weights, dim=1)  # [replicate, sentence], the same draws made earlier
        else:
            weights = poisson_weights(self._indices, replicates=self.replicates, seed=self.seed)  # [replicate, sentence]
        self._indices, self._pending, self._weights = [], [], []
        weighted = replicate(weights, per_sentence).cpu()
        start = 0
        for name, shape in self.shapes.items():
            width = prod(shape)
            self._sums[name] += weighted[:, start : start + width].view(self._sums[name].shape)
            start += width

    def __getitem__(self, name: str) -> torch.Tensor:
        """long [replicate, *shape]: the sums so far (the stored tensor: adding into it or copying over it is kept)."""
        self.flush()
        return self._sums[name]
