"""Rank correlation and permutations within strata (the importance map's syntax-against-harm test).

Spearman's rho is Pearson's correlation of the two variables' ranks, tied values sharing the mean of the ranks
they span (average ranks, as scipy.stats.spearmanr ranks them). Values closer than ``tie`` count as tied, so that
two harms equal but for rounding (a mean of accuracies reached by different paradigms) share a rank instead of
being ordered by their last bits.

The permutation test shuffles one variable *within strata* (the heads of one layer): every permutation keeps each
value in its stratum, so whatever the strata differ by (depth) is the same in every permutation and cannot make
the correlation look larger than chance.

Pure numpy (no torch): it runs on result files.

>>> average_ranks([10.0, 20.0, 20.0, 5.0]).tolist()
[2.0, 3.5, 3.5, 1.0]
>>> round(spearman([1, 2, 3, 4], [10, 20, 20, 40]), 6)
0.948683
>>> permutations = within_strata([0, 0, 1, 1], count=3, seed=0)
>>> permutations.shape, bool((np.array([0, 0, 1, 1])[permutations] == [0, 0, 1, 1]).all())
((3, 4), True)
"""

from __future__ import annotations

import numpy as np

CHUNK = 2048
"""Permutations drawn and correlated at once: [chunk, heads] indices, a few MB for SmolLM2's 270 heads."""


def average_ranks(values, *, tie: float = 0.0) -> np.ndarray:
    """float [..., n]: the ranks (from 1) of ``values`` along the last axis; values within ``tie`` of their
    neighbour in sorted order share the mean of the ranks they span (a chain of such neighbours is one tie).

    >>> average_ranks([[3.0, 1.0, 2.0], [1.0, 1.0 + 1e-12, 0.0]], tie=1e-9).tolist()
    [[3.0, 1.0, 2.0], [2.5, 2.5, 1.0]]
    """
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, axis=-1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=-1)
    n = values.shape[-1]
    position = np.broadcast_to(np.arange(n), values.shape)
    starts = np.ones(values.shape, dtype=bool)               # a tie group starts where the step exceeds tie
    starts[..., 1:] = np.diff(ordered, axis=-1) > tie
    ends = np.ones(values.shape, dtype=bool)
    ends[..., :-1] = starts[..., 1:]
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=-1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, position, n - 1), axis=-1), axis=-1), axis=-1)
    ranks = np.empty(values.shape)
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=-1)
    return ranks


def centred(ranks) -> tuple[np.ndarray, np.ndarray]:
    """``ranks`` [..., n] minus their mean, and the norm of that along the last axis (0: every rank equal, no
    correlation is defined)."""
    ranks = np.asarray(ranks, dtype=np.float64)
    centre = ranks - ranks.mean(axis=-1, keepdims=True)
    return centre, np.sqrt(np.sum(centre * centre, axis=-1))


def spearman(x, y, *, tie: float = 0.0) -> float:
    """Spearman's rho of ``x`` and ``y`` [n] (average ranks; ``y``'s values within ``tie`` tied); NaN when either
    is constant."""
    return float(spearman_rows(x, np.asarray(y, dtype=np.float64)[None], tie=tie)[0])


def spearman_rows(x, rows, *, tie: float = 0.0) -> np.ndarray:
    """float [row]: Spearman's rho of ``x`` [n] with each of ``rows`` [row, n] (``rows``' values within ``tie``
    tied); NaN for a constant row, or for all of them when ``x`` is constant.

    >>> spearman_rows([1, 2, 3], [[1, 2, 3], [3, 2, 1], [5, 5, 5]]).round(12).tolist()
    [1.0, -1.0, nan]
    """
    x_centre, x_norm = centred(average_ranks(x))
    y_centre, y_norm = centred(average_ranks(rows, tie=tie))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (y_centre @ x_centre) / (y_norm * x_norm)
    return np.where((y_norm > 0) & (x_norm > 0), rho, np.nan)


def within_strata(strata, *, count: int, seed: int) -> np.ndarray:
    """int [count, n]: ``count`` random permutations of n positions, each moving every position only within its
    stratum (``strata`` [n], whole numbers such as layers): ``values[permutation]`` shuffles ``values`` within
    each stratum. Drawn from ``np.random.default_rng(seed)``; :func:`permuted_spearman` draws the same ones a chunk
    at a time.

    >>> sorted({tuple(p) for p in within_strata([0, 1, 1], count=20, seed=2).tolist()})   # 0 stays; 1 and 2 swap
    [(0, 1, 2), (0, 2, 1)]
    """
    return np.concatenate(list(_chunks(strata, count, seed, chunk=max(count, 1))))


def _chunks(strata, count: int, seed: int, chunk: int = CHUNK):
    """:func:`within_strata`'s permutations, ``chunk`` at a time, from one generator (the same numbers however
    they are cut: the generator's doubles come in one stream)."""
    strata = np.asarray(strata, dtype=np.int64)
    rng = np.random.default_rng(seed)
    by_stratum = np.argsort(strata, kind="stable")   # positions grouped by stratum, as the sorted keys are
    for start in range(0, count, chunk):
        keys = strata[None, :] + rng.random((min(chunk, count - start), strata.size))  # in [stratum, stratum + 1)
        permutations = np.empty(keys.shape, dtype=np.int64)
        permutations[:, by_stratum] = np.argsort(keys, axis=1)
        yield permutations


def permuted_spearman(x, y, strata, *, count: int, seed: int, tie: float = 0.0, chunk: int = CHUNK) -> np.ndarray:
    """float [permutation, column]: Spearman's rho of ``x`` [n] shuffled within ``strata`` (:func:`within_strata`,
    the same permutations for every column) with each column of ``y`` [n, column] (``y``'s values within ``tie``
    tied). Ranking commutes with shuffling, so ``x`` is ranked once and its ranks are shuffled.

    >>> y = np.array([[1.0], [3.0], [2.0], [4.0]])
    >>> rhos = permuted_spearman([1, 2, 3, 4], y, [0, 0, 1, 1], count=5, seed=0, chunk=2)
    >>> expected = [spearman(np.array([1, 2, 3, 4])[p], y[:, 0]) for p in within_strata([0, 0, 1, 1], count=5, seed=0)]
    >>> bool(np.allclose(rhos[:, 0], expected))
    True
    """
    x_centre, x_norm = centred(average_ranks(x))
    y_centre, y_norm = centred(average_ranks(np.asarray(y, dtype=np.float64).T, tie=tie))  # [column, n]
    rhos = [np.empty((0, y_centre.shape[0]))]
    for permutations in _chunks(strata, count, seed, chunk):
        with np.errstate(invalid="ignore", divide="ignore"):
            rhos.append((x_centre[permutations] @ y_centre.T) / (x_norm * y_norm))  # [chunk, column]
    return np.concatenate(rhos)
