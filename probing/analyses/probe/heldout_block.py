"""The probe's ``heldout`` block: each relation's head and offset chosen on DEV, reported on TEST (docs/heldout.md).

Per relation, the block holds the DEV choice, its TEST accuracy with a 95% bootstrap interval, the chosen offset's
likewise, their paired difference with its interval and ``p_not_better``, and the in-sample numbers (chosen and
reported on TEST) under ``in_sample`` for comparison. Layers and heads count from 0, as everywhere in result files.

Nothing here runs a model or imports torch: :func:`attach_heldout` works on result dicts alone, and
:func:`reattach_heldout` recomputes the held-out numbers after TEST shards are merged (``probing merge``). The
analysis-neutral rules (which DEV, its checks, the sequence) are :mod:`probing.stats.heldout`; the probe's run of
both treebanks is :mod:`probing.analyses.probe.heldout`.

>>> entry = {"total": 4, "heads": {"dep_to_head": [[1, 3]], "head_to_dep": [[0, 0]]}, "baselines": {"-1": 2, "1": 1}}
>>> test = {"config": {"offsets": [-1, 1]}, "relations": {"det": entry}}
>>> in_sample_reports(test)["det"]["difference"]["value"]
0.25
"""

from __future__ import annotations

from probing.errors import ProbingError
from probing.stats.heldout import check_dev_test
from probing.stats.intervals import LEVEL, accuracy_interval, bootstrap_arrays, head_vs_baseline, interval_pair
from probing.stats.selection import HeadChoice, OffsetChoice, choose

METHOD = (
    "layer, head and direction (ties: lower layer, lower head, dep_to_head first) and offset "
    "(ties: the offset listed first) chosen on the select_on treebank; accuracy reported on this "
    "result's treebank; intervals: percentile bootstrap over sentences (Poisson weights seeded by "
    "sentence index); layers and heads from 0"
)

IN_SAMPLE = (
    "in_sample: head, direction and offset chosen and reported on this result's treebank, as in the paper; "
    "optimistic, and its interval ignores that the head was chosen on the same sentences"
)


def attach_heldout(test: dict, dev: dict, *, dev_result_path: str | None = None, level: float = LEVEL) -> dict:
    """A copy of the TEST result with a ``heldout`` object built from the DEV result."""
    check_compatible(dev, test, source=f"--select-on {dev_result_path}" if dev_result_path else "--select-on")
    return {**test, "heldout": heldout_block(dev, test, dev_result_path=dev_result_path, level=level)}


def heldout_block(dev: dict, test: dict, *, dev_result_path: str | None = None, level: float = LEVEL) -> dict:
    """The ``heldout`` object: DEV provenance and, per relation, DEV choice -> TEST numbers."""
    offsets = test["config"]["offsets"]
    choices, causal_choices = {}, {}
    for name in test["relations"]:
        entry = dev["relations"][name]
        head, offset = choose(entry, offsets)
        choices[name] = _dev_summary(entry["total"], head, offset)
        if "causal" in entry and "causal" in test["relations"][name]:
            causal_choices[name] = causal_choice(entry)
    select_on = {
        "result": dev_result_path,
        "treebank": dev["treebank"],
        "model": {key: dev["model"].get(key) for key in ("name_or_path", "fingerprint", "random_init")},
        "created": dev.get("created"),
    }
    return _block(test, select_on, choices, level, causal_choices)


def causal_choice(entry: dict) -> dict | None:
    """A decoder's head chosen in the causal direction from one relation entry: the most correct pairs,
    ties to the lower layer, then the lower head (the rule of every choice); None without pairs.

    >>> causal_choice({"total": 4, "causal": {"heads": [[1, 3], [3, 0]]}})
    {'layer': 0, 'head': 1, 'direction': 'causal', 'accuracy': 0.75, 'ties': 2}
    """
    import numpy as np

    from probing.stats.selection import best_cell

    total, heads = entry["total"], np.asarray(entry["causal"]["heads"])
    if total == 0:
        return None
    _, layer, head = best_cell(heads[None])
    best = int(heads[layer, head])
    return {"layer": layer, "head": head, "direction": "causal", "accuracy": best / total,
            "ties": int(np.sum(heads == best))}


def _causal_report(entry: dict, relation: int, choice: dict | None, arrays, level: float) -> dict | None:
    """The accuracy on ``entry`` (TEST) of a head chosen in the causal direction, with its interval."""
    total = entry["total"]
    if choice is None or total == 0:
        return None
    layer, head = choice["layer"], choice["head"]
    interval = None
    if arrays is not None and "boot_causal" in arrays:
        interval = accuracy_interval(arrays["boot_causal"][:, relation, layer, head], arrays["boot_total"][:, relation],
                                     level)
    return {"layer": layer, "head": head, "direction": "causal", "accuracy": entry["causal"]["heads"][layer][head] / total,
            "interval": interval_pair(interval)}


def reattach_heldout(merged: dict, parts: list[dict]) -> dict:
    """The merged result of TEST shards scored with ``--select-on``, with held-out numbers
    recomputed from the merged counts and the DEV choice that every part recorded.

    Parts without ``heldout`` leave ``merged`` as it is; parts that chose on
    different DEV data (or chose differently) cannot be merged into one report.
    """
    blocks = [part.get("heldout") for part in parts]
    if all(block is None for block in blocks):
        return merged
    first = blocks[0]
    for block in blocks:
        if block is None or _choice_key(block) != _choice_key(first):
            raise ProbingError("parts were not all selected on the same DEV with the same choices (--select-on)")
    choices = {name: entry["dev"] for name, entry in first["relations"].items()}
    causal_choices = {name: entry["causal"]["dev"] for name, entry in first["relations"].items() if "causal" in entry}
    return {**merged, "heldout": _block(merged, first["select_on"], choices, first["level"], causal_choices)}


