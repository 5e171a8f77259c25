"""Tables of no-op results (probing.analyses.noop.accumulator), torch-free: leaderboards and pages read result files only.

>>> percent_with_interval({"value": -0.25, "interval": [-0.3, -0.2]})
'-25.0 [-30.0, -20.0]'
"""

from __future__ import annotations

from probing.naming import head_name
from probing.stats.intervals import LEVEL

TARGETS = ("special", "punctuation")
"""Where the measured share of a word's attention goes (axis ``target`` of every sum)."""
GROUPS = ("dependents", "non_dependents", "heads", "non_heads")
"""Whose attention: the relation's dependents, its head words, and in each case every other word of the same
sentences."""

ATTENDING = {"dep_to_head": ("dependents", "non_dependents"), "head_to_dep": ("heads", "non_heads")}
"""Direction -> the words whose attention a head's prediction reads, and the rest: a dep_to_head head is
right when a dependent attends to its head, a head_to_dep head when the head word attends to its dependent."""


def chosen_heads(probe: dict) -> dict[str, dict | None]:
    """Each relation's chosen head in a probe result: the dev choice of a held-out result, else the in-sample best.

    >>> probe = {"relations": {"det": {"best": {"layer": 2, "head": 8, "direction": "dep_to_head", "accuracy": 0.8}}}}
    >>> chosen_heads(probe)
    {'det': {'layer': 2, 'head': 8, 'direction': 'dep_to_head', 'selection': 'in-sample best'}}
    """
    heldout = probe.get("heldout")
    chosen = {}
    for name, entry in probe["relations"].items():
        if heldout:
            best, selection = heldout["relations"][name]["dev"]["head"], "chosen on dev"
        else:
            best, selection = entry["best"], "in-sample best"
        chosen[name] = None if best is None else {"layer": best["layer"], "head": best["head"],
                                                  "direction": best["direction"], "selection": selection}
    return chosen


def percent_with_interval(entry: dict | None) -> str:
    """``61.9 [58.0, 65.2]`` from ``{"share": .., "interval": ..}`` or ``{"value": .., ...}``.

    >>> percent_with_interval({"share": 0.6191, "interval": [0.58, 0.652]})
    '61.9 [58.0, 65.2]'
    """
    if entry is None:
        return "-"
    value = entry.get("share", entry.get("value"))
    text = f"{100 * value:.1f}"
    if entry.get("interval"):
        low, high = entry["interval"]
        text += f" [{100 * low:.1f}, {100 * high:.1f}]"
    return text


def chosen_table_rows(result: dict) -> list[list[str]]:
    """One row per relation: its chosen head, whose attention it reads (dependents or heads), the shares to
    special tokens and punctuation of those words and of the others, and others minus them, in percent with
    intervals."""
    rows = []
    for name, entry in result["noop"]["relations"].items():
        chosen = entry["chosen"]
        if chosen is None:
            rows.append([name] + ["-"] * (len(CHOSEN_HEADERS) - 1))
            continue
        attending, others = ATTENDING[chosen["direction"]]
        rows.append([name, chosen["name"], attending,
                     percent_with_interval(chosen[attending]["special"]),
                     percent_with_interval(chosen[others]["special"]),
                     percent_with_interval(chosen["difference"]["special"]),
                     percent_with_interval(chosen[attending]["punctuation"]),
                     percent_with_interval(chosen[others]["punctuation"]),
                     percent_with_interval(chosen["difference"]["punctuation"])])
    return rows


CHOSEN_HEADERS = ["relation", "chosen head", "attending words", "attending -> special %", "others -> special %",
                  "others - attending", "attending -> punct. %", "others -> punct. %", "others - attending"]


def layer_table_rows(result: dict, relation: str) -> list[list[str]]:
    """One row per layer (from 1): mean over heads of the share to special tokens of each group, with intervals."""
    layers = result["noop"]["relations"][relation]["layers"]
    rows = []
    for layer in range(result["model"]["num_layers"]):
        row = [str(layer + 1)]
        for group in GROUPS:
            values = layers[group]["special"]
            row.append("-" if values is None else percent_with_interval(values[layer]))
        rows.append(row)
    return rows


LAYER_HEADERS = ["layer", "dependents -> special %", "non-dependents -> special %", "heads -> special %",
                 "non-heads -> special %"]


def table_rows(results: list[dict]) -> dict:
    """The leaderboard table of no-op results: per model, a row for the words whose attention each relation's
    chosen head reads (its dependents, or its head words for a head->dep head) and one for the other words; a
    cell is that share of attention to special tokens, % [interval], and the head (from 1)."""
    relations: list[str] = []
    for result in results:
        relations += [name for name in result["noop"]["relations"] if name not in relations]
    rows = []
    for result in results:
        model = result["model"].get("name") or str(result["model"]["name_or_path"])
        for side in (0, 1):
            row = [model, ("attending", "others")[side], result["input"]["path"]]
            for name in relations:
                entry = result["noop"]["relations"].get(name)
                chosen = entry and entry["chosen"]
                if chosen is None:
                    row.append("not measured")
                    continue
                group = ATTENDING[chosen["direction"]][side]
                row.append(f"{percent_with_interval(chosen[group]['special'])} {head_name(chosen['layer'], chosen['head'])}"
                           + (" h>d" if chosen["direction"] == "head_to_dep" else ""))
            rows.append(row)
    level = results[0]["noop"]["level"] if results else LEVEL
    return {
        "title": "The no-op test: attention to special tokens from the words a head reads and from the others",
        "columns": ["model", "words", "input", *relations],
        "rows": rows,
        "notes": NOTES(level),
    }


def NOTES(level: float) -> list[str]:  # noqa: N802 (a table's fixed notes)
    return [
        "Cell: the share (%) of the chosen head's attention that goes to special tokens ([CLS], [SEP], <s>, </s>), "
        "averaged over the attending words or over the others, "
        f"[{100 * level:g}% bootstrap interval over sentences], and the head as layer-head counted from 1.",
        "Attending words: the relation's dependents for a dependent->head head; its head words for a "
        "head->dependent head (h>d), whose prediction reads the head word's attention.",
        "If attention to special tokens is a no-op (Clark et al. 2019), the 'others' row is much higher than "
        "the 'attending' row.",
    ]
