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

The **space** of matched random sets holds the product, over the chosen set's
layers, of C(heads left in the layer, heads taken there) distinct sets. When
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


def matched_draw(chosen, num_layers: int, num_heads: int, seed: int, index: int) -> MatchedDraw:
    """Draw ``index`` of the random sets matched layer by layer to ``chosen`` ((layer, head, ...) tuples)."""
    rng = np.random.default_rng([seed, index])
    drawn, short = [], 0
    for layer, pool, take, lacking in _layer_pools(chosen, num_heads):
        short += lacking
        drawn += [(layer, int(head)) for head in rng.choice(pool, size=take, replace=False)] if take else []
    return MatchedDraw(tuple(sorted(drawn)), short)


def space_size(chosen, num_heads: int) -> int:
    """How many distinct matched random sets ``chosen`` has: the product over its layers of C(heads left in the
    layer, heads taken there) (a layer with too few left gives all of them, one way)."""
    return math.prod(math.comb(len(pool), take) for _, pool, take, _ in _layer_pools(chosen, num_heads))


def matched_space(chosen, num_heads: int) -> list[MatchedDraw]:
    """Every distinct matched random set of ``chosen``, in a fixed order (combinations of each layer's heads in
    ascending order, layer by layer); :func:`space_size` of them.

    >>> [draw.heads for draw in matched_space([(0, 0), (1, 1)], num_heads=2)]
    [((0, 1), (1, 0))]
    """
    pools = _layer_pools(chosen, num_heads)
    short = sum(lacking for *_, lacking in pools)
    per_layer = [[tuple((layer, head) for head in heads) for heads in itertools.combinations(pool, take)]
                 for layer, pool, take, _ in pools]
    return [MatchedDraw(tuple(sorted(sum(parts, ()))), short) for parts in itertools.product(*per_layer)]


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


def random_summary(random_effects, distinct: int | None = None) -> dict:
    """Mean and 2.5 / 97.5 percentiles of the random sets' effects (one per draw); ``distinct``: the sets
    computed (draws that gave the same set are computed once)."""
    effects = np.asarray(random_effects, dtype=float)
    low, high = np.percentile(effects, [2.5, 97.5])
    return {"mean": float(effects.mean()), "percentiles": [float(low), float(high)], "draws": int(effects.size),
            "distinct": int(effects.size if distinct is None else distinct)}


def versus_sets(chosen: dict, num_layers: int, num_heads: int, draws: int, seed: int) -> list[dict]:
    """Every set to disable for ``chosen`` {key: chosen set}: per key the chosen set, then its matched random sets,
    each distinct set once. Each entry: key, role ("chosen" or "random"), heads, short, exact (every set of the
    space, used once instead of drawing, when it holds no more than ``draws``), draws (the draw indices that gave
    the set; an exact set's index in the space) and, on the chosen entry, space (:func:`space_size`).
    Run them as stacked conditions after the intact model (``probing ablate``'s machinery).

    >>> sets = versus_sets({"det@1": [(0, 0)]}, num_layers=1, num_heads=3, draws=5, seed=0)
    >>> [(entry["role"], entry["heads"], entry["draws"], entry["exact"]) for entry in sets]
    [('chosen', ((0, 0),), (), False), ('random', ((0, 1),), (0,), True), ('random', ((0, 2),), (1,), True)]
    """
    sets = []
    for key, heads in chosen.items():
        space = space_size(heads, num_heads)
        sets.append({"key": key, "role": "chosen", "draws": (), "short": 0, "exact": False, "space": space,
                     "heads": tuple(sorted((int(h[0]), int(h[1])) for h in heads))})
        exact = space <= draws
        if exact:
            found = {draw.heads: ([index], draw.short) for index, draw in enumerate(matched_space(heads, num_heads))}
        else:
            found = {}
            for index in range(draws):
                draw = matched_draw(heads, num_layers, num_heads, seed, index)
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


def choose_sets(dev: dict, relations, sizes, num_layers: int, num_heads: int, draws: int, seed: int) -> list[dict]:
    """The chosen set of every relation and size in ``sizes`` (from ``dev``, per relation a probe result's entry:
    ``total``, ``heads`` per direction, a decoder's ``causal``), each followed by its matched random draws.

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
    return versus_sets(chosen, num_layers, num_heads, draws, seed)


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
    """Per key: the chosen set's effect with its paired bootstrap interval, the random effects and the p-value.

    ``values`` [condition, part] and ``replicates`` [replicate, condition, part] as
    ``AblationAccumulator.scores`` gives them, condition 0 the intact model and condition i + 1 ``sets[i]``. A
    random set counts once per draw that gave it; replicates that drew no unit (an undefined metric) are left out
    of the interval, which is null when none is left.
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
                       "interval": None if interval is None else [float(x) for x in interval]},
            "random": random_summary(per_draw, distinct=len(randoms)) if randoms else None,
            "short_sets": sum(len(sets[i]["draws"]) for i in randoms if sets[i]["short"]),
            "p_value": permutation_p(effects[chosen], per_draw, higher_is_better) if randoms else None,
            "exact": bool(randoms) and all(sets[i]["exact"] for i in randoms),
            "space": space if space is not None and space <= MAX_INTEGER else None,
        }
    return report


