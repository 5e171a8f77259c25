"""Plain-text tables made from result files (never imports torch).

Layers and heads are counted from 1 in every table, as in the paper
("8-10" is layer 8, head 10); the JSON counts from 0.

>>> head_label({"layer": 7, "head": 9, "direction": "dep_to_head"})
'8-10 dep->head'
"""

from __future__ import annotations

from pathlib import Path

from tabulate import tabulate

from probing.naming import head_name, heldout_title, offset_name, percent, percent_with_interval, selection_sides
from probing.report.escaping import tabulate_cells

SCORE_LEGEND = {
    "relation": "dobj, det, pobj, poss or any UD label; all: every word but the root (docs/scoring.md)",
    "pairs": "dependent-head word pairs of the relation in the treebank",
    "best head (layer-head, from 1)": "the head-direction with most pairs right; dep->head: the dependent "
                                      "attends most to its head, head->dep: the head most to the dependent",
    "acc %": "share of the pairs that head gets right",
    "best offset": "the fixed-position baseline with most pairs right (-2: two words to the left)",
    "offset acc %": "share of the pairs that offset gets right",
}
"""One line per column of :func:`score_table`."""

CAUSAL_LEGEND = {
    "causal head": "decoders only: the best head in the causal direction, which scores every pair by its later "
                   "word (right when it attends most, among earlier words, to the earlier one)",
    "causal acc %": "share of all the relation's pairs that head gets right (no pair is out of its reach)",
    "head first %": "share of the pairs whose head precedes the dependent: all dep->head can reach; head->dep "
                    "reaches the rest",
}
"""The columns a decoder's tables add (docs/scoring.md, the causal direction)."""

HELDOUT_LEGEND = {
    "relation": SCORE_LEGEND["relation"],
    "pairs": "dependent-head pairs of the relation in the test treebank",
    "head chosen on dev": "the head-direction with most pairs right on dev (tie of k: k tied, the lowest layer "
                          "and head win)",
    "acc % [95% CI]": "its accuracy on test, with its bootstrap interval over sentences",
    "offset": "the fixed-position baseline chosen on dev",
    "offset acc % [95% CI]": "the offset's accuracy on test, with its interval",
    "head - offset, points": "their paired difference on test, in percentage points, with its interval",
    "P(not better)": "share of bootstrap replicates in which the head does not beat the offset (a one-sided "
                     "bootstrap p-value; <1/B: none of B did)",
    "in-sample head": "the head chosen on test itself, as the paper does (optimistic)",
    "in-sample acc %": "that head's accuracy on test",
}
"""One line per column of :func:`heldout_table`."""


def head_label(best: dict | None) -> str:
    """``layer-head direction`` counted from 1, or a dash when there is none."""
    if best is None:
        return "-"
    return head_name(best["layer"], best["head"], best["direction"])


def is_causal_result(result: dict) -> bool:
    """Whether a probe result holds the causal direction (a decoder's, scored by this version)."""
    return all("causal" in entry for entry in result["relations"].values()) and bool(result["relations"])


def score_table(result: dict, tablefmt: str = "simple") -> str:
    """One row per relation: pairs, best head and accuracy, best offset and accuracy; for a decoder also
    the best head in the causal direction and the share of pairs whose head comes first."""
    causal = is_causal_result(result)
    rows = []
    for name, entry in result["relations"].items():
        best, baseline = entry["best"], entry["best_baseline"]
        row = [
            name,
            entry["total"],
            head_label(best),
            percent(best and best["accuracy"]),
            "-" if baseline is None else offset_name(baseline['offset']),
            percent(baseline and baseline["accuracy"]),
        ]
        if causal:
            block = entry["causal"]
            row += [head_label(block["best"]), percent(block["best"] and block["best"]["accuracy"]),
                    percent(block["head_first"] / entry["total"] if entry["total"] else None)]
        rows.append(row)
    headers = ["relation", "pairs", "best head (layer-head, from 1)", "acc %", "best offset", "offset acc %"]
    align = ("left", "right", "left", "right", "right", "right")
    if causal:
        headers += list(CAUSAL_LEGEND)
        align += ("left", "right", "right")
    rows, headers = tabulate_cells(rows, headers, tablefmt)
    return tabulate(rows, headers=headers, tablefmt=tablefmt, colalign=align, disable_numparse=True)


