"""Chosen heads against matched random heads: the sets and the permutation test.

For relation R and size k the **chosen set** is the k heads with the most
correct DEV predictions for R, each in its better direction (ties: lower
layer, then lower head, then ``dep_to_head`` first, as in
``probing.stats.selection``). A **matched random set** has as many heads in
each layer as the chosen set, drawn uniformly without replacement from that
layer's heads outside the chosen set, seeded by (seed, draw index); a layer
with too few heads left gives all it has and the set is smaller (``short``).

The effect of a set on a metric is metric(disabled) - metric(intact) on the
same units; the permutation p-value is (1 + count) / (1 + draws), count the
random draws at least as harmful as the chosen set.

Pure numpy (no torch): it runs on result files.

>>> heads = np.array([[[3, 9], [1, 2]], [[0, 9], [8, 2]]])  # [direction, layer, head] correct counts
>>> chosen_set(heads, 2)
((0, 1, 'dep_to_head'), (1, 0, 'head_to_dep'))
>>> matched_draw([(0, 1), (1, 0)], num_layers=2, num_heads=2, seed=0, index=0)
MatchedDraw(heads=((0, 0), (1, 1)), short=0)
>>> permutation_p(-0.3, [-0.1, -0.4, 0.0], higher_is_better=True)
0.5
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from probing.errors import ProbingError
from probing.naming import DIRECTIONS


def chosen_set(heads, k: int) -> tuple[tuple[int, int, str], ...]:
    """The top-``k`` (layer, head, direction) of ``heads`` [direction, layer, head] correct counts.

    Each head counts once, in its better direction; ranks by count, ties to the lower layer, then head.
    """
    counts = np.asarray(heads)
    _, num_layers, num_heads = counts.shape
    if not 1 <= k <= num_layers * num_heads:
        raise ProbingError(f"k must be between 1 and the model's {num_layers * num_heads} heads, got {k}",
                           source="--k")
    best = counts.max(axis=0)                      # [layer, head]
    direction = counts.argmax(axis=0)              # first maximum: dep_to_head wins a tie
    order = np.argsort(-best.ravel(), kind="stable")[:k]  # stable: C order breaks ties (layer, then head)
    return tuple((int(i // num_heads), int(i % num_heads), DIRECTIONS[int(direction.flat[i])]) for i in order)


@dataclass(frozen=True)
class MatchedDraw:
    """One matched random set (sorted (layer, head)); ``short`` heads fewer than asked (a full layer)."""

    heads: tuple[tuple[int, int], ...]
    short: int


def matched_draw(chosen, num_layers: int, num_heads: int, seed: int, index: int) -> MatchedDraw:
    """Draw ``index`` of the random sets matched layer by layer to ``chosen`` ((layer, head, ...) tuples)."""
    rng = np.random.default_rng([seed, index])
    chosen = {(int(c[0]), int(c[1])) for c in chosen}
    drawn, short = [], 0
    for layer in range(num_layers):
        need = sum(1 for c in chosen if c[0] == layer)
        if not need:
            continue
        pool = [head for head in range(num_heads) if (layer, head) not in chosen]
        take = min(need, len(pool))
        short += need - take
        drawn += [(layer, int(head)) for head in rng.choice(pool, size=take, replace=False)] if take else []
    return MatchedDraw(tuple(sorted(drawn)), short)


def permutation_p(chosen_effect: float, random_effects, higher_is_better: bool) -> float:
    """(1 + count) / (1 + draws), count = draws whose effect is at least as harmful as the chosen one's.

    Harmful is a drop for a metric where higher is better (accuracy), a rise otherwise (a loss).
    """
    effects = np.asarray(random_effects, dtype=float)
    harmful = effects <= chosen_effect if higher_is_better else effects >= chosen_effect
    return float((1 + int(np.sum(harmful))) / (1 + effects.size))


def random_summary(random_effects) -> dict:
    """Mean and 2.5 / 97.5 percentiles of the random sets' effects."""
    effects = np.asarray(random_effects, dtype=float)
    low, high = np.percentile(effects, [2.5, 97.5])
    return {"mean": float(effects.mean()), "percentiles": [float(low), float(high)], "draws": int(effects.size)}


