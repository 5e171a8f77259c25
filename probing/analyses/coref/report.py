"""Coreference numbers from counts: the chosen head, accuracies by mention type, intervals, tables.

Everything here works on count arrays (numpy), so it runs on result files
without torch: the in-sample report a run writes, the held-out report
(head chosen on DEV by all-mentions accuracy, reported on TEST by type), the
command's table and the leaderboard's table (:func:`leaderboard_table`).

Arrays (T = 4 types: all, pronoun, proper, nominal; K = 3 baselines):
``scored`` [T], ``heads`` [T, direction, layer, head], ``baselines`` [T, K];
with a bootstrap ``boot_scored`` [B, T], ``boot_heads`` [B, T, direction,
layer, head], ``boot_baselines`` [B, T, K], the Poisson replicate counts
whose unit of resampling is the window.

>>> arrays = {"scored": np.array([4, 2, 1, 1]), "baselines": np.array([[2, 3, 3], [1, 1, 2], [1, 1, 1], [0, 1, 0]]),
...           "heads": np.array([[[[1, 3]], [[0, 2]]], [[[1, 2]], [[0, 1]]], [[[0, 1]], [[0, 1]]], [[[0, 0]], [[0, 0]]]])}
>>> choice = choose_head(arrays)
>>> (choice.layer, choice.head, choice.direction, choice.correct)
(0, 1, 'dep_to_head', 3)
>>> report = type_reports(arrays, choice)
>>> report["pronoun"]["head"]["accuracy"], report["nominal"]["baselines"]["head_match"]["accuracy"]
(1.0, 1.0)
"""

from __future__ import annotations

import numpy as np

from probing.analyses.coref.antecedents import BASELINES
from probing.data.entities import TYPES
from probing.errors import ProbingError
from probing.naming import head_name, percent_with_interval
from probing.report.board import Cell, Row, Table, leaderboard_position, rank_rows, result_label
from probing.stats.intervals import LEVEL, accuracy_interval, interval_pair, paired_difference
from probing.stats.selection import HeadChoice, select_head

TYPE_AXIS = ("all",) + TYPES
"""The type axis of every count array: all scored mentions, then each mention type."""

BASELINE_NAMES = {"nearest": "nearest", "head_match": "head match", "rule_based": "rule-based"}
"""How tables name the baselines."""

COUNT_ARRAYS = ("scored", "heads", "baselines")
BOOTSTRAP_ARRAYS = ("boot_scored", "boot_heads", "boot_baselines")

SELECTION = (
    "layer, head and direction chosen by accuracy over all scored mentions (ties: lower layer, lower head, "
    "dep_to_head first) on the select_on treebank, reported on this result's treebank by mention type; "
    "intervals: percentile Poisson bootstrap over windows"
)
IN_SAMPLE = (
    "chosen and reported on this result's own treebank (as in the paper): optimistic, and its interval "
    "ignores that the head was chosen on the same windows"
)
PAPER = {
    "nearest": (27, 29, 29, 19),
    "head_match": (52, 47, 67, 40),
    "rule_based": (69, 70, 77, 60),
    "head 5-4": (65, 64, 73, 58),
}
"""Clark et al. (2019), Table 2, CoNLL-2012 dev, % (all / pronoun / proper / nominal), for comparison only."""


def arrays_of(result: dict) -> dict[str, np.ndarray]:
    """The count arrays of a (validated) coref result, from its encoded state."""
    from probing.results.schema.arrays import decode_array

    return {name: decode_array(encoded) for name, encoded in result["state"].items()}


def choose_head(arrays: dict) -> HeadChoice | None:
    """The head with the most right antecedents over all scored mentions; None when none was scored."""
    return select_head(np.asarray(arrays["heads"])[0], int(arrays["scored"][0]))


def choice_summary(choice: HeadChoice | None, arrays: dict) -> dict | None:
    """A choice as result files hold it (layers and heads from 0), with what it was chosen on."""
    if choice is None:
        return None
    scored = int(arrays["scored"][0])
    return {"layer": choice.layer, "head": choice.head, "direction": choice.direction,
            "accuracy": choice.correct / scored, "mentions": scored, "ties": choice.ties}


