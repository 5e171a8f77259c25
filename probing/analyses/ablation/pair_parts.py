"""The parts of ``--metric minimal-pairs`` from its right-or-wrong bits (torch-free: result files read it).

``overall`` is the mean of the paradigm accuracies (BLiMP's convention), ``field:NAME`` the share of a
field's pairs right, ``phenomenon:NAME`` the same over BLiMP's ``linguistics_term`` (the phenomenon a
relation's heads may serve, such as subject_verb_agreement). The bootstrap resamples pairs within each
paradigm with the draws of ``probing pairs`` (seeded by (seed, paradigm index)), and every condition is
counted on the same draws, so a condition's change from the intact model has a paired interval.

>>> from probing.data.minimal_pairs import MinimalPair
>>> pairs = [MinimalPair("a", "syntax", "", "", "island_effects")] * 2 + [MinimalPair("b", "morphology", "", "", "x")]
>>> layout = layout_of(pairs)
>>> part_names(layout)
['overall', 'field:syntax', 'field:morphology', 'phenomenon:island_effects', 'phenomenon:x']
>>> values, _ = pair_scores(np.array([[1, 0, 1]]), layout, bootstrap=0, seed=0)
>>> values[0].tolist()
[0.75, 0.5, 1.0, 0.5, 1.0]
"""

from __future__ import annotations

import numpy as np

from probing.analyses.pairs.accuracy import paradigm_draws


def layout_of(pairs) -> list[dict]:
    """The paradigms in reading order, each {uid, field, term, pairs}: its pairs are consecutive rows."""
    layout: list[dict] = []
    for pair in pairs:
        if not layout or layout[-1]["uid"] != pair.uid:
            layout.append({"uid": pair.uid, "field": pair.field, "term": pair.term, "pairs": 0})
        layout[-1]["pairs"] += 1
    return layout


def part_names(layout: list[dict]) -> list[str]:
    """overall, then each field, then each phenomenon, in order of first appearance."""
    fields = dict.fromkeys(entry["field"] for entry in layout)
    terms = dict.fromkeys(entry["term"] for entry in layout)
    return ["overall"] + [f"field:{name}" for name in fields] + [f"phenomenon:{name}" for name in terms]


def _multiplicities(size: int, bootstrap: int, seed: int, index: int) -> np.ndarray:
    """How often each pair of a paradigm is drawn in each replicate: [replicate, pair]."""
    draws = paradigm_draws(size, bootstrap, seed, index)  # [replicate, size] rows drawn
    counts = np.zeros((bootstrap, size))
    np.add.at(counts, (np.arange(bootstrap)[:, None], draws), 1)
    return counts


def pair_scores(right, layout: list[dict], *, bootstrap: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """values [condition, part] and replicates [replicate, condition, part] from ``right`` [condition, pair].

    The intact row equals ``probing pairs``'s figures on the same pairs: the same draws and the same sums.
    """
    right = np.asarray(right, dtype=np.float64)
    conditions, names = right.shape[0], part_names(layout)
    correct = np.zeros((len(layout), conditions))                # [paradigm, condition]
    boot_correct = np.zeros((len(layout), bootstrap, conditions))  # [paradigm, replicate, condition]
    start = 0
    for index, entry in enumerate(layout):
        rows = right[:, start : start + entry["pairs"]]          # [condition, pair]
        correct[index] = rows.sum(axis=1)
        if bootstrap:
            boot_correct[index] = _multiplicities(entry["pairs"], bootstrap, seed, index) @ rows.T
        start += entry["pairs"]
    sizes = np.array([entry["pairs"] for entry in layout], dtype=np.float64)  # [paradigm]
    values = np.zeros((conditions, len(names)))
    replicates = np.zeros((bootstrap, conditions, len(names)))
    values[:, 0] = (correct / sizes[:, None]).mean(axis=0)
    replicates[:, :, 0] = (boot_correct / sizes[:, None, None]).mean(axis=0)
    for p, name in enumerate(names[1:], start=1):
        kind, _, label = name.partition(":")
        members = [i for i, entry in enumerate(layout) if entry["field" if kind == "field" else "term"] == label]
        total = sizes[members].sum()
        values[:, p] = correct[members].sum(axis=0) / total
        replicates[:, :, p] = boot_correct[members].sum(axis=0) / total
    return values, replicates
