"""Minimal-pair accuracies from sentence log-probabilities (torch-free: result files and ablations read it too).

A pair is right when log p(good) > log p(bad) (a tie is wrong). Accuracy per paradigm, per field and per
phenomenon, and overall as the mean of the paradigm accuracies (BLiMP's convention), each with a 95% Wilson score
interval (:func:`accuracies`); a difference between two runs on the same pairs has a paired percentile
bootstrap interval, pairs resampled within each paradigm (:func:`paradigm_draws`, seeded, so reproducible).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from probing.stats.intervals import LEVEL, bootstrap_block, interval_pair, mean_proportion_interval, wilson_interval


def paradigm_draws(size: int, bootstrap: int, seed: int, index: int) -> np.ndarray:
    """The bootstrap's resamples of paradigm number ``index`` (of ``size`` pairs): [replicate, size] pair rows.

    Seeded by (seed, paradigm index), so every run that resamples the same paradigms draws the same pairs.

    >>> paradigm_draws(3, 2, seed=0, index=0).shape
    (2, 3)
    """
    return np.random.default_rng([seed, index]).integers(0, size, size=(bootstrap, size))


def accuracies(pairs, good: Sequence[float], bad: Sequence[float], *, bootstrap: int = 1000, seed: int = 0,
               level: float = LEVEL) -> dict:
    """Per paradigm, per field, per phenomenon and overall accuracy with 95% Wilson score intervals.

    A paradigm's, a field's and a phenomenon's accuracy is a proportion of pairs right, so its interval is the Wilson
    score
    interval of that count, which does not collapse at 0 or 100% as a percentile bootstrap does (20 pairs all
    right: [83.9, 100.0]). The overall accuracy is the mean of the paradigm accuracies, not one proportion: its
    interval is the Wilson interval of that mean at the effective number of pairs (the pooled count's when every
    paradigm has as many pairs; probing.stats.intervals.mean_proportion_interval). ``bootstrap`` and ``seed`` are
    recorded: they draw the paired intervals of a difference between two runs on the same pairs (the board's
    table of paradigms that move with the context, :func:`paradigm_draws`).

    >>> from probing.data.minimal_pairs import MinimalPair
    >>> pairs = [MinimalPair("a", "syntax", "g", "b")] * 2 + [MinimalPair("b", "morphology", "g", "b")] * 2
    >>> result = accuracies(pairs, [0.0, -1.0, -2.0, -1.0], [-1.0, -1.0, -1.0, -2.0], bootstrap=0)
    >>> result["overall"]["accuracy"], result["paradigms"]["a"]["accuracy"], result["paradigms"]["a"]["right"]
    (0.5, 0.5, [True, False])
    >>> [round(bound, 3) for bound in result["paradigms"]["b"]["interval"]]  # 1 of 2 right
    [0.095, 0.905]
    >>> result["phenomena"]  # the pairs name none
    {}
    """
    right = np.asarray(good, dtype=np.float64) > np.asarray(bad, dtype=np.float64)
    uids = list(dict.fromkeys(pair.uid for pair in pairs))
    fields = list(dict.fromkeys(pair.field for pair in pairs))
    rows = {uid: np.array([i for i, pair in enumerate(pairs) if pair.uid == uid]) for uid in uids}
    field_of = {uid: next(pair.field for pair in pairs if pair.uid == uid) for uid in uids}
    term_of = {uid: next(pair.term for pair in pairs if pair.uid == uid) for uid in uids}
    paradigms = {}
    for uid in uids:
        n, correct = len(rows[uid]), int(right[rows[uid]].sum())
        paradigms[uid] = {"field": field_of[uid], "phenomenon": term_of[uid], "pairs": n, "accuracy": correct / n,
                          "interval": interval_pair(wilson_interval(correct, n, level)),
                          "right": right[rows[uid]].tolist(), "log_p_good": [float(good[i]) for i in rows[uid]],
                          "log_p_bad": [float(bad[i]) for i in rows[uid]]}
    def pooled(members: list[str]) -> dict:
        total = sum(len(rows[uid]) for uid in members)
        correct = sum(int(right[rows[uid]].sum()) for uid in members)
        return {"paradigms": len(members), "pairs": total, "accuracy": correct / total,
                "interval": interval_pair(wilson_interval(correct, total, level))}

    by_field = {name: pooled([uid for uid in uids if field_of[uid] == name]) for name in fields}
    terms = [term for term in dict.fromkeys(term_of.values()) if term]  # a paradigm that names none is in none
    by_term = {name: pooled([uid for uid in uids if term_of[uid] == name]) for name in terms}
    shares = [paradigms[uid]["accuracy"] for uid in uids]
    sizes = [paradigms[uid]["pairs"] for uid in uids]
    overall = {"paradigms": len(uids), "pairs": len(pairs),
               "accuracy": float(np.mean(shares)) if uids else None,
               "interval": interval_pair(mean_proportion_interval(shares, sizes, level)) if uids else None}
    return {"overall": overall, "fields": by_field, "phenomena": by_term, "paradigms": paradigms,
            "bootstrap": bootstrap_block(bootstrap, seed, method=None, level=level)}