def choice_of(summary: dict | None) -> HeadChoice | None:
    """The HeadChoice a :func:`choice_summary` object records."""
    if summary is None:
        return None
    correct = round(summary["accuracy"] * summary["mentions"])
    return HeadChoice(summary["direction"], summary["layer"], summary["head"], correct, summary["ties"])


def type_reports(arrays: dict, choice: HeadChoice | None, level: float = LEVEL) -> dict[str, dict]:
    """Per mention type: scored mentions, the chosen head's accuracy and each baseline's, with
    intervals and the paired difference head minus baseline when the arrays hold a bootstrap."""
    boot = all(name in arrays for name in BOOTSTRAP_ARRAYS)
    reports = {}
    for t, name in enumerate(TYPE_AXIS):
        scored = int(arrays["scored"][t])
        total = np.asarray(arrays["boot_scored"])[:, t] if boot else None
        entry: dict = {"mentions": scored, "head": None, "baselines": {}, "difference": {}}
        head_boot = None
        if choice is not None and scored:
            d = choice.direction_index
            correct = int(arrays["heads"][t, d, choice.layer, choice.head])
            if boot:
                head_boot = np.asarray(arrays["boot_heads"])[:, t, d, choice.layer, choice.head]
            entry["head"] = {"layer": choice.layer, "head": choice.head, "direction": choice.direction,
                             "accuracy": correct / scored,
                             "interval": interval_pair(accuracy_interval(head_boot, total, level) if boot else None)}
        for k, baseline in enumerate(BASELINES):
            if not scored:
                entry["baselines"][baseline] = None
                continue
            base_boot = np.asarray(arrays["boot_baselines"])[:, t, k] if boot else None
            accuracy = int(arrays["baselines"][t, k]) / scored
            entry["baselines"][baseline] = {
                "accuracy": accuracy,
                "interval": interval_pair(accuracy_interval(base_boot, total, level) if boot else None),
            }
            if entry["head"] is not None:
                paired = paired_difference(head_boot, base_boot, total, level) if boot else None
                entry["difference"][baseline] = {
                    "value": entry["head"]["accuracy"] - accuracy,
                    "interval": interval_pair(paired and paired["interval"]),
                    "p_not_better": paired and paired["p_not_better"],
                }
        reports[name] = entry
    return reports


def best_by_type(arrays: dict) -> dict[str, dict | None]:
    """Each type's own best head, in-sample (ties as everywhere); None for a type with no scored mention."""
    best = {}
    for t, name in enumerate(TYPE_AXIS):
        scored = int(arrays["scored"][t])
        choice = select_head(np.asarray(arrays["heads"])[t], scored)
        best[name] = None if choice is None else {"layer": choice.layer, "head": choice.head,
                                                   "direction": choice.direction, "accuracy": choice.correct / scored}
    return best


def in_sample_block(arrays: dict, level: float = LEVEL) -> dict:
    """The head chosen on these counts' all-mentions accuracy, reported on them by type."""
    choice = choose_head(arrays)
    return {"method": IN_SAMPLE, "level": level, "choice": choice_summary(choice, arrays),
            "types": type_reports(arrays, choice, level)}


# ---------------------------------------------------------------------------- held-out


def heldout_block(test: dict, select_on: dict, choice: dict | None, level: float = LEVEL) -> dict:
    """The ``heldout`` object of a TEST result: the DEV choice (``choice_summary``) reported on TEST."""
    arrays = arrays_of(test)
    boot = test["coref"].get("bootstrap") or {}
    return {
        "method": SELECTION,
        "level": level,
        "replicates": boot.get("replicates", 0),
        "seed": boot.get("seed"),
        "select_on": select_on,
        "report_on": {key: test["input"][key] for key in ("path", "sha256")},
        "dev": choice,
        "types": type_reports(arrays, choice_of(choice), level),
    }


