"""Tables of no-op results (probing.analyses.noop), torch-free: leaderboards and pages read result files only.

>>> percent_with_interval({"value": -0.25, "interval": [-0.3, -0.2]})
'-25.0 [-30.0, -20.0]'
"""

from __future__ import annotations

from ..naming import head_name
from ..scoring.intervals import LEVEL

TARGETS = ("special", "punctuation")
"""Where the measured share of a word's attention goes (axis ``target`` of every sum)."""
GROUPS = ("dependents", "others")
"""Whose attention: the dependents of the relation, and every other word of the same sentences."""


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
    """One row per relation: its chosen head, the shares to special tokens and punctuation of dependents and of
    other words, and others minus dependents, in percent with intervals."""
    rows = []
    for name, entry in result["noop"]["relations"].items():
        chosen = entry["chosen"]
        if chosen is None:
            rows.append([name, "-", "-", "-", "-", "-", "-", "-"])
            continue
        rows.append([name, chosen["name"],
                     percent_with_interval(chosen["dependents"]["special"]),
                     percent_with_interval(chosen["others"]["special"]),
                     percent_with_interval(chosen["difference"]["special"]),
                     percent_with_interval(chosen["dependents"]["punctuation"]),
                     percent_with_interval(chosen["others"]["punctuation"]),
                     percent_with_interval(chosen["difference"]["punctuation"])])
    return rows


CHOSEN_HEADERS = ["relation", "chosen head", "dependents -> special %", "others -> special %",
                  "others - dependents", "dependents -> punct. %", "others -> punct. %", "others - dependents"]


def layer_table_rows(result: dict, relation: str) -> list[list[str]]:
    """One row per layer (from 1): mean over heads of the special share of dependents and others, with intervals."""
    layers = result["noop"]["relations"][relation]["layers"]
    rows = []
    for layer in range(result["model"]["num_layers"]):
        row = [str(layer + 1)]
        for target in TARGETS:
            for group in GROUPS:
                values = layers[group][target]
                row.append("-" if values is None else percent_with_interval(values[layer]))
        rows.append(row)
    return rows


LAYER_HEADERS = ["layer", "dependents -> special %", "others -> special %", "dependents -> punct. %",
                 "others -> punct. %"]


def table_rows(results: list[dict]) -> dict:
    """The leaderboard table of no-op results: one row per model and group of words, one column per relation;
    a cell is the chosen head's share of attention to special tokens, % [interval], and the head (from 1)."""
    relations: list[str] = []
    for result in results:
        relations += [name for name in result["noop"]["relations"] if name not in relations]
    rows = []
    for result in results:
        model = result["model"].get("name") or str(result["model"]["name_or_path"])
        for group in GROUPS:
            row = [model, group, result["input"]["path"]]
            for name in relations:
                entry = result["noop"]["relations"].get(name)
                chosen = entry and entry["chosen"]
                row.append("not measured" if chosen is None else
                           f"{percent_with_interval(chosen[group]['special'])} {head_name(chosen['layer'], chosen['head'])}")
            rows.append(row)
    level = results[0]["noop"]["level"] if results else LEVEL
    return {
        "title": "The no-op test: attention to special tokens from dependents and from other words",
        "columns": ["model", "words", "input", *relations],
        "rows": rows,
        "notes": [
            "Cell: the share (%) of the chosen head's attention that goes to special tokens ([CLS], [SEP], <s>, </s>), "
            f"averaged over the relation's dependents or over the other words, [{100 * level:g}% bootstrap interval "
            "over sentences], and the head as layer-head counted from 1.",
            "If attention to special tokens is a no-op (Clark et al. 2019), the 'others' row is much higher than "
            "the 'dependents' row.",
        ],
    }