def run_header(result: dict) -> str:
    """One line that says what was scored on what: the model by its short name (its folder's name or hub
    id), the treebank as it was given (the sample treebank by that name, not where it is installed)."""
    from probing.data.inputs import sample_treebank_path

    model, treebank = result["model"], result["treebank"]
    skipped = ", ".join(f"{count} {why.replace('_', ' ')}" for why, count in treebank["skipped"].items() if count)
    path = treebank["path"]
    shown = f"the sample treebank ({Path(path).name})" if Path(path) == sample_treebank_path() else path
    name = model.get("name") or Path(str(model["name_or_path"])).name
    return (
        f"{name} ({model['architecture']}, {model['num_layers']}x{model['num_heads']}"
        f"{', random init' if model.get('random_init') else ''}) on {shown}: "
        f"{treebank['sentences_scored']}/{sentences_read(treebank, result.get('input', {}).get('limit'))}, "
        f"{treebank['words_scored']} words" + (f" (skipped: {skipped})" if skipped else "")
    )


def sentences_read(treebank: dict, limit: int | None = None) -> str:
    """The sentences a run read, the denominator of its header: after ``--limit`` and a half, with the file's
    count when they are fewer (a half of ``--limit 100`` read 50 sentences, not the file's 1000).

    >>> sentences_read({"sentences_total": 1000, "half": {"half": "odd", "limit": 100}})
    '50 sentences (the odd half of the first 100 of 1000 in the file)'
    >>> sentences_read({"sentences_total": 1000}, 20), sentences_read({"sentences_total": 75}, 100)
    ('20 sentences (the first 20 of 1000 in the file)', '75 sentences')
    """
    from probing.data.inputs import HALVES

    total = treebank["sentences_total"]
    half = treebank.get("half")
    limit = half["limit"] if half else limit
    first = total if limit is None else min(limit, total)
    read = len(range(HALVES.index(half["half"]), first, 2)) if half else first
    if read == total:
        return f"{total} sentences"
    which = f"the {half['half']} half of " if half else ""
    of_first = f"the first {first} of {total}" if first < total else f"{total}"
    return f"{read} sentences ({which}{of_first} in the file)"


def p_value(p: float | None, replicates: int) -> str:
    """A bootstrap fraction, shown as ``< 1/B`` when no replicate reached it.

    >>> p_value(0.0, 1000), p_value(0.25, 1000), p_value(None, 0)
    ('<0.001', '0.250', '-')
    """
    if p is None:
        return "-"
    if p == 0 and replicates:
        return f"<{1 / replicates:.3g}"
    return f"{p:.3f}"


def legend(columns: dict[str, str]) -> str:
    """One line per column: its name, then what it holds.

    >>> print(legend({"pairs": "dependent-head pairs", "acc %": "share right"}))
    columns:
      pairs  dependent-head pairs
      acc %  share right
    """
    width = max(map(len, columns))
    return "columns:\n" + "\n".join(f"  {name:<{width}}  {text}" for name, text in columns.items())


def in_sample_title(result: dict) -> str:
    """What an in-sample table is: chosen and reported on the same sentences, which flatters the heads."""
    sentences = result["treebank"]["sentences_scored"]
    title = f"in-sample: heads and offsets chosen and reported on the same {sentences} sentences (optimistic)"
    if "heldout" in result:
        return f"{title}, for comparison with the held-out table above"
    return f"{title}; --treebank en_ewt (dev and test splits) gives held-out numbers"