def select_on_block(dev: dict, *, result_path: str | None = None, spec: str | None = None) -> dict:
    """What a held-out report records of the DEV run it chose on."""
    return {
        "result": result_path,
        "spec": spec,
        "input": {key: dev["input"][key] for key in ("path", "sha256")},
        "model": {key: dev["model"].get(key) for key in ("name_or_path", "fingerprint", "random_init")},
        "created": dev.get("created"),
    }


def reattach_heldout(merged: dict, parts: list[dict]) -> dict:
    """Merged TEST shards keep their common DEV choice, reported again on the merged counts."""
    blocks = [part.get("heldout") for part in parts]
    if all(block is None for block in blocks):
        return merged
    first = blocks[0]
    for block in blocks:
        if block is None or (block["select_on"]["input"]["sha256"], block["dev"]) != (
                first["select_on"]["input"]["sha256"], first["dev"]):
            raise ProbingError("parts were not all selected on the same DEV with the same choice (--select-on)")
    return {**merged, "heldout": heldout_block(merged, first["select_on"], first["dev"], first["level"])}


# ---------------------------------------------------------------------------- tables


def chosen_report(result: dict) -> tuple[dict, str]:
    """The report a table shows (held-out when there is one, else in-sample) and its label."""
    if result.get("heldout"):
        return result["heldout"]["types"], "held-out"
    return result["coref"]["in_sample"]["types"], "in-sample"


def percent(entry: dict | None, *, interval: bool = True) -> str:
    """``45.1 [43.0, 47.2]``; ``-`` without a number.

    >>> percent({"accuracy": 0.4512, "interval": [0.43, 0.472]})
    '45.1 [43.0, 47.2]'
    """
    if entry is None:
        return "-"
    return percent_with_interval(entry["accuracy"], entry.get("interval") if interval else None)


def coref_table(result: dict, tablefmt: str = "simple") -> str:
    """The command's table: the chosen head and the baselines by mention type, with intervals."""
    from tabulate import tabulate

    types, label = chosen_report(result)
    choice = (result.get("heldout") or {}).get("dev") if label == "held-out" else result["coref"]["in_sample"]["choice"]
    head = "head" if choice is None else f"head {head_name(choice['layer'], choice['head'], choice['direction'])}"
    headers = ["type", "mentions", head] + [BASELINE_NAMES[name] for name in BASELINES]
    rows = []
    for name in TYPE_AXIS:
        entry = types[name]
        rows.append([name, str(entry["mentions"]), percent(entry["head"])]
                    + [percent(entry["baselines"][baseline]) for baseline in BASELINES])
    table = tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True, stralign="right")
    return f"{table}\n\n{describe(result, label, choice)}"


def describe(result: dict, label: str, choice: dict | None) -> str:
    """One paragraph under the table: what was chosen where, the windows, what was skipped."""
    coref = result["coref"]
    skipped = result["input"]["skipped"].get("too_long", 0)
    where = "on these windows (in-sample)"
    if label == "held-out":
        selected = result["heldout"]["select_on"]
        where = f"on {_stem(selected['input']['path'])}"
        if choice is not None:
            where += f" ({100 * choice['accuracy']:.1f}% of its {choice['mentions']} mentions)"
    level = 100 * (result.get("heldout") or coref["in_sample"])["level"]
    boot = coref.get("bootstrap")
    intervals = (f"{level:.0f}% intervals from {boot['replicates']} Poisson bootstrap replicates over windows"
                 if boot else "no intervals (--bootstrap 0)")
    return (f"Accuracy % of {_stem(result['input']['path'])}'s scored mentions (an antecedent in the window); head "
            f"chosen by all-mentions accuracy {where}; layers and heads from 1; {intervals}. "
            f"{coref['windows']} windows of up to {coref['window']} tokens, {coref['mentions']['all']} mentions, "
            f"{skipped} sentences longer than a window skipped.")


def _stem(path: str) -> str:
    from pathlib import Path

    return Path(path).stem