def versus_sets(chosen: dict, num_layers: int, num_heads: int, draws: int, seed: int) -> list[dict]:
    """Every set to disable for ``chosen`` {key: chosen set}: per key the chosen set, then ``draws`` matched
    random sets (draw index 0..draws-1). Each entry: key, role ("chosen" or "random"), draw, heads, short.
    Run them as stacked conditions after the intact model (``probing ablate``'s machinery).
    """
    sets = []
    for key, heads in chosen.items():
        sets.append({"key": key, "role": "chosen", "draw": None, "short": 0,
                     "heads": tuple(sorted((int(h[0]), int(h[1])) for h in heads))})
        for index in range(draws):
            draw = matched_draw(heads, num_layers, num_heads, seed, index)
            sets.append({"key": key, "role": "random", "draw": index, "heads": draw.heads, "short": draw.short})
    return sets


def versus_report(values, replicates, sets: list[dict], part: int, higher_is_better: bool,
                  level: float = 0.95) -> dict:
    """Per key: the chosen set's effect with its paired bootstrap interval, the random effects and the p-value.

    ``values`` [condition, part] and ``replicates`` [replicate, condition, part] as
    ``AblationAccumulator.scores`` gives them, condition 0 the intact model and condition i + 1 ``sets[i]``.
    """
    from probing.stats.intervals import percentile_interval

    values, replicates = np.asarray(values, dtype=float), np.asarray(replicates, dtype=float)
    effects = values[1:, part] - values[0, part]                          # [set]
    boot = replicates[:, 1:, part] - replicates[:, :1, part]              # [replicate, set], same resampled units
    report = {}
    for key in dict.fromkeys(entry["key"] for entry in sets):
        rows = [i for i, entry in enumerate(sets) if entry["key"] == key]
        chosen = next(i for i in rows if sets[i]["role"] == "chosen")
        randoms = [i for i in rows if sets[i]["role"] == "random"]
        interval = percentile_interval(boot[:, chosen], level)
        report[key] = {
            "chosen": {"heads": [list(h) for h in sets[chosen]["heads"]], "effect": float(effects[chosen]),
                       "interval": None if interval is None else [float(x) for x in interval]},
            "random": random_summary(effects[randoms]) if randoms else None,
            "short_sets": sum(1 for i in randoms if sets[i]["short"]),
            "p_value": permutation_p(effects[chosen], effects[randoms], higher_is_better) if randoms else None,
        }
    return report


def chosen_sets_on_dev(dev: dict, relations, sizes, num_layers: int, num_heads: int) -> dict:
    """``{"REL@k": chosen set}`` for every relation and size, from a DEV probe result's counts; a relation the DEV
    result lacks, or grids of another shape than the model's, is refused naming the option."""
    chosen = {}
    for relation in relations:
        if relation not in dev["relations"]:
            raise ProbingError(f"relation {relation!r} is not in the DEV result (it has {', '.join(dev['relations'])})",
                               source="--chosen")
        counts = np.stack([np.asarray(dev["relations"][relation]["heads"][d]) for d in DIRECTIONS])  # [dir, layer, head]
        if counts.shape[1:] != (num_layers, num_heads):
            raise ProbingError(f"the DEV result has {counts.shape[1]}x{counts.shape[2]} heads, the model "
                               f"{num_layers}x{num_heads}", source="--select-on")
        for k in sizes:
            chosen[f"{relation}@{k}"] = chosen_set(counts, k)
    return chosen


def set_label(entry: dict) -> str:
    """A set's condition label: ``KEY:chosen``, or ``KEY:randomN`` for random draw N.

    >>> set_label({"key": "det@2", "role": "random", "draw": 3})
    'det@2:random3'
    """
    return f"{entry['key']}:{entry['role']}" + ("" if entry["draw"] is None else f"{entry['draw']}")


def versus_table(values, replicates, sets: list[dict], metric) -> str:
    """One row per chosen set and metric part: effect [interval], random mean [2.5, 97.5], p."""
    lines = [f"{'set':<12} {'part':<10} {'chosen effect [95%]':<28} {'random mean [2.5, 97.5]':<30} {'p':>6}  short"]
    for p, part in enumerate(metric.parts()):
        for key, row in versus_report(values, replicates, sets, p, metric.higher_is_better).items():
            low_high = row["chosen"]["interval"] or [float("nan")] * 2
            rnd = row["random"]
            lines.append(f"{key:<12} {part:<10} {row['chosen']['effect']:+.4f} [{low_high[0]:+.4f}, {low_high[1]:+.4f}]"
                         f"{'':<3} {rnd['mean']:+.4f} [{rnd['percentiles'][0]:+.4f}, {rnd['percentiles'][1]:+.4f}]"
                         f"{'':<4} {row['p_value']:>6.3f}  {row['short_sets']}")
    return "\n".join(lines)
