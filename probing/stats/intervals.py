"""Percentile bootstrap intervals from Poisson-bootstrap replicate counts, and Wilson score intervals of a
proportion counted directly (:func:`wilson_interval`: minimal pairs right, where no replicate is needed).

A result file stores, for every replicate ``b``, the weighted counts
``boot_total[b, r]`` (pairs of relation r) and ``boot_heads[b, r, d, l, h]`` /
``boot_baselines[b, r, o]`` (correct predictions); see
``probing.stats.bootstrap``. A replicate's accuracy is correct / total, and
the 95% interval is the 2.5th and 97.5th percentile over replicates. Head and
baseline are scored on the same resampled sentences, so their difference is
paired: its interval is far narrower than the two separate intervals suggest.

Pure numpy (no torch), so leaderboards and plots can use it on result files.

>>> total = np.array([10, 10, 10, 10]); correct = np.array([9, 8, 7, 9])
>>> accuracy_interval(correct, total, level=0.5)
(0.775, 0.9)
>>> diff = paired_difference(correct, np.array([5, 8, 8, 4]), total, level=0.5)
>>> diff["p_not_better"]
0.5
"""

from __future__ import annotations

import numpy as np

LEVEL = 0.95
"""Default coverage of every interval."""

BOOTSTRAP_ARRAYS = ("boot_total", "boot_heads", "boot_baselines")


def bootstrap_block(replicates: int, seed: int, *, method: str | None = "poisson", **more) -> dict:
    """The bootstrap's settings as a result's config or payload records them: ``replicates``, ``seed`` and the
    ``method`` (left out where ``None``), then ``more`` in its order (a ``unit``, a ``level``, replicate sums).

    >>> bootstrap_block(1000, 0)
    {'replicates': 1000, 'seed': 0, 'method': 'poisson'}
    >>> bootstrap_block(200, 3, unit="window"), bootstrap_block(0, 1, method=None, level=0.95)
    ({'replicates': 200, 'seed': 3, 'method': 'poisson', 'unit': 'window'}, {'replicates': 0, 'seed': 1, 'level': 0.95})
    """
    block = {"replicates": replicates, "seed": seed}
    if method is not None:
        block["method"] = method
    return {**block, **more}


def replicate_accuracies(correct, total) -> np.ndarray:
    """Accuracy of every replicate, float [replicate]; replicates that drew no pair are dropped
    (their accuracy is undefined, and a relation with few pairs can draw none)."""
    correct, total = np.asarray(correct, dtype=np.float64), np.asarray(total, dtype=np.float64)
    kept = total > 0
    return correct[kept] / total[kept]


def percentile_interval(values, level: float = LEVEL) -> tuple[float, float] | None:
    """The central ``level`` percentile interval of ``values``; None when there are none. Undefined values
    (NaN: a replicate that drew no unit, whose ratio is 0 / 0) are left out, as :func:`replicate_accuracies`
    leaves out replicates without a pair.

    >>> percentile_interval(np.arange(101), level=0.5)
    (25.0, 75.0)
    >>> percentile_interval([np.nan, 1.0, 3.0], level=0.5), percentile_interval([np.nan])
    ((1.5, 2.5), None)
    """
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return float(low), float(high)