@leaderboard_position(10)
def leaderboard_tables(results: list[dict]) -> list[Table]:
    """Coreference's part of a leaderboard (registered as the analysis's ``tables``)."""
    return [leaderboard_table(results)]


def leaderboard_table(results: list[dict]) -> Table:
    """The coreference table of a leaderboard (torch-free): per model its chosen head's accuracy by mention
    type, and the three baselines on the same mentions, accuracy % with intervals; held-out when the result
    has it, else in-sample (marked). Rows are grouped by treebank and window length, ranked by the
    all-mentions column; baseline rows appear once per distinct set of windows (a tokenizer's).
    """
    rows, levels, baseline_rows = [], set(), {}
    ordered = sorted(results, key=lambda result: (_stem(result["input"]["path"]), result["coref"]["window"]))
    groups: dict[str, list[Row]] = {}
    for result in ordered:
        types, label = chosen_report(result)
        choice = result["heldout"]["dev"] if label == "held-out" else result["coref"]["in_sample"]["choice"]
        levels.add((result.get("heldout") or result["coref"]["in_sample"])["level"])
        group = f"{_stem(result['input']['path'])}, window {result['coref']['window']}"
        model = Row(result_label(result), "model", label, group)
        for name in TYPE_AXIS:
            model.cells[name] = _cell(types[name]["head"], types[name]["mentions"], choice)
        groups.setdefault(group, []).append(model)
        for baseline in BASELINES:
            cells = {name: _cell(types[name]["baselines"][baseline], types[name]["mentions"], None)
                     for name in TYPE_AXIS}
            key = (group, baseline, tuple((c.accuracy, c.pairs) for c in cells.values()))
            if key in baseline_rows:  # the same windows (a random-init control reads its trained model's)
                readers = baseline_rows[key][1]
                if result["model"]["name"] not in readers:
                    readers.append(result["model"]["name"])
                continue
            row = Row(BASELINE_NAMES[baseline], "baseline", label, group)
            row.cells = cells
            baseline_rows[key] = (row, [result["model"]["name"]])
            groups[group].append(row)
    if len({readers[0] for _, readers in baseline_rows.values()}) > 1:  # several sets of windows: say whose
        for row, readers in baseline_rows.values():
            row.model = f"{row.model} ({', '.join(readers)} windows)"
    for group_rows in groups.values():
        rows += rank_rows(group_rows, ["all"])
    level = sorted(levels)[0] if levels else LEVEL
    notes = [
        "Antecedent selection accuracy: a mention is scored when an earlier mention of its entity lies in its "
        "window; a prediction is right when it is the head word of such an antecedent.",
        f"Cells: accuracy % [{100 * level:.0f}% Poisson-bootstrap interval over windows] and the head as layer-head "
        "counted from 1 (h>d: head_to_dep).",
        "Held-out: head chosen on dev by all-mentions accuracy and reported on test; in-sample: chosen and "
        "reported on the same treebank. Rows are ranked by the all-mentions column.",
        "Baselines depend on the windows, hence on a model's tokenizer and window length; each distinct set is "
        "shown once, named after the models whose windows gave it.",
        "Clark et al. 2019, Table 2 (CoNLL-2012, BERT-base, all/pronoun/proper/nominal): nearest 27/29/29/19, "
        "head match 52/47/67/40, rule-based 69/70/77/60, head 5-4 65/64/73/58.",
    ]
    return Table(list(TYPE_AXIS), rows, notes, level=level, key="coref", mean=False,
                 title="Coreference: antecedent selection accuracy by mention type")


def _cell(entry: dict | None, mentions: int, choice: dict | None) -> Cell:
    """A leaderboard cell of one accuracy (a head's when ``choice`` names it)."""
    if entry is None:
        return Cell(accuracy=None, pairs=mentions)
    head = "" if choice is None else head_name(choice["layer"], choice["head"])
    return Cell(accuracy=entry["accuracy"], interval=entry.get("interval"), head=head,
                      direction=None if choice is None else choice["direction"], pairs=mentions)
