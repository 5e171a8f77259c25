"""Held-out numbers: choose each relation's head and offset on DEV, report them on TEST.

``probing score --select-on DEV --treebank TEST`` scores DEV (no bootstrap
needed: only its counts decide), then TEST with its bootstrap, and writes one
result: the TEST result exactly as docs/results.md describes it (its
``relations`` block is in-sample on TEST, as in the paper), plus a ``heldout``
object. Per relation, ``heldout`` holds the DEV choice, its TEST accuracy with
a 95% bootstrap interval, the chosen offset's likewise, their paired
difference with its interval and ``p_not_better``, and the in-sample numbers
(chosen and reported on TEST) under ``in_sample`` for comparison. Layers and
heads count from 0 in the JSON, as everywhere in result files.

``DEV`` is a treebank (``en_ewt:dev``, a path) or a finished DEV result JSON,
so that shards of TEST need not score DEV again. ``--treebank en_ewt`` alone
(a known treebank with dev and test splits) means: select on ``en_ewt:dev``,
report on ``en_ewt:test``.

Nothing here imports torch until a model must run (``score_heldout``);
:func:`attach_heldout` works on result dicts alone, and :func:`reattach_heldout`
recomputes the held-out numbers after TEST shards are merged (``probing merge``).

>>> default_splits("en_ewt"), default_splits("en_ewt:test"), default_splits("en_pud")
(('en_ewt:dev', 'en_ewt:test'), None, ('en_pud:even', 'en_pud:odd'))
"""

from __future__ import annotations

from pathlib import Path

from probing.errors import ProbingError
from probing.stats.intervals import LEVEL, accuracy_interval, bootstrap_arrays, head_vs_baseline
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


def default_splits(spec: str | None) -> tuple[str, str] | None:
    """``(choose on, report on)`` names for a bare treebank name, else None: dev and test for a treebank
    with both, the even and odd halves for a one-split treebank such as ``ko_pud`` (docs/languages.md)."""
    from probing.data.datasets import heldout_names

    if not spec or Path(spec).expanduser().exists():
        return None
    return heldout_names(spec)


def is_result_file(select_on: str) -> bool:
    """Whether ``--select-on`` names a result JSON rather than a treebank."""
    return select_on.lower().endswith(".json")


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
            "interval": _pair(interval)}


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
            "interval": _pair(intervals and intervals["head"]),
        },
        "baseline": {
            "offset": offset.offset,
            "accuracy": offset_accuracy,
            "interval": _pair(intervals and intervals["baseline"]),
        },
        "difference": {
            "value": head_accuracy - offset_accuracy,
            "interval": _pair(intervals and intervals["difference"]["interval"]),
            "p_not_better": intervals and intervals["difference"]["p_not_better"],
        },
    }


def _pair(interval) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


def check_compatible(dev: dict, test: dict, source: str = "--select-on") -> None:
    """Fail loudly unless DEV and TEST come from the same weights and scoring options."""
    from probing.results.identity import difference, selection_identity

    if dev["input"]["sha256"] == test["input"]["sha256"] and not _other_halves(dev["input"], test["input"]):
        raise ProbingError(
            "selects on the very treebank it reports on, which is in-sample selection; "
            "give the dev split (or drop --select-on for in-sample numbers)",
            source=source,
        )
    if (dev["config"].get("shard") or None) is not None:
        raise ProbingError("is one shard of DEV; merge its shards first (probing merge)", source=source)
    missing = [name for name in test["relations"] if name not in dev["relations"]]
    if missing:
        raise ProbingError(f"DEV result lacks relations {missing}; score DEV with them too", source=source)
    dev_identity, test_identity = selection_identity(dev), selection_identity(test)
    dev_identity["config"].pop("relations", None)
    test_identity["config"].pop("relations", None)
    found = difference(dev_identity, test_identity, labels=("DEV", "TEST"))
    if found:
        raise ProbingError(f"DEV and TEST are not of the same model and options: {found}", source=source)


def _other_halves(dev_input: dict, test_input: dict) -> bool:
    """Whether two readings of one file took its two different halves (choose on even, report on odd)."""
    halves = [(block.get("half") or {}).get("half") for block in (dev_input, test_input)]
    limits = [(block.get("half") or {}).get("limit") for block in (dev_input, test_input)]
    return None not in halves and halves[0] != halves[1] and limits[0] == limits[1]


def read_dev_result(path: str) -> dict:
    """A DEV result file, checked to be one (``--select-on FILE.json``)."""
    from probing.results.io import read_result

    try:
        return read_result(path, analysis="probe")
    except ProbingError as error:
        raise ProbingError(f"{error} (given as --select-on)") from None


def score_heldout(config, select_on: str, *, progress: bool = False) -> dict:
    """Score DEV (or read its result) and TEST with one loaded model; return TEST + ``heldout``.

    ``config`` is the TEST run's ScoreConfig; DEV is scored with the same
    options, without bootstrap and unsharded (every TEST shard must make the
    same choice).
    """
    from probing.analyses.probe.api import load_for, run_probe

    config = config.validated()
    dev, dev_path = None, None
    if is_result_file(select_on):
        dev, dev_path = read_dev_result(select_on), select_on
        _check_config_against(dev, config, source=f"--select-on {select_on}")
    from probing.data.inputs import open_input

    # Both treebanks are read through while the model loads: a bad line in either costs no model time.
    dev_source = None if dev is not None else open_input(select_on, limit=config.limit)
    test_source = open_input(config.treebank, limit=config.limit)
    loaded = load_for(config, validate=[source for source in (dev_source, test_source) if source], progress=progress)
    if dev is None:
        dev_config = config.replace(treebank=select_on, bootstrap=0, shard=None)
        dev = run_probe(dev_config, progress=progress, loaded=loaded, description="selecting on DEV", source=dev_source)
    test = run_probe(config, progress=progress, loaded=loaded, source=test_source)
    result = attach_heldout(test, dev, dev_result_path=dev_path)
    result["heldout"]["select_on"]["spec"] = select_on
    return result


def _check_config_against(dev: dict, config, source: str) -> None:
    """Early checks of a DEV result against the TEST options, before any model is loaded."""
    missing = [name for name in config.relations if name not in dev["relations"]]
    if missing:
        raise ProbingError(f"DEV result lacks relations {missing}; score DEV with them too", source=source)
    if list(dev["config"]["offsets"]) != list(config.offsets):
        raise ProbingError(f"DEV offsets {dev['config']['offsets']} differ from {list(config.offsets)}", source=source)
    if bool(dev["model"].get("random_init")) != bool(config.random_init):
        raise ProbingError("DEV and TEST differ in --random-init", source=source)
    if dev["config"].get("attention", "weights") != config.attention:
        raise ProbingError(f"DEV was read with --attention {dev['config'].get('attention')}, this run with "
                           f"{config.attention}", source=source)


def score_with_selection(config, select_on: str | None, *, progress: bool = False) -> dict:
    """What ``probing score`` runs: held-out when ``select_on`` is given or the treebank is a
    bare name with dev and test splits (select on dev, report on test), else in-sample."""
    splits = default_splits(config.treebank)
    if splits is not None:
        select_on = select_on or splits[0]
        config = config.replace(treebank=splits[1])
    if not select_on:
        from probing.analyses.probe.api import run_probe

        return run_probe(config, progress=progress)
    return score_heldout(config, select_on, progress=progress)