def _choice_key(block: dict):
    return block["select_on"]["treebank"]["sha256"], {
        name: (entry["dev"], (entry.get("causal") or {}).get("dev")) for name, entry in block["relations"].items()}


def _block(test: dict, select_on: dict, choices: dict[str, dict], level: float,
           causal_choices: dict[str, dict | None] | None = None) -> dict:
    """Held-out and in-sample numbers on ``test`` for the DEV ``choices`` (``_dev_summary`` objects)."""
    offsets = list(test["config"]["offsets"])
    arrays = bootstrap_arrays(test)
    in_sample = in_sample_reports(test, level)
    relations = {}
    for index, (name, entry) in enumerate(test["relations"].items()):
        head, offset = _choices_of(choices[name], offsets)
        relations[name] = {
            "pairs": entry["total"],
            "dev": choices[name],
            "heldout": _report(entry, index, head, offset, arrays, level),
            "in_sample": in_sample[name],
        }
        if causal_choices and name in causal_choices and "causal" in entry:
            # a decoder: the head chosen on DEV in the causal direction, beside the classic choice
            relations[name]["causal"] = {
                "dev": causal_choices[name],
                "heldout": _causal_report(entry, index, causal_choices[name], arrays, level),
                "in_sample": _causal_report(entry, index, causal_choice(entry), arrays, level),
            }
    boot = test.get("bootstrap") or {}
    return {
        "method": METHOD,
        "in_sample": IN_SAMPLE,
        "level": level,
        "replicates": boot.get("replicates", 0),
        "seed": boot.get("seed"),
        "select_on": select_on,
        "report_on": {key: test["treebank"][key] for key in ("path", "sha256")},
        "relations": relations,
    }


def _choices_of(summary: dict, offsets: list[int]) -> tuple[HeadChoice | None, OffsetChoice | None]:
    """The HeadChoice and OffsetChoice that a ``_dev_summary`` object records."""
    head, baseline, pairs = summary["head"], summary["baseline"], summary["pairs"]
    head_choice = offset_choice = None
    if head is not None:
        correct = round(head["accuracy"] * pairs)
        head_choice = HeadChoice(head["direction"], head["layer"], head["head"], correct, head["ties"])
    if baseline is not None:
        correct = round(baseline["accuracy"] * pairs)
        offset_choice = OffsetChoice(baseline["offset"], offsets.index(baseline["offset"]), correct, baseline["ties"])
    return head_choice, offset_choice


def in_sample_reports(result: dict, level: float = LEVEL) -> dict[str, dict]:
    """Per relation, the head and offset chosen and reported on ``result``'s own treebank (the
    paper's numbers), with intervals when it has a bootstrap. The intervals ignore the choice."""
    offsets = result["config"]["offsets"]
    arrays = bootstrap_arrays(result)
    reports = {}
    for index, (name, entry) in enumerate(result["relations"].items()):
        head, offset = choose(entry, offsets)
        reports[name] = _report(entry, index, head, offset, arrays, level)
    return reports


def _dev_summary(total: int, head: HeadChoice | None, offset: OffsetChoice | None) -> dict:
    return {
        "pairs": total,
        "head": None
        if head is None
        else {
            "layer": head.layer,
            "head": head.head,
            "direction": head.direction,
            "accuracy": head.correct / total,
            "ties": head.ties,
        },
        "baseline": None
        if offset is None
        else {"offset": offset.offset, "accuracy": offset.correct / total, "ties": offset.ties},
    }


def _report(entry: dict, relation: int, head: HeadChoice | None, offset: OffsetChoice | None, arrays, level) -> dict:
    """Accuracy on ``entry`` (TEST) of a given head and offset, with intervals when there is a bootstrap."""
    total = entry["total"]
    if head is None or offset is None or total == 0:
        return {"head": None, "baseline": None, "difference": None}
    head_accuracy = entry["heads"][head.direction][head.layer][head.head] / total
    offset_accuracy = entry["baselines"][str(offset.offset)] / total
    intervals = None
    if arrays is not None:
        intervals = head_vs_baseline(
            arrays["boot_total"],
            arrays["boot_heads"],
            arrays["boot_baselines"],
            relation,
            (head.direction_index, head.layer, head.head),
            offset.index,
            level,
        )
    return {
        "head": {
            "layer": head.layer,
            "head": head.head,
            "direction": head.direction,
            "accuracy": head_accuracy,
            "interval": interval_pair(intervals and intervals["head"]),
        },
        "baseline": {
            "offset": offset.offset,
            "accuracy": offset_accuracy,
            "interval": interval_pair(intervals and intervals["baseline"]),
        },
        "difference": {
            "value": head_accuracy - offset_accuracy,
            "interval": interval_pair(intervals and intervals["difference"]["interval"]),
            "p_not_better": intervals and intervals["difference"]["p_not_better"],
        },
    }


def check_compatible(dev: dict, test: dict, source: str = "--select-on") -> None:
    """The probe's DEV/TEST check: :func:`check_dev_test`, and DEV has every relation TEST reports."""
    check_dev_test(dev, test, source=source, may_differ=("relations",), relations=list(test["relations"]))
