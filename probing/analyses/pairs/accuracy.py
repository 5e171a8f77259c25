"""BLiMP accuracies from sentence log-probabilities (torch-free: result files and ablations read it too).

A pair is right when log p(good) > log p(bad) (a tie is wrong). Accuracy per paradigm and per field,
and overall as the mean of the paradigm accuracies (BLiMP's convention), each with a 95% percentile
bootstrap interval over pairs, resampled within each paradigm (seeded, so reproducible).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from probing.stats.intervals import LEVEL, bootstrap_block, interval_pair, percentile_interval


def paradigm_draws(size: int, bootstrap: int, seed: int, index: int) -> np.ndarray:
    """The bootstrap's resamples of paradigm number ``index`` (of ``size`` pairs): [replicate, size] pair rows.

    Seeded by (seed, paradigm index), so every run that resamples the same paradigms draws the same pairs.

    >>> paradigm_draws(3, 2, seed=0, index=0).shape
    (2, 3)
    """
    return np.random.default_rng([seed, index]).integers(0, size, size=(bootstrap, size))


def accuracies(pairs, good: Sequence[float], bad: Sequence[float], *, bootstrap: int = 1000, seed: int = 0,
               level: float = LEVEL) -> dict:
    """Per paradigm, per field and overall accuracy with bootstrap intervals over pairs.

    Each replicate resamples the pairs of every paradigm with replacement (seeded by (seed, paradigm
    index)); the overall figure of a replicate is the mean of its paradigm accuracies, and a field's the
    accuracy over its replicate's pairs.

    >>> from probing.data.minimal_pairs import MinimalPair
    >>> pairs = [MinimalPair("a", "syntax", "g", "b")] * 2 + [MinimalPair("b", "morphology", "g", "b")] * 2
    >>> result = accuracies(pairs, [0.0, -1.0, -2.0, -1.0], [-1.0, -1.0, -1.0, -2.0], bootstrap=0)
    >>> result["overall"]["accuracy"], result["paradigms"]["a"]["accuracy"], result["paradigms"]["a"]["right"]
    (0.5, 0.5, [True, False])
    """
    right = np.asarray(good, dtype=np.float64) > np.asarray(bad, dtype=np.float64)
    uids = list(dict.fromkeys(pair.uid for pair in pairs))
    fields = list(dict.fromkeys(pair.field for pair in pairs))
    rows = {uid: np.array([i for i, pair in enumerate(pairs) if pair.uid == uid]) for uid in uids}
    field_of = {uid: next(pair.field for pair in pairs if pair.uid == uid) for uid in uids}
    replicated = {}  # uid -> [replicate] (right count, pairs) of that paradigm's resample
    for index, uid in enumerate(uids):
        n = len(rows[uid])
        draws = paradigm_draws(n, bootstrap, seed, index) if bootstrap else None
        replicated[uid] = None if draws is None else right[rows[uid]][draws].sum(axis=1)

    def interval(values):
        return None if not bootstrap else interval_pair(percentile_interval(values, level))

    paradigms = {}
    for uid in uids:
        n = len(rows[uid])
        paradigms[uid] = {"field": field_of[uid], "pairs": n, "accuracy": float(right[rows[uid]].mean()),
                          "interval": interval(None if not bootstrap else replicated[uid] / n),
                          "right": right[rows[uid]].tolist(), "log_p_good": [float(good[i]) for i in rows[uid]],
                          "log_p_bad": [float(bad[i]) for i in rows[uid]]}
    by_field = {}
    for name in fields:
        members = [uid for uid in uids if field_of[uid] == name]
        total = sum(len(rows[uid]) for uid in members)
        correct = sum(int(right[rows[uid]].sum()) for uid in members)
        boot = None if not bootstrap else sum(replicated[uid] for uid in members) / total
        by_field[name] = {"paradigms": len(members), "pairs": total, "accuracy": correct / total,
                          "interval": interval(boot)}
    overall_boot = None if not bootstrap else np.mean([replicated[uid] / len(rows[uid]) for uid in uids], axis=0)
    overall = {"paradigms": len(uids), "pairs": len(pairs),
               "accuracy": float(np.mean([paradigms[uid]["accuracy"] for uid in uids])) if uids else None,
               "interval": interval(overall_boot) if uids else None}
    return {"overall": overall, "fields": by_field, "paradigms": paradigms,
            "bootstrap": bootstrap_block(bootstrap, seed, method=None, level=level)}
