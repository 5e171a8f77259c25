"""Tables of no-op results (probing.analyses.noop.accumulator), torch-free: leaderboards and pages read result files only.

The leaderboard's table (:func:`leaderboard_tables`, registered as the analysis's ``tables``), the explore page's
section (:func:`page_section`) and the chosen heads the test is made for (:func:`chosen_heads`, which the
page outlines too) are all made here from result dicts.

>>> share_text({"value": -0.25, "interval": [-0.3, -0.2]})
'-25.0 [-30.0, -20.0]'
"""

from __future__ import annotations

from probing.naming import head_name, percent_with_interval
from probing.report.board import Cell, Row, Table, leaderboard_position, result_label, treebank_label
from probing.report.escaping import html_text
from probing.report.renderers.html_page import plain_table

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


def share_text(entry: dict | None) -> str:
    """``61.9 [58.0, 65.2]`` from ``{"share": .., "interval": ..}`` or ``{"value": .., ...}``.

    >>> share_text({"share": 0.6191, "interval": [0.58, 0.652]})
    '61.9 [58.0, 65.2]'
    """
    if entry is None:
        return "-"
    return percent_with_interval(entry.get("share", entry.get("value")), entry.get("interval"))


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
                     share_text(chosen[attending]["special"]),
                     share_text(chosen[others]["special"]),
                     share_text(chosen["difference"]["special"]),
                     share_text(chosen[attending]["punctuation"]),
                     share_text(chosen[others]["punctuation"]),
                     share_text(chosen["difference"]["punctuation"])])
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
            row.append("-" if values is None else share_text(values[layer]))
        rows.append(row)
    return rows


LAYER_HEADERS = ["layer", "dependents -> special %", "non-dependents -> special %", "heads -> special %",
                 "non-heads -> special %"]


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


@leaderboard_position(30)
def leaderboard_tables(results: list[dict]) -> list[Table]:
    """The no-op test's part of a leaderboard (registered as the analysis's ``tables``)."""
    return [leaderboard_table(results)]


def leaderboard_table(results: list[dict]) -> Table:
    """The no-op test's table: per model, a row for the words each relation's chosen head reads (its dependents,
    or its head words for a head->dep head) and one for the other words; a cell is that share of attention to
    special tokens with its interval, and the head (from 1)."""
    relations: list[str] = []
    for data in results:
        relations += [name for name in data["noop"]["relations"] if name not in relations]
    rows = []
    for data in results:
        treebank = treebank_label(data["input"]["path"])
        for side, label in enumerate(("attending words", "other words")):
            row = Row(f"{result_label(data)}: {label}", "model", "in-sample", treebank)
            for name in relations:
                entry = data["noop"]["relations"].get(name)
                chosen = entry and entry["chosen"]
                if entry is None or chosen is None:
                    row.cells[name] = None if entry is None else Cell(accuracy=None)
                    continue
                share = chosen[ATTENDING[chosen["direction"]][side]]["special"]
                row.cells[name] = Cell(accuracy=share["share"], interval=share["interval"],
                                       head=head_name(chosen['layer'], chosen['head']), direction=chosen["direction"])
                if chosen["selection"] == "chosen on dev":
                    row.selection = "held-out"
            rows.append(row)
    level = results[0]["noop"]["level"]
    return Table(relations, rows, NOTES(level), level=level, key="noop", mean=False, marks_best=False,
                 title="The no-op test: attention to special tokens from the words a head reads and from the others")


def page_section(result: dict) -> str:
    """The explore page's section of a no-op result: what the test asks, each relation's chosen head, and per
    relation every layer's mean (HTML)."""
    block = result["noop"]
    level = f"{100 * block['level']:g}%"
    intervals = (f"[{level} percentile bootstrap interval over sentences, {block['replicates']} Poisson replicates]"
                 if block["replicates"] else "(no intervals: --bootstrap 0)")
    layers = "".join(
        f"<details><summary>{html_text(name)}: every layer, mean over heads</summary>"
        + plain_table(LAYER_HEADERS, layer_table_rows(result, name)) + "</details>"
        for name in block["relations"])
    return (
        '<section id="noop" aria-labelledby="noop-title"><h2 id="noop-title">The no-op test</h2>'
        "<p>Clark et al. (2019) read attention to [SEP] as a no-op: a head that tracks a relation sends its "
        "dependents to their heads (or, head→dependent, the head words to their dependents) and parks every "
        "other word's attention on special tokens. If so, the <em>others</em> columns are much higher than the "
        "<em>attending</em> columns. Shares in % of a word's "
        f"attention, averaged over words, {html_text(intervals)}; {block['sentences']} sentences, "
        f"{block['words']} words.</p>"
        + plain_table(CHOSEN_HEADERS, chosen_table_rows(result), caption="Each relation's chosen head",
                      css="plain noop")
        + layers + "</section>")