def wilson_interval(right, n, level: float = LEVEL) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion ``right / n`` (None when ``n`` is 0): unlike a percentile
    bootstrap it does not collapse to one point at 0 or 1 (20 pairs all right: [0.839, 1.0], not [1.0, 1.0]),
    and it stays inside [0, 1]. ``n`` may be an effective number of trials, a float (see
    :func:`mean_proportion_interval`).

    >>> [round(bound, 3) for bound in wilson_interval(20, 20)]
    [0.839, 1.0]
    >>> [round(bound, 3) for bound in wilson_interval(5, 10)], wilson_interval(0, 0)
    ([0.237, 0.763], None)
    """
    from statistics import NormalDist

    if n <= 0:
        return None
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    share = right / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * float(np.sqrt(share * (1 - share) / n + z * z / (4 * n * n)))
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_proportion_interval(shares, sizes, level: float = LEVEL) -> tuple[float, float] | None:
    """The interval of the unweighted mean of K proportions (``shares`` [K] over ``sizes`` [K] trials each), as
    BLiMP's overall accuracy is the mean of its paradigms': the Wilson interval of the mean at the effective
    number of trials n = K^2 / sum(1 / size), the n at which one proportion has the variance the mean has under a
    common rate, p (1 - p) sum(1 / size) / K^2. With equal sizes it is the Wilson interval of all trials pooled,
    which is conservative: differences between the K rates only shrink the variance of a mean of strata.

    >>> mean_proportion_interval([0.5], [10]) == wilson_interval(5, 10)
    True
    >>> mean_proportion_interval([1.0, 0.5], [10, 10]) == wilson_interval(15, 20)
    True
    """
    shares, sizes = np.asarray(shares, dtype=np.float64), np.asarray(sizes, dtype=np.float64)
    if shares.size == 0 or np.any(sizes <= 0):
        return None
    effective = shares.size ** 2 / float(np.sum(1.0 / sizes))
    return wilson_interval(float(shares.mean()) * effective, effective, level)


def interval_pair(interval, *, decimals: int | None = None) -> list[float] | None:
    """An interval as a result stores it, ``[low, high]`` as floats (rounded to ``decimals`` where given), or
    None for none (``None`` or empty).

    >>> interval_pair((0.25, 0.75)), interval_pair(np.array([1 / 3, 2 / 3]), decimals=2), interval_pair(None)
    ([0.25, 0.75], [0.33, 0.67], None)
    """
    if interval is None or len(interval) == 0:
        return None
    low, high = float(interval[0]), float(interval[1])
    return [low, high] if decimals is None else [round(low, decimals), round(high, decimals)]


def finite_interval(values, level: float = LEVEL, *, decimals: int | None = None) -> list[float] | None:
    """:func:`interval_pair` of the percentile interval of the finite ``values`` (a replicate's ratio is
    infinite or undefined where it drew no unit of the denominator).

    >>> finite_interval(np.array([np.inf, 1.0, 3.0, np.nan]), level=0.5)
    [1.5, 2.5]
    """
    values = np.asarray(values, dtype=np.float64)
    return interval_pair(percentile_interval(values[np.isfinite(values)], level), decimals=decimals)


def accuracy_interval(correct, total, level: float = LEVEL) -> tuple[float, float] | None:
    """Interval of one accuracy from its replicate counts ``correct`` [B] and ``total`` [B]."""
    return percentile_interval(replicate_accuracies(correct, total), level)


def paired_difference(head_correct, baseline_correct, total, level: float = LEVEL) -> dict:
    """Head minus baseline accuracy on the same replicates.

    Returns ``{"interval": (low, high) or None, "p_not_better": float or None,
    "replicates": int}``: ``p_not_better`` is the fraction of replicates in which
    the head is not more accurate than the baseline (difference <= 0).
    """
    total = np.asarray(total, dtype=np.float64)
    kept = total > 0
    difference = (
        np.asarray(head_correct, dtype=np.float64)[kept] - np.asarray(baseline_correct, dtype=np.float64)[kept]
    ) / total[kept]
    return {
        "interval": percentile_interval(difference, level),
        "p_not_better": float(np.mean(difference <= 0)) if difference.size else None,
        "replicates": int(difference.size),
    }


def head_vs_baseline(
    boot_total, boot_heads, boot_baselines, relation: int, choice: tuple[int, int, int], offset: int, level: float = LEVEL
) -> dict:
    """Intervals of one chosen head and one chosen offset of relation ``relation``.

    boot_total [B, R], boot_heads [B, R, direction, L, H], boot_baselines [B, R, O];
    ``choice`` is (direction index, layer, head) and ``offset`` the offset's index.
    """
    direction, layer, head = choice
    total = np.asarray(boot_total)[:, relation]
    head_correct = np.asarray(boot_heads)[:, relation, direction, layer, head]
    baseline_correct = np.asarray(boot_baselines)[:, relation, offset]
    return {
        "head": accuracy_interval(head_correct, total, level),
        "baseline": accuracy_interval(baseline_correct, total, level),
        "difference": paired_difference(head_correct, baseline_correct, total, level),
    }


def bootstrap_arrays(result: dict) -> dict[str, np.ndarray] | None:
    """The replicate counts of a probe result (its ``state``) as numpy arrays (no torch); None without a
    bootstrap. Decoded as every array of a result is (probing.results.schema.arrays.decode_array). A decoder's
    result also has ``boot_causal`` [B, R, L, H] (the causal direction)."""
    from probing.results.schema.arrays import decode_array

    if not result.get("bootstrap"):
        return None
    state = result["state"]
    names = BOOTSTRAP_ARRAYS + tuple(name for name in ("boot_causal",) if name in state)
    return {name: decode_array(state[name]) for name in names}
