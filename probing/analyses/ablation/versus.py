"""Chosen heads against matched random heads: the sets and the permutation test.

For relation R and size k the **chosen set** is the k heads with the most
correct DEV predictions for R, each in its better direction (ties by the rule
of ``probing.stats.selection.ranked_heads``: lower layer, then lower head,
then ``dep_to_head`` first). A decoder's heads are ranked over three
directions: the two classic ones and the causal (later-to-earlier) one,
which is the only one that reaches every pair when a word can look back only. A **matched random set** has as many heads in
each layer as the chosen set, drawn uniformly without replacement from that
layer's heads outside the chosen set, seeded by (seed, draw index); a layer
with too few heads left gives all it has and the set is smaller (``short``).

**Band matching** (``--match band``) draws instead from the chosen heads' layer
bands: every head of layers L-1 to L+1 of any chosen head's layer L (the model's
first and last layers clip the band), the chosen heads excluded, k heads uniformly
without replacement. It is for a chosen set whose layer-matched space holds fewer
sets than the draws a board needs (a model of 4 heads a layer): the band keeps the
random heads near the chosen ones' depth and holds far more sets.

The **space** of matched random sets holds the product, over the chosen set's
layers, of C(heads left in the layer, heads taken there) distinct sets (band
matched: C(heads in the bands, k)). When
it holds no more than the draws asked for, every set of it is used once
instead of drawing (**exact**: the random effects are the whole space's, and
p = (1 + count) / (1 + space)). Otherwise draws that give the same set are
computed once and counted once per draw.

The effect of a set on a metric is metric(disabled) - metric(intact) on the
same units; the permutation p-value is (1 + count) / (1 + draws), count the
random draws at least as harmful as the chosen set.

Pure numpy (no torch): it runs on result files.

>>> heads = np.array([[[3, 9], [1, 2]], [[0, 9], [8, 2]]])  # [direction, layer, head] correct counts
>>> chosen_set(heads, 2)
((0, 1, 'dep_to_head'), (1, 0, 'head_to_dep'))
>>> matched_draw([(0, 1), (1, 0)], num_layers=2, num_heads=2, seed=0, index=0)
MatchedDraw(heads=((0, 0), (1, 1)), short=0)
>>> space_size([(0, 1), (0, 2), (1, 0)], num_heads=4)   # C(2, 2) in layer 0 times C(3, 1) in layer 1
3
>>> space_size([(0, 1), (0, 2), (1, 0)], num_heads=4, match="band", num_layers=4)  # layers 0-2: C(12 - 3, 3)
84
>>> permutation_p(-0.3, [-0.1, -0.4, 0.0], higher_is_better=True)
0.5
>>> permutation_p(0.3 - 0.5, [(0.1 + 0.2) - 0.5], higher_is_better=True)  # equal effects, unequal floats: a tie
1.0
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from probing.errors import ProbingError
from probing.naming import DIRECTIONS


def chosen_set(heads, k: int, directions=DIRECTIONS) -> tuple[tuple[int, int, str], ...]:
    """The top-``k`` (layer, head, direction) of ``heads`` [direction, layer, head] correct counts.

    Each head counts once, in its better direction (``directions`` names the first axis), ranked by
    :func:`probing.stats.selection.ranked_heads`, the one tie rule every choice of a head follows.

    >>> chosen_set(np.array([[[1, 2]], [[0, 2]], [[3, 1]]]), 1, ("dep_to_head", "head_to_dep", "causal"))
    ((0, 0, 'causal'),)
    """
    from probing.stats.selection import ranked_heads

    counts = np.asarray(heads)
    _, num_layers, num_heads = counts.shape
    if not 1 <= k <= num_layers * num_heads:
        raise ProbingError(f"k must be between 1 and the model's {num_layers * num_heads} heads, got {k}",
                           source="--k")
    return tuple((layer, head, directions[direction]) for direction, layer, head in ranked_heads(counts, k))


@dataclass(frozen=True)
class MatchedDraw:
    """One matched random set (sorted (layer, head)); ``short`` heads fewer than asked (a full layer)."""

    heads: tuple[tuple[int, int], ...]
    short: int


def _layer_pools(chosen, num_heads: int) -> list[tuple[int, list[int], int, int]]:
    """Per layer of ``chosen`` ((layer, head, ...) tuples), in layer order: (layer, the heads outside the chosen
    set, how many a matched set takes there, how many it lacks)."""
    heads = {(int(c[0]), int(c[1])) for c in chosen}
    pools = []
    for layer, need in sorted(Counter(layer for layer, _ in heads).items()):
        pool = [head for head in range(num_heads) if (layer, head) not in heads]
        take = min(need, len(pool))
        pools.append((layer, pool, take, need - take))
    return pools


MATCHINGS = ("layer", "band")
"""How random sets are matched to the chosen set: ``layer`` (as many heads in each layer, from its other heads) or
``band`` (k heads from the layers L-1 to L+1 of the chosen heads, the chosen heads excluded)."""


def band_pool(chosen, num_layers: int, num_heads: int) -> list[tuple[int, int]]:
    """The heads a band-matched set is drawn from, sorted: every head of layers L-1 to L+1 of each chosen head's
    layer L (within the model's ``num_layers``), the chosen heads ((layer, head, ...) tuples) left out.

    >>> band_pool([(0, 1), (3, 0)], num_layers=4, num_heads=2)   # layers 0-1 and 2-3, less 0-1 and 3-0
    [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (3, 1)]
    """
    heads = {(int(c[0]), int(c[1])) for c in chosen}
    layers = {band for layer, _ in heads for band in range(layer - 1, layer + 2) if 0 <= band < num_layers}
    return [(layer, head) for layer in sorted(layers) for head in range(num_heads) if (layer, head) not in heads]


def _band_take(chosen, pool) -> tuple[int, int]:
    """(heads a band-matched set takes, heads it lacks): as many as the chosen set, or all of a smaller pool."""
    wanted = len({(int(c[0]), int(c[1])) for c in chosen})
    take = min(wanted, len(pool))
    return take, wanted - take


def matched_draw(chosen, num_layers: int, num_heads: int, seed: int, index: int, match: str = "layer") -> MatchedDraw:
    """Draw ``index`` of the random sets matched to ``chosen`` ((layer, head, ...) tuples): layer by layer, or from
    the chosen heads' bands (``match``, one of :data:`MATCHINGS`); seeded by (``seed``, ``index``).

    >>> matched_draw([(1, 0)], num_layers=3, num_heads=2, seed=0, index=0, match="band").heads
    ((2, 1),)
    """
    rng = np.random.default_rng([seed, index])
    if _matching(match) == "band":
        pool = band_pool(chosen, num_layers, num_heads)
        take, lacking = _band_take(chosen, pool)
        picked = rng.choice(len(pool), size=take, replace=False) if take else []
        return MatchedDraw(tuple(sorted(pool[int(i)] for i in picked)), lacking)
    drawn, short = [], 0
    for layer, pool, take, lacking in _layer_pools(chosen, num_heads):
        short += lacking
        drawn += [(layer, int(head)) for head in rng.choice(pool, size=take, replace=False)] if take else []
    return MatchedDraw(tuple(sorted(drawn)), short)


def _matching(match: str) -> str:
    """``match`` when it is one of :data:`MATCHINGS` (else the option's one-line refusal)."""
    if match not in MATCHINGS:
        raise ProbingError(f"must be one of {', '.join(MATCHINGS)}, got {match!r}", source="--match")
    return match


def _band_layers(num_layers: int | None) -> int:
    """The model's layers, which a band needs (its top is clipped there)."""
    if num_layers is None:
        raise ProbingError("band matching needs the model's number of layers", source="--match")
    return num_layers


def space_size(chosen, num_heads: int, match: str = "layer", num_layers: int | None = None) -> int:
    """How many distinct matched random sets ``chosen`` has. Layer-matched: the product over its layers of C(heads
    left in the layer, heads taken there) (a layer with too few left gives all of them, one way). Band-matched:
    C(heads of its bands, k) (:func:`band_pool`; ``num_layers`` needed)."""
    if _matching(match) == "band":
        pool = band_pool(chosen, _band_layers(num_layers), num_heads)
        return math.comb(len(pool), _band_take(chosen, pool)[0])
    return math.prod(math.comb(len(pool), take) for _, pool, take, _ in _layer_pools(chosen, num_heads))


def matched_space(chosen, num_heads: int, match: str = "layer", num_layers: int | None = None) -> list[MatchedDraw]:
    """Every distinct matched random set of ``chosen``, in a fixed order; :func:`space_size` of them. Layer-matched:
    combinations of each layer's heads in ascending order, layer by layer; band-matched: combinations of
    :func:`band_pool` in ascending order.

    >>> [draw.heads for draw in matched_space([(0, 0), (1, 1)], num_heads=2)]
    [((0, 1), (1, 0))]
    >>> [draw.heads for draw in matched_space([(0, 0)], num_heads=2, match="band", num_layers=2)]
    [((0, 1),), ((1, 0),), ((1, 1),)]
    """
    if _matching(match) == "band":
        pool = band_pool(chosen, _band_layers(num_layers), num_heads)
        take, lacking = _band_take(chosen, pool)
        return [MatchedDraw(heads, lacking) for heads in itertools.combinations(pool, take)]
    pools = _layer_pools(chosen, num_heads)
    short = sum(lacking for *_, lacking in pools)
    per_layer = [[tuple((layer, head) for head in heads) for heads in itertools.combinations(pool, take)]
                 for layer, pool, take, _ in pools]
    return [MatchedDraw(tuple(sorted(sum(parts, ()))), short) for parts in itertools.product(*per_layer)]


def short_of(chosen, heads, match: str = "layer") -> int:
    """How many heads the random set ``heads`` lacks against ``chosen`` (both (layer, head, ...) tuples): per layer
    for a layer-matched set, in all for a band-matched one.

    >>> short_of([(0, 0), (0, 1), (1, 0)], [(0, 2), (1, 1)]), short_of([(0, 0), (3, 1)], [(1, 1)], "band")
    (1, 1)
    """
    if _matching(match) == "band":
        return len({(c[0], c[1]) for c in chosen}) - len(heads)
    lacking = Counter(layer for layer, *_ in chosen) - Counter(layer for layer, *_ in heads)
    return sum(lacking.values())


TIE = 1e-9
"""Effects closer than this are equal for the permutation test. Two sets with the same accuracy reached through
different paradigms (overall is a mean of per-paradigm accuracies) give effects that differ in their last bits,
and "at least as harmful" must count such a draw; an accuracy on a board moves in steps of 1 / units (1e-7 for
ten million units) and a loss is summed in float32 (7 significant digits), so 1e-9 separates rounding from a
real difference on every metric."""


def permutation_p(chosen_effect: float, random_effects, higher_is_better: bool) -> float:
    """(1 + count) / (1 + draws), count = draws whose effect is at least as harmful as the chosen one's, an
    effect within :data:`TIE` of it counted as equal.

    Harmful is a drop for a metric where higher is better (accuracy), a rise otherwise (a loss).
    """
    effects = np.asarray(random_effects, dtype=float)
    harmful = effects <= chosen_effect + TIE if higher_is_better else effects >= chosen_effect - TIE
    return float((1 + int(np.sum(harmful))) / (1 + effects.size))


def threshold_effect(random_effects, higher_is_better: bool, m: int, level: float | None = None) -> float | None:
    """The effect a chosen set must exceed for its p, adjusted among ``m`` tests, to reach ``level`` (0.05), as the
    project's rules define it: the random effect at rank ceil(x) from the harmful end, x = (1 + draws) x level / m;
    None ("unreachable") when even the least p, 1 / (1 + draws), times m is above the level.

    Where x is not whole this is one rank lenient: beyond the ceil(x)-th most harmful random effect, ceil(x) - 1
    draws may still be as harmful, so p = ceil(x) / (1 + draws) and p x m is just above the level (100 draws,
    m = 2: 3/101 x 2 = 0.059); floor(x) would be the exact bound. The rule is kept as written, so that the
    threshold agrees with other implementations of it; docs/dark-secrets.md says so. Holm multiplies only the
    board's smallest p by m, so this is what a row needs at best.

    >>> effects = [i / 100 for i in range(100)]          # 100 draws: 0.00, 0.01, ..., 0.99
    >>> threshold_effect(effects, True, m=1)            # x = 5.05: the 6th lowest
    0.05
    >>> threshold_effect(effects, True, m=2), threshold_effect(effects, False, m=1)   # x = 2.525; a loss: rises hurt
    (0.02, 0.94)
    >>> threshold_effect(effects, True, m=6) is None    # 6 / 101 > 0.05: unreachable
    True
    """
    from probing.stats.multiplicity import LEVEL, reaches

    level = LEVEL if level is None else level
    effects = np.asarray(random_effects, dtype=float)
    if not effects.size or not m or not reaches(effects.size, m, level):
        return None
    rank = math.ceil(round((1 + effects.size) * level / m, 9))
    ordered = np.sort(effects) if higher_is_better else np.sort(effects)[::-1]   # the most harmful first
    return float(ordered[rank - 1])


def random_summary(random_effects, distinct: int | None = None) -> dict:
    """Mean and 2.5 / 97.5 percentiles of the random sets' effects (one per draw); ``distinct``: the sets
    computed (draws that gave the same set are computed once)."""
    effects = np.asarray(random_effects, dtype=float)
    low, high = np.percentile(effects, [2.5, 97.5])
    return {"mean": float(effects.mean()), "percentiles": [float(low), float(high)], "draws": int(effects.size),
            "distinct": int(effects.size if distinct is None else distinct)}


def versus_sets(chosen: dict, num_layers: int, num_heads: int, draws: int, seed: int,
                match: str = "layer") -> list[dict]:
    """Every set to disable for ``chosen`` {key: chosen set}: per key the chosen set, then its matched random sets
    (``match``: :data:`MATCHINGS`), each distinct set once. Each entry: key, role ("chosen" or "random"), heads,
    short, exact (every set of the space, used once instead of drawing, when it holds no more than ``draws``),
    draws (the draw indices that gave the set; an exact set's index in the space) and, on the chosen entry, space
    (:func:`space_size`). Run them as stacked conditions after the intact model (``probing ablate``'s machinery).

    >>> sets = versus_sets({"det@1": [(0, 0)]}, num_layers=1, num_heads=3, draws=5, seed=0)
    >>> [(entry["role"], entry["heads"], entry["draws"], entry["exact"]) for entry in sets]
    [('chosen', ((0, 0),), (), False), ('random', ((0, 1),), (0,), True), ('random', ((0, 2),), (1,), True)]
    """
    sets = []
    for key, heads in chosen.items():
        space = space_size(heads, num_heads, match, num_layers)
        sets.append({"key": key, "role": "chosen", "draws": (), "short": 0, "exact": False, "space": space,
                     "heads": tuple(sorted((int(h[0]), int(h[1])) for h in heads))})
        exact = space <= draws
        if exact:
            found = {draw.heads: ([index], draw.short)
                     for index, draw in enumerate(matched_space(heads, num_heads, match, num_layers))}
        else:
            found = {}
            for index in range(draws):
                draw = matched_draw(heads, num_layers, num_heads, seed, index, match)
                found.setdefault(draw.heads, ([], draw.short))[0].append(index)
        for drawn, (indices, short) in found.items():
            sets.append({"key": key, "role": "random", "draws": tuple(indices), "heads": drawn, "short": short,
                         "exact": exact})
    return sets


def dev_counts(scored: dict) -> tuple[np.ndarray, tuple[str, ...]]:
    """A relation's correct counts [direction, layer, head] as DEV ranks its heads, from a probe result's entry, and
    the directions' names: the classic two, and a decoder's causal (later-to-earlier) one, which competes with them.

    >>> counts, directions = dev_counts({"heads": {"dep_to_head": [[3, 0]], "head_to_dep": [[0, 1]]},
    ...                                  "causal": {"heads": [[1, 2]]}})
    >>> counts.shape, directions
    ((3, 1, 2), ('dep_to_head', 'head_to_dep', 'causal'))
    """
    causal = scored.get("causal")
    directions = DIRECTIONS + (("causal",) if causal else ())
    counts = np.stack([np.asarray(scored["heads"][d]) for d in DIRECTIONS]
                      + ([np.asarray(causal["heads"])] if causal else []))  # [direction, layer, head]
    return counts, directions


def choose_sets(dev: dict, relations, sizes, num_layers: int, num_heads: int, draws: int, seed: int,
                match: str = "layer") -> list[dict]:
    """The chosen set of every relation and size in ``sizes`` (from ``dev``, per relation a probe result's entry:
    ``total``, ``heads`` per direction, a decoder's ``causal``), each followed by its matched random draws
    (``match``: :data:`MATCHINGS`).

    >>> dev = {"det": {"total": 3, "heads": {"dep_to_head": [[3, 0]], "head_to_dep": [[0, 1]]}}}
    >>> [(s["key"], s["role"], s["heads"]) for s in choose_sets(dev, ["det"], [1], 1, 2, draws=1, seed=0)]
    [('det@1', 'chosen', ((0, 0),)), ('det@1', 'random', ((0, 1),))]
    """
    if draws < 1:
        raise ProbingError(f"must be 1 or more, got {draws}", source="--random")
    chosen = {}
    for relation in relations:
        if relation not in dev:
            raise ProbingError(f"relation {relation!r} is not in the DEV result (it has {', '.join(dev)})",
                               source="--chosen")
        scored = dev[relation]
        if not scored["total"]:
            raise ProbingError(f"relation {relation!r} has no pair on DEV, so nothing chooses its heads",
                               source="--chosen")
        counts, directions = dev_counts(scored)
        if counts.shape[1:] != (num_layers, num_heads):
            raise ProbingError(f"the DEV result has {counts.shape[1]}x{counts.shape[2]} heads, the model "
                               f"{num_layers}x{num_heads}", source="--select-on")
        for k in sizes:
            chosen[f"{relation}@{k}"] = chosen_set(counts, k, directions)
    return versus_sets(chosen, num_layers, num_heads, draws, seed, match)


def matching_needed(dev_result: dict, relation: str, k: int, draws: int) -> str:
    """The matching a chosen set of ``relation`` and size ``k`` (chosen on ``dev_result``, a probe result) needs
    for ``draws`` distinct random sets: ``layer`` when its layer-matched space holds that many, else ``band`` (the
    rule make.sh's sized pieces follow: band matching only where the layer-matched space is too small).

    >>> dev = {"model": {"num_layers": 2, "num_heads": 2}, "config": {},
    ...        "relations": {"det": {"total": 3, "heads": {"dep_to_head": [[3, 0], [2, 0]], "head_to_dep": [[0, 0], [0, 0]]}}}}
    >>> matching_needed(dev, "det", 2, draws=1), matching_needed(dev, "det", 2, draws=2)   # 1 x 1 layer-matched sets
    ('layer', 'band')
    """
    from probing.results.schema.validation import heads_per_layer

    sets = choose_sets(dev_result["relations"], [relation], [k], dev_result["model"]["num_layers"],
                       heads_per_layer(dev_result), draws=1, seed=0)
    return "layer" if sets[0]["space"] >= draws else "band"


def set_label(entry: dict) -> str:
    """A set's condition label, as :func:`sets_of_result` reads it back: ``REL@K:chosen``, ``REL@K:randomI`` (draw
    I; ``randomI,J`` when draws I and J gave the same set) or ``REL@K:exactI`` (set I of an enumerated space).

    >>> set_label({"key": "det@4", "role": "random", "draws": (3, 9), "exact": False})
    'det@4:random3,9'
    """
    if entry["role"] == "chosen":
        return f"{entry['key']}:chosen"
    return f"{entry['key']}:{'exact' if entry['exact'] else 'random'}{','.join(str(i) for i in entry['draws'])}"


def effect_scale(higher_is_better: bool) -> str:
    """The scale (probing.naming.SCALES) every table writes a metric's effects on: percentage points for an
    accuracy (higher is better), nats for a loss."""
    return "points" if higher_is_better else "nats"


def versus_report(values, replicates, sets: list[dict], part: int, higher_is_better: bool,
                  level: float = 0.95) -> dict:
    """Per key: the chosen set's effect with its paired bootstrap interval and standard error, the random effects
    and the p-value.

    ``values`` [condition, part] and ``replicates`` [replicate, condition, part] as
    ``AblationAccumulator.scores`` gives them, condition 0 the intact model and condition i + 1 ``sets[i]``. A
    random set counts once per draw that gave it; replicates that drew no unit (an undefined metric) are left out
    of the interval and the standard error, which are null when none is left (the error: fewer than two).
    """
    from probing.results.schema.bounds import MAX_INTEGER
    from probing.stats.intervals import percentile_interval

    values, replicates = np.asarray(values, dtype=float), np.asarray(replicates, dtype=float)
    effects = values[1:, part] - values[0, part]                          # [set]
    boot = replicates[:, 1:, part] - replicates[:, :1, part]              # [replicate, set], same resampled units
    report = {}
    for key in dict.fromkeys(entry["key"] for entry in sets):
        rows = [i for i, entry in enumerate(sets) if entry["key"] == key]
        chosen = next(i for i in rows if sets[i]["role"] == "chosen")
        randoms = [i for i in rows if sets[i]["role"] == "random"]
        per_draw = np.repeat(effects[randoms], [len(sets[i]["draws"]) for i in randoms])  # a set once per draw
        interval = percentile_interval(boot[:, chosen], level)
        space = sets[chosen].get("space")
        report[key] = {
            "chosen": {"heads": [list(h) for h in sets[chosen]["heads"]], "effect": float(effects[chosen]),
                       "interval": None if interval is None else [float(x) for x in interval],
                       "se": bootstrap_se(boot[:, chosen])},
            "random": random_summary(per_draw, distinct=len(randoms)) if randoms else None,
            "short_sets": sum(len(sets[i]["draws"]) for i in randoms if sets[i]["short"]),
            "p_value": permutation_p(effects[chosen], per_draw, higher_is_better) if randoms else None,
            "exact": bool(randoms) and all(sets[i]["exact"] for i in randoms),
            "space": space if space is not None and space <= MAX_INTEGER else None,
        }
    return report


def bootstrap_se(replicates) -> float | None:
    """The standard error of an estimate from its bootstrap replicates [replicate]: their standard deviation
    (ddof 1) over the finite ones (a replicate that drew no unit has none); None with fewer than two.

    >>> bootstrap_se([1.0, 3.0, float("nan")]), bootstrap_se([2.0])
    (1.4142135623730951, None)
    """
    finite = np.asarray(replicates, dtype=float)
    finite = finite[np.isfinite(finite)]
    return float(np.std(finite, ddof=1)) if finite.size >= 2 else None


def result_match(result: dict) -> str:
    """How a ``--chosen`` result's random sets were matched: its recorded ``--match`` (``layer`` for a result
    written before the option existed, when every run matched by layer).

    >>> result_match({"config": {}}), result_match({"config": {"options": {"match": "band"}}})
    ('layer', 'band')
    """
    return (result["config"].get("options") or {}).get("match") or "layer"


def sets_of_result(result: dict) -> list[dict]:
    """The versus sets of an ablation result of a ``--chosen`` run, from its conditions' labels and heads.

    Labels are ``REL@K:chosen``, then ``REL@K:randomI`` (I the draws that gave the set, ``I,J,...``) or
    ``REL@K:exactI`` (I the set's index in the enumerated space), in the order the run stacked them (condition 0
    is the intact model); a random set's ``short`` is the heads it lacked against the chosen set of its key
    (:func:`short_of`); the chosen set's ``space`` is its :func:`space_size` under the result's model and matching
    (:func:`result_match`; None without a model).

    >>> result = {"conditions": [{"label": "none", "heads": []}, {"label": "det@1:chosen", "heads": [[0, 1]]},
    ...                          {"label": "det@1:random0,2", "heads": [[0, 0]]}]}
    >>> [(entry["key"], entry["role"], entry["draws"], entry["short"]) for entry in sets_of_result(result)]
    [('det@1', 'chosen', (), 0), ('det@1', 'random', (0, 2), 0)]
    """
    from probing.results.schema.validation import heads_per_layer

    num_heads = heads_per_layer(result) if "model" in result else None
    num_layers = result["model"]["num_layers"] if "model" in result else None
    match = result_match(result) if "config" in result else "layer"
    sets, chosen = [], {}
    for number, condition in enumerate(result["conditions"][1:], start=1):
        key, _, role = condition["label"].rpartition(":")
        heads = tuple(tuple(int(x) for x in head) for head in condition["heads"])
        kind = next((kind for kind in ("random", "exact") if role.startswith(kind)), None)
        draws = role[len(kind):].split(",") if kind else []
        if role == "chosen" and key:
            chosen[key] = heads
            sets.append({"key": key, "role": "chosen", "draws": (), "heads": heads, "short": 0, "exact": False,
                         "space": None if num_heads is None else space_size(heads, num_heads, match, num_layers)})
        elif kind and key in chosen and all(draw.isdigit() for draw in draws):
            sets.append({"key": key, "role": "random", "draws": tuple(int(draw) for draw in draws), "heads": heads,
                         "short": short_of(chosen[key], heads, match), "exact": kind == "exact"})
        else:
            raise ProbingError(f"condition {number} ({condition['label']!r}) is not a set of a --chosen run "
                               "(REL@K:chosen, then REL@K:randomI or REL@K:exactI)", source="the ablation result")
    if not sets:
        raise ProbingError("has no chosen set: it is not the result of ablate --chosen", source="the ablation result")
    return sets


def versus_block(result: dict) -> dict:
    """The ``versus`` block of an ablation result of a ``--chosen`` run: how its random sets were matched
    (:func:`result_match`) and, per metric part and chosen key (REL@K), :func:`versus_report` from the result's
    own conditions and state (a file without the block gets the same numbers as one that has it)."""
    from probing.analyses.ablation.scores import result_scores

    values, replicates = result_scores(result)
    sets = sets_of_result(result)
    metric = result["metric"]
    parts = {}
    for p, part in enumerate(metric["parts"]):
        report = versus_report(values, replicates, sets, p, metric["higher_is_better"])
        for entry in report.values():  # a part without units (a relation absent from the input) has no effect
            if not np.isfinite(entry["chosen"]["effect"]):
                entry["chosen"].update(effect=None, interval=None, se=None)
                entry["p_value"] = None
            if entry["random"] is not None and not np.isfinite(entry["random"]["mean"]):
                entry["random"] = None
        parts[part] = report
    return {"metric": metric["name"], "higher_is_better": bool(metric["higher_is_better"]),
            "match": result_match(result), "parts": parts}


def result_versus(result: dict) -> dict:
    """The result's ``versus`` block, or the one its conditions and state give when it has none (a file
    written before ablate wrote the block)."""
    return result["versus"] if "versus" in result else versus_block(result)


def versus_disagreement(result: dict) -> str | None:
    """Where the result's ``versus`` block is not the one its own conditions and state give (:func:`versus_block`),
    numbers within :data:`TIE` counted equal: the first field, with both values, in words; None when it is (or the
    result has no block). A hand-edited p-value, or a block written under an older rule, is found here; the
    leaderboard refuses such a file (the ``derived`` check of the analysis's record), and the committed boards'
    test asks it of every committed result. A field the file lacks (written before ``exact`` and ``space`` were)
    is no disagreement.

    >>> versus_disagreement({"analysis": "ablation"}) is None
    True
    """
    from probing.results.identity import difference

    if "versus" not in result:
        return None
    return difference(result["versus"], _as_in(versus_block(result), result["versus"]), "versus", tolerance=TIE,
                      labels=("the file", "what its conditions and state give"))


def _as_in(derived, written):
    """``derived`` with only the keys of its dicts that ``written`` has too, where both are dicts (an older file's
    block lacks fields a newer version derives).

    >>> _as_in({"p": 0.5, "exact": True, "x": {"a": 1, "b": 2}}, {"p": 0.5, "x": {"a": 1}})
    {'p': 0.5, 'x': {'a': 1}}
    """
    if not (isinstance(derived, dict) and isinstance(written, dict)):
        return derived
    return {key: _as_in(value, written[key]) for key, value in derived.items() if key in written}


def versus_effects(result: dict) -> dict:
    """Every set's effect per metric part and chosen key, from an ablation result of a ``--chosen`` run:
    {part: {key: {"chosen": effect, "random": [effect of each draw, a set drawn twice twice]}}} (what the figure
    draws)."""
    from probing.analyses.ablation.scores import result_scores

    values, _ = result_scores(result)
    sets = sets_of_result(result)
    effects = {}
    for p, part in enumerate(result["metric"]["parts"]):
        changes = values[1:, p] - values[0, p]  # [set], in the order of sets
        by_key: dict = {}
        for entry, change in zip(sets, changes):
            slot = by_key.setdefault(entry["key"], {"chosen": None, "random": []})
            if entry["role"] == "chosen":
                slot["chosen"] = float(change)
            else:
                slot["random"] += [float(change)] * len(entry["draws"])
        effects[part] = by_key
    return effects