def score_tables(result: dict) -> str:
    """Everything ``probing score`` prints about a result, the table to cite first: the held-out table
    when there is one, then the in-sample one, each titled and with a legend of its columns."""
    parts = []
    causal = CAUSAL_LEGEND if is_causal_result(result) else {}
    if "heldout" in result:
        held_causal = {"causal head chosen on dev": CAUSAL_HELDOUT_LEGEND["causal head chosen on dev"],
                       "causal acc % [95% CI]": CAUSAL_HELDOUT_LEGEND["causal acc % [95% CI]"]} if causal else {}
        parts += [heldout_table(result), legend({**HELDOUT_LEGEND, **held_causal}), ""]
    parts += [in_sample_title(result), score_table(result), legend({**SCORE_LEGEND, **causal})]
    return "\n".join(parts)


CAUSAL_HELDOUT_LEGEND = {
    "causal head chosen on dev": "decoders only: the head with most pairs right on dev in the causal direction "
                                 "(each pair scored by its later word)",
    "causal acc % [95% CI]": "its accuracy on test over all the relation's pairs, with its interval",
}


def _causal_heldout_cells(entry: dict) -> list[str]:
    """The causal direction's held-out head and its test accuracy with interval (a decoder's row)."""
    chosen, dev = entry["causal"]["heldout"], entry["causal"]["dev"]
    ties = dev["ties"] if dev else 1
    return [head_label(chosen) + (f" (tie of {ties})" if ties > 1 else ""),
            percent_with_interval(chosen and chosen["accuracy"], chosen and chosen["interval"])]


def heldout_table(result: dict, tablefmt: str = "simple") -> str:
    """Held-out numbers: head and offset chosen on DEV, accuracy on TEST with 95% intervals.

    One row per relation, with the in-sample choice (chosen on TEST itself, as
    in the paper) beside it for comparison. Titled (:func:`probing.naming.heldout_title`).
    """
    heldout = result["heldout"]
    causal = all("causal" in entry for entry in heldout["relations"].values()) and bool(heldout["relations"])
    rows = []
    for name, entry in heldout["relations"].items():
        chosen, in_sample, dev = entry["heldout"], entry["in_sample"], entry["dev"]
        head, baseline, difference = chosen["head"], chosen["baseline"], chosen["difference"]
        ties = dev["head"]["ties"] if dev["head"] else 1
        rows.append(
            [
                name,
                entry["pairs"],
                head_label(head) + (f" (tie of {ties})" if ties > 1 else ""),
                percent_with_interval(head and head["accuracy"], head and head["interval"]),
                "-" if baseline is None else offset_name(baseline['offset']),
                percent_with_interval(baseline and baseline["accuracy"], baseline and baseline["interval"]),
                percent_with_interval(difference and difference["value"], difference and difference["interval"],
                                      signed=True),
                p_value(difference and difference["p_not_better"], heldout["replicates"]),
                head_label(in_sample["head"]),
                percent(in_sample["head"] and in_sample["head"]["accuracy"]),
            ]
            + (_causal_heldout_cells(entry) if causal else [])
        )
    headers = [
        "relation",
        "pairs",
        "head chosen on dev",
        "acc % [95% CI]",
        "offset",
        "offset acc % [95% CI]",
        "head - offset, points",
        "P(not better)",
        "in-sample head",
        "in-sample acc %",
    ]
    align = ("left", "right", "left", "right", "right", "right", "right", "right", "left", "right")
    if causal:
        headers += list(CAUSAL_HELDOUT_LEGEND)
        align += ("left", "right")
    table = tabulate(rows, headers=headers, tablefmt=tablefmt, colalign=align, disable_numparse=True)
    dev_treebank = heldout["select_on"]["treebank"]
    return (
        f"{heldout_title(heldout['level'], *selection_sides(dev_treebank, result['treebank']))}\n"
        f"chosen on {dev_treebank['path']} ({dev_treebank['sentences_scored']} sentences), "
        f"reported on {heldout['report_on']['path']}; intervals: {heldout['replicates']} bootstrap replicates "
        f"over sentences; layers and heads from 1\n{table}"
    )