def sets_of_result(result: dict) -> list[dict]:
    """The versus sets of an ablation result of a ``--chosen`` run, from its conditions' labels and heads.

    Labels are ``REL@K:chosen``, then ``REL@K:randomI`` (I the draws that gave the set, ``I,J,...``) or
    ``REL@K:exactI`` (I the set's index in the enumerated space), in the order the run stacked them (condition 0
    is the intact model); a random set's ``short`` is the heads its layers lacked against the chosen set of its
    key; the chosen set's ``space`` is its :func:`space_size` under the result's model (None without one).

    >>> result = {"conditions": [{"label": "none", "heads": []}, {"label": "det@1:chosen", "heads": [[0, 1]]},
    ...                          {"label": "det@1:random0,2", "heads": [[0, 0]]}]}
    >>> [(entry["key"], entry["role"], entry["draws"], entry["short"]) for entry in sets_of_result(result)]
    [('det@1', 'chosen', (), 0), ('det@1', 'random', (0, 2), 0)]
    """
    from probing.results.schema.validation import heads_per_layer

    num_heads = heads_per_layer(result) if "model" in result else None
    sets, chosen = [], {}
    for number, condition in enumerate(result["conditions"][1:], start=1):
        key, _, role = condition["label"].rpartition(":")
        heads = tuple(tuple(int(x) for x in head) for head in condition["heads"])
        kind = next((kind for kind in ("random", "exact") if role.startswith(kind)), None)
        draws = role[len(kind):].split(",") if kind else []
        if role == "chosen" and key:
            chosen[key] = heads
            sets.append({"key": key, "role": "chosen", "draws": (), "heads": heads, "short": 0, "exact": False,
                         "space": None if num_heads is None else space_size(heads, num_heads)})
        elif kind and key in chosen and all(draw.isdigit() for draw in draws):
            lacking = Counter(layer for layer, _ in chosen[key]) - Counter(layer for layer, _ in heads)
            sets.append({"key": key, "role": "random", "draws": tuple(int(draw) for draw in draws), "heads": heads,
                         "short": sum(lacking.values()), "exact": kind == "exact"})
        else:
            raise ProbingError(f"condition {number} ({condition['label']!r}) is not a set of a --chosen run "
                               "(REL@K:chosen, then REL@K:randomI or REL@K:exactI)", source="the ablation result")
    if not sets:
        raise ProbingError("has no chosen set: it is not the result of ablate --chosen", source="the ablation result")
    return sets


def versus_block(result: dict) -> dict:
    """The ``versus`` block of an ablation result of a ``--chosen`` run: per metric part and chosen key
    (REL@K), :func:`versus_report` from the result's own conditions and state (a file without the block
    gets the same numbers as one that has it)."""
    from probing.analyses.ablation.scores import result_scores

    values, replicates = result_scores(result)
    sets = sets_of_result(result)
    metric = result["metric"]
    parts = {}
    for p, part in enumerate(metric["parts"]):
        report = versus_report(values, replicates, sets, p, metric["higher_is_better"])
        for entry in report.values():  # a part without units (a relation absent from the input) has no effect
            if not np.isfinite(entry["chosen"]["effect"]):
                entry["chosen"]["effect"], entry["chosen"]["interval"], entry["p_value"] = None, None, None
            if entry["random"] is not None and not np.isfinite(entry["random"]["mean"]):
                entry["random"] = None
        parts[part] = report
    return {"metric": metric["name"], "higher_is_better": bool(metric["higher_is_better"]), "parts": parts}


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


