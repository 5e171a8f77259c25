"""Each condition's value and bootstrap replicates from an ablation's state (torch-free: result files read it).

The state is what ``AblationAccumulator`` adds up (its ``state_tensors``, as numpy arrays): for a ratio metric
(mlm, lm, classification) numerator and denominator sums, for the probe the counts of every condition
(``c{i}.heads`` [relation, direction, layer, head], ``c{i}.total`` [relation] and their replicates), for
minimal pairs one right-or-wrong bit per (condition, pair) (probing.analyses.ablation.pair_parts).

>>> state = {"numerator": np.array([[2.0], [3.0]]), "denominator": np.array([[4.0], [4.0]]),
...          "boot_numerator": np.array([[[1.0], [2.0]]]), "boot_denominator": np.array([[[2.0], [2.0]]])}
>>> values, replicates = condition_scores("lm", state, 2)
>>> values.tolist(), replicates.tolist()
([[0.5], [0.75]], [[[0.5], [1.0]]])
"""

from __future__ import annotations

import re

import numpy as np

from probing.errors import ProbingError


def condition_scores(metric: str, state: dict, conditions: int, *, layout=None, bootstrap: int = 0,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """values [condition, part] and replicates [replicate, condition, part] of ``metric`` (its --metric name)."""
    if metric == "minimal-pairs":
        from probing.analyses.ablation.pair_parts import pair_scores

        return pair_scores(state["right"], layout, bootstrap=bootstrap, seed=seed)
    if metric == "probe":
        values, replicates = [], []
        for i in range(conditions):
            total = np.asarray(state[f"c{i}.total"], dtype=np.float64)  # [relation]
            heads = np.asarray(state[f"c{i}.heads"])                    # [relation, direction, layer, head]
            boot = np.asarray(state[f"c{i}.boot_heads"])                # [replicate, relation, direction, layer, head]
            with np.errstate(invalid="ignore", divide="ignore"):
                values.append(heads.reshape(len(total), -1).max(axis=1) / total)
                replicates.append(boot.reshape(*boot.shape[:2], -1).max(axis=2) / state[f"c{i}.boot_total"])
        return np.stack(values), np.stack(replicates, axis=1)
    if not np.asarray(state["denominator"])[0].any():
        raise ProbingError("nothing to score: no unit yielded a token or a label", source="--metric")
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.asarray(state["numerator"]) / state["denominator"]
        replicates = np.asarray(state["boot_numerator"]) / state["boot_denominator"]
    return values, replicates


SCORES_ONLY = ("scores.values", "scores.replicates")
"""The state of a result written with ``ablate --scores-only``: each condition's values [condition, part] and
replicates [replicate, condition, part] themselves, in place of the sums they come from. The probe metric's
sums hold every head's replicate counts for every condition (over 400 MB for 127 conditions of SmolLM2 with
1,000 replicates); the scores are a few MB, but they cannot be added up, so such a file is not merged.

In a ``--chosen`` run only the intact model's and the chosen sets' replicates are kept (the paired interval of a
chosen set's effect needs them); a random set's are NaN. Its p-value and the random spread come from the sets'
values, and every condition's own interval is in the result's ``conditions`` already, so nothing a report shows
is lost, while 1,000 replicates of 1,000 random sets (8 MB a relation) shrink to almost nothing encoded."""


def scores_only_state(values: np.ndarray, replicates: np.ndarray, *, kept=None) -> dict:
    """The encoded ``--scores-only`` state of ``values`` [condition, part] and ``replicates`` [replicate,
    condition, part]; with ``kept`` (condition indices), the replicates of every other condition are NaN.

    >>> sorted(scores_only_state(np.zeros((2, 1)), np.zeros((3, 2, 1))))
    ['scores.replicates', 'scores.values']
    >>> from probing.results.schema.arrays import decode_array
    >>> state = scores_only_state(np.zeros((3, 1)), np.ones((2, 3, 1)), kept=[0, 1])
    >>> decode_array(state["scores.replicates"])[0, :, 0].tolist()
    [1.0, 1.0, nan]
    """
    from probing.results.schema.arrays import encode_array

    replicates = np.array(replicates, dtype=np.float64)
    if kept is not None:
        dropped = np.ones(replicates.shape[1], dtype=bool)
        dropped[list(kept)] = False
        replicates[:, dropped] = np.nan
    return dict(zip(SCORES_ONLY, (encode_array(np.asarray(values, dtype=np.float64)), encode_array(replicates))))


def replicates_kept(conditions) -> list[int]:
    """The conditions whose replicates a ``--scores-only`` result of a ``--chosen`` run keeps: the intact model
    (condition 0) and each chosen set (its label ends in ``:chosen``); None keeps all (no ``--chosen`` run).

    >>> replicates_kept([{"label": "none"}, {"label": "det@1:chosen"}, {"label": "det@1:random0"}])
    [0, 1]
    >>> replicates_kept([{"label": "none"}, {"label": "L0H1"}]) is None
    True
    """
    chosen = [i for i, condition in enumerate(conditions) if condition["label"].endswith(":chosen")]
    return [0, *chosen] if chosen else None


RELATIVE = re.compile(r"([cd])(\d+)\.(.+)")
"""A probe-metric state array's name: ``c{i}.NAME`` (condition i's counts) or ``d{i}.NAME`` (the same, written
relative to the intact model's, :func:`relative_state`)."""


def relative_state(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The probe metric's state as a result file keeps it: the intact model's counts (``c0.NAME``) as they are,
    every other condition's as its difference from them, zigzag-coded (0, -1, 1, -2 ... as 0, 1, 2, 3 ...), under
    ``d{i}.NAME``. A condition differs from the intact model only in what its disabled heads change: the pairs,
    the baselines and every layer below the first disabled one are the same, and most counts above it move by a
    few, so the differences are mostly zeros and small numbers that the arrays' byte planes compress to little
    (probing.results.schema.arrays). Differences add up as the counts do, so a merge of parts is unchanged.
    Other states (ratio metrics, minimal pairs, ``--scores-only``) are returned as they are.

    >>> state = {"c0.heads": np.array([5, 7]), "c1.heads": np.array([4, 9])}
    >>> relative = relative_state(state)
    >>> relative["d1.heads"].tolist(), absolute_state(relative)["c1.heads"].tolist()
    ([1, 4], [4, 9])
    """
    relative = {}
    for name, array in state.items():
        found = RELATIVE.fullmatch(name)
        if found and found.group(1) == "c" and found.group(2) != "0" and np.asarray(array).dtype.kind in "iu":
            change = np.asarray(array, dtype=np.int64) - np.asarray(state[f"c0.{found.group(3)}"], dtype=np.int64)
            relative[f"d{found.group(2)}.{found.group(3)}"] = np.where(change >= 0, 2 * change, -2 * change - 1)
        else:
            relative[name] = array
    return relative


def absolute_state(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The inverse of :func:`relative_state`; a state without ``d{i}`` arrays (a file written before them) is
    returned as it is."""
    absolute = {}
    for name, array in state.items():
        found = RELATIVE.fullmatch(name)
        if found and found.group(1) == "d":
            coded = np.asarray(array, dtype=np.int64)
            change = np.where(coded % 2 == 0, coded // 2, -(coded + 1) // 2)
            absolute[f"c{found.group(2)}.{found.group(3)}"] = np.asarray(state[f"c0.{found.group(3)}"]) + change
        else:
            absolute[name] = array
    return absolute


def decoded_state(result: dict) -> dict[str, np.ndarray]:
    """An ablation result file's state as the accumulator holds it: decoded, every condition's counts absolute."""
    from probing.results.schema.arrays import decode_array

    return absolute_state({name: decode_array(encoded) for name, encoded in result["state"].items()})


def result_scores(result: dict) -> tuple[np.ndarray, np.ndarray]:
    """:func:`condition_scores` of a (validated) ablation result file, from its encoded state."""
    config = result["config"]
    state = decoded_state(result)
    if set(state) == set(SCORES_ONLY):
        return state["scores.values"], state["scores.replicates"]
    return condition_scores(config["metric"], state, len(result["conditions"]),
                            layout=config.get("metric_options", {}).get("layout"),
                            bootstrap=config["bootstrap"]["replicates"], seed=config["bootstrap"]["seed"])
