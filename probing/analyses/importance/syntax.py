"""Syntax against harm: do the heads that track a relation on DEV matter more to a metric when disabled alone?

- **DEV accuracy.** Each head's accuracy on relation R on DEV in its better direction, as DEV ranks heads to
  choose them (``dev_counts``: the two classic directions, and a decoder's later-to-earlier one), so that no choice
  is made on the units the harm is measured on.
- **rho.** Spearman's rho over all heads between that accuracy and the head's harm (probing.stats.ranks; harms
  within the permutation test's tie, 1e-9, share a rank).
- **p.** The accuracies are permuted among the heads *of the same layer* (seeded; no model pass), which keeps
  what a layer shares, depth, the same in every permutation: a layer that both tracks syntax and matters makes rho
  large in every permutation alike. p = (1 + count) / (1 + permutations), count the permutations whose rho is at
  least the observed one (within 1e-9): one-sided, in the harmful direction, as every p of the causal board is
  (a negative rho, syntactic heads mattering *less*, gets a p near 1).
- **Interval.** rho recomputed on each bootstrap replicate of the units (its harms; the accuracies fixed), its
  2.5th and 97.5th percentiles; replicates that drew no unit of the part, or whose harms are all equal, left out.
- **A chosen head's rank.** The chosen k = 1 head (ablate --chosen's choice, the same tie rule) against every
  other head of its layer band (layers L-1 to L+1) and of the model, read from the map: its rank (1 + the heads
  more harmful) and p = (1 + heads at least as harmful) / (heads compared, itself included), exact.

Pure numpy (no torch): it runs on result files.

>>> harm = np.array([[0.3, 0.1], [0.0, 0.2]])            # [layer, head]
>>> rank_among(-harm, 1, 1, layers=range(0, 2), higher_is_better=True)
{'layers': [0, 1], 'heads': 4, 'rank': 2, 'ties': 0, 'p_value': 0.5}
"""

from __future__ import annotations

import numpy as np

from probing.analyses.ablation.versus import TIE, chosen_set, dev_counts, permutation_p
from probing.analyses.importance.maps import harm_of
from probing.stats.intervals import interval_pair, percentile_interval
from probing.stats.ranks import permuted_spearman, spearman_rows


def dev_accuracy(scored: dict) -> tuple[np.ndarray, np.ndarray]:
    """A relation's DEV accuracy [layer, head] in each head's better direction, and that direction's name
    [layer, head], from a probe result's entry (a tie goes to the direction listed first, as DEV's ranking does).

    >>> accuracy, direction = dev_accuracy({"total": 4, "heads": {"dep_to_head": [[1, 3]], "head_to_dep": [[2, 3]]}})
    >>> accuracy.tolist(), direction.tolist()
    ([[0.5, 0.75]], [['head_to_dep', 'dep_to_head']])
    """
    counts, directions = dev_counts(scored)                     # [direction, layer, head]
    return counts.max(axis=0) / scored["total"], np.asarray(directions)[counts.argmax(axis=0)]


def chosen_head(scored: dict) -> dict:
    """The chosen k = 1 head of a relation on DEV (``ablate --chosen REL --k 1``'s), with its DEV accuracy.

    >>> chosen_head({"total": 4, "heads": {"dep_to_head": [[1, 3]], "head_to_dep": [[2, 3]]}})
    {'layer': 0, 'head': 1, 'direction': 'dep_to_head', 'accuracy': 0.75}
    """
    counts, directions = dev_counts(scored)
    ((layer, head, direction),) = chosen_set(counts, 1, directions)
    return {"layer": layer, "head": head, "direction": direction,
            "accuracy": float(counts[directions.index(direction), layer, head] / scored["total"])}


def syntax_against_harm(accuracy, harm, replicate_harm, *, permutations: int, seed: int) -> list[dict]:
    """Per metric part: rho, its interval, its within-layer permutation p and the replicates the interval used.

    ``accuracy`` [layer, head] on DEV; ``harm`` [part, layer, head]; ``replicate_harm`` [replicate, part, layer,
    head]. rho is None where it is undefined (every harm, or every accuracy, equal), and so are p and the interval.
    """
    accuracy = np.asarray(accuracy, dtype=np.float64)
    layers, heads = accuracy.shape
    x, strata = accuracy.ravel(), np.repeat(np.arange(layers), heads)  # heads in [layer, head] order, by layer
    harms = np.asarray(harm, dtype=np.float64).reshape(-1, layers * heads)           # [part, head]
    rhos = spearman_rows(x, np.nan_to_num(harms, nan=0.0), tie=TIE)                   # [part]
    permuted = permuted_spearman(x, np.nan_to_num(harms, nan=0.0).T, strata, count=permutations, seed=seed,
                                 tie=TIE)                                             # [permutation, part]
    found = []
    for part, rho in enumerate(rhos):
        if not np.isfinite(rho) or not np.all(np.isfinite(harms[part])):
            found.append({"rho": None, "interval": None, "p_value": None, "replicates": 0})
            continue
        boot = _replicate_rhos(x, np.asarray(replicate_harm)[:, part].reshape(-1, layers * heads))
        # larger rho is the harmful side: the permutation rule with "higher is better" off counts rho >= observed
        found.append({"rho": float(rho), "interval": interval_pair(percentile_interval(boot)),
                      "p_value": permutation_p(rho, permuted[:, part], higher_is_better=False),
                      "replicates": int(boot.size)})
    return found


def _replicate_rhos(x, rows) -> np.ndarray:
    """rho of ``x`` with each replicate's harms ``rows`` [replicate, head] that measured every head (finite), and
    is defined (not all equal)."""
    rows = np.asarray(rows, dtype=np.float64)
    kept = rows[np.all(np.isfinite(rows), axis=1)]
    rhos = spearman_rows(x, kept, tie=TIE) if len(kept) else np.empty(0)
    return rhos[np.isfinite(rhos)]


def band_layers(layer: int, num_layers: int) -> range:
    """The layer band of a head of ``layer``: layers L-1 to L+1, within the model.

    >>> band_layers(0, 6), band_layers(3, 6), band_layers(5, 6)
    (range(0, 2), range(2, 5), range(4, 6))
    """
    return range(max(0, layer - 1), min(num_layers, layer + 2))


def rank_among(effect, layer: int, head: int, *, layers: range, higher_is_better: bool) -> dict:
    """Head (``layer``, ``head``)'s place among every head of ``layers`` by harm, from ``effect`` [layer, head]:
    ``rank`` (1 + the heads more harmful by more than 1e-9), ``ties`` (the others as harmful, within 1e-9),
    ``heads`` compared (itself included) and ``p_value`` = (1 + the others at least as harmful) / heads, that is
    (rank + ties) / heads: the permutation rule of the causal board, the other single heads as the random sets
    (an exact p: every one of them is used)."""
    effect = np.asarray(effect, dtype=np.float64)
    mine = effect[layer, head]
    others = np.array([effect[other, rival] for other in layers for rival in range(effect.shape[1])
                       if (other, rival) != (layer, head)])
    gap = harm_of(others, higher_is_better) - harm_of(mine, higher_is_better)
    return {"layers": [layers.start, layers.stop - 1], "heads": int(others.size + 1),
            "rank": int(1 + np.sum(gap > TIE)), "ties": int(np.sum(np.abs(gap) <= TIE)),
            "p_value": permutation_p(mine, others, higher_is_better)}