def versus_table(block: dict) -> str:
    """The terminal table of a versus block: per chosen set and metric part, the effect [95%] and the random mean
    [2.5, 97.5] in the board's unit (percentage points for an accuracy, nats for a loss), p (``exact`` when the
    whole space of matched sets was used), p adjusted by Holm over this run's tests (``significant`` at 0.05) and
    the short sets; ``no data`` where a part had no unit to measure; then :func:`versus_notes`, what p, Holm and
    ``short`` mean and how significant a row of this run can be."""
    from probing.naming import interval_text, p_value_text, scaled
    from probing.stats.multiplicity import holm, significant

    scale = effect_scale(block["higher_is_better"])

    def number(value) -> str:
        return "no data" if value is None else scaled(value, scale)

    def interval(pair) -> str:
        return interval_text(pair, scale, missing="no data", absent="[no data]")

    width = max([10, *(len(part) for part in block["parts"])])
    unit = "points" if scale == "points" else "nats"
    rows = [(part, key, row) for part, sets in block["parts"].items() for key, row in sets.items()]
    adjusted = holm([row["p_value"] for *_, row in rows])
    lines = [f"{'set':<12} {'part':<{width}} {f'chosen effect, {unit} [95%]':<28} "
             f"{'random mean [2.5, 97.5]':<28} {'p':>12}  {'Holm p':<18} short"]
    for (part, key, row), p_adjusted in zip(rows, adjusted):
        chosen = f"{number(row['chosen']['effect'])} {interval(row['chosen']['interval'])}"
        rnd = row["random"]
        random = "no data" if rnd is None else f"{number(rnd['mean'])} {interval(rnd['percentiles'])}"
        p_value = "-" if row["p_value"] is None else p_value_text(row["p_value"]) + (
            " exact" if row.get("exact") else "")
        held = "-" if p_adjusted is None else p_value_text(p_adjusted) + (
            " significant" if significant(p_adjusted) else "")
        lines.append(f"{key:<12} {part:<{width}} {chosen:<28} {random:<28} {p_value:>12}  {held:<18} "
                     f"{row['short_sets']}")
    return "\n".join(lines + ["", *versus_notes(block)])


def reach_note(tested: int, most_draws: int, where: str = "this board") -> str:
    """How significant a row of ``where`` can be: the least raw p its draws allow, 1 / (1 + draws), and the least
    Holm-adjusted p over its m = ``tested`` tests, with whether any row can be called significant (and, where none
    can, the draws that would take). The board says it in its notes (probing.analyses.ablation.board.holm_note), ``probing ablate`` under
    its table.

    >>> print(reach_note(3, 10, where="this run"))
    With at most 10 random draws a row, the least p a row can reach is 1 / (1 + 10) = 0.091. After Holm over m = 3 \
    tests, the least any can reach is 0.27: no row of this run can be called significant, whatever its data; that \
    takes at least 59 draws a row.
    """
    from probing.naming import p_value_text
    from probing.stats.multiplicity import LEVEL, draws_needed, least_adjusted

    least = least_adjusted(tested, most_draws)
    note = (f"With at most {most_draws:,} random draws a row, the least p a row can reach is 1 / (1 + {most_draws:,}) = "
            f"{p_value_text(1 / (1 + most_draws))}. After Holm over m = {tested} tests, the least any can reach is "
            f"{p_value_text(least)}: ")
    if least > LEVEL:
        return note + (f"no row of {where} can be called significant, whatever its data; that takes at least "
                       f"{draws_needed(tested):,} draws a row.")
    return note + "a row can be called significant."


def versus_notes(block: dict) -> list[str]:
    """What the table's p, Holm p and short mean, and how significant a row of this run can be: the least p its
    draws allow and the least after Holm over its tests (:func:`reach_note`, the sentence the leaderboard prints),
    so a run says itself when no answer it gives can be significant.

    >>> entry = {"p_value": 0.5, "random": {"draws": 10}, "short_sets": 0}
    >>> print("\\n".join(versus_notes({"parts": {"loss": {"det@1": entry, "nsubj@1": entry}}})[-2:]))
    Holm: p adjusted over this run's m = 2 tests (one per chosen set and part with a p), significant at 0.05 by it only. \
    With at most 10 random draws a row, the least p a row can reach is 1 / (1 + 10) = 0.091. After Holm over m = 2 \
    tests, the least any can reach is 0.18: no row of this run can be called significant, whatever its data; that \
    takes at least 39 draws a row.
    short: how many random sets have fewer heads than the chosen set, a layer holding fewer heads outside the \
    chosen set than the chosen set takes from it (0: every random set matches it head for head, layer by layer).
    """
    from probing.stats.multiplicity import LEVEL

    entries = [row for sets in block["parts"].values() for row in sets.values()]
    tested = sum(1 for row in entries if row["p_value"] is not None)
    most_draws = max((row["random"]["draws"] for row in entries if row["random"] is not None), default=0)
    notes = ["p: the permutation p-value, (1 + random sets at least as harmful as the chosen set) / (1 + random "
             "sets), one-sided (exact: every set of the matched space was used once)."]
    holm_line = (f"Holm: p adjusted over this run's m = {tested} tests (one per chosen set and part with a p), "
                 f"significant at {LEVEL:g} by it only.")
    notes.append(holm_line + (f" {reach_note(tested, most_draws, where='this run')}" if tested and most_draws else ""))
    notes.append("short: how many random sets have fewer heads than the chosen set, a layer holding fewer heads "
                 "outside the chosen set than the chosen set takes from it (0: every random set matches it head "
                 "for head, layer by layer).")
    return notes


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
