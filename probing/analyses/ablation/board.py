"""The leaderboard table of ``ablate --chosen`` results: chosen heads against matched random heads (no torch).

One row per model and chosen set (REL@K), gathered from every result of that model (one per metric: lm,
probe, minimal-pairs, ...); two columns per metric part: the chosen set's effect [95%] with its p-value,
and the random sets' mean effect [2.5, 97.5]. Parts: a loss; BLiMP overall and each phenomenon present;
the probe on the row's own relation and on ``all``. Numbers come from each result's ``versus`` block, or
from its conditions and state when it has none (probing.analyses.ablation.versus.result_versus).

>>> column_of("minimal-pairs", "phenomenon:subject_verb_agreement", "nsubj"), column_of("probe", "det", "nsubj")
('BLiMP subject_verb_agreement', None)
"""

from __future__ import annotations

from probing.errors import ProbingError

PROBE_OWN, PROBE_ALL = "probe: own relation", "probe: all"


def column_of(metric: str, part: str, relation: str) -> str | None:
    """The table column of a metric part on a row of ``relation`` (None: not shown on that row)."""
    if metric in ("lm", "mlm"):
        return f"{metric} loss"
    if metric == "minimal-pairs":
        if part == "overall":
            return "BLiMP overall"
        kind, _, name = part.partition(":")
        return f"BLiMP {name}" if kind == "phenomenon" else None
    if metric == "probe":
        return PROBE_OWN if part == relation else PROBE_ALL if part == "all" else None
    return f"{metric} {part}"


def _units(result: dict) -> str:
    """What a result measured on: BLiMP (and its limit) or the treebank's name."""
    from probing.report.board import treebank_label

    limit = result["config"].get("limit")
    if result["config"]["metric"] == "minimal-pairs":
        paradigms = len(result["config"]["metric_options"]["layout"])
        return f"BLiMP, {paradigms} paradigms" + (f" (first {limit} pairs each)" if limit else "")
    return treebank_label(result["input"]["path"]) + (f" (first {limit})" if limit else "")


def versus_cells(entry: dict, higher_is_better: bool):
    """The (chosen, random) cells of one versus entry: effects in percentage points for an accuracy, in nats
    for a loss; the chosen cell carries p, the random cell its draws (and short sets)."""
    from probing.report.board import Cell

    scale = "points" if higher_is_better else "nats"
    chosen = entry["chosen"]
    p = entry["p_value"]
    chosen_cell = Cell(accuracy=chosen["effect"], interval=chosen["interval"], scale=scale, p_not_better=p,
                       head="" if p is None else f"p={p:.3f}")
    random = entry["random"]
    if random is None:
        return chosen_cell, None
    short = f", {entry['short_sets']} short" if entry["short_sets"] else ""
    return chosen_cell, Cell(accuracy=random["mean"], interval=random["percentiles"], scale=scale,
                             head=f"{random['draws']} draws{short}")


def leaderboard_tables(results: list[dict]) -> list:
    """The chosen-vs-random table of ``ablate --chosen`` results (registered as the analysis's ``tables``)."""
    from probing.analyses.ablation.versus import result_versus
    from probing.report.board import Row, Table, result_label

    columns: list[str] = []
    rows: dict[tuple[str, str], Row] = {}
    filled: set[tuple[str, str, str]] = set()
    for result in results:
        if not any(c["label"].endswith(":chosen") for c in result["conditions"]):
            raise ProbingError(f"an ablation result of {result_label(result)} is not a --chosen run: the "
                               "leaderboard shows chosen heads against matched random ones", source="RESULT")
        block, metric = result_versus(result), result["config"]["metric"]
        for part, sets in block["parts"].items():
            for key, entry in sets.items():
                relation, _, k = key.rpartition("@")
                column = column_of(metric, part, relation)
                if column is None:
                    continue
                model = result_label(result)
                if (model, key, column) in filled:
                    raise ProbingError(f"two results give {model}'s {key} on {column}; give one", source="RESULT")
                filled.add((model, key, column))
                row = rows.setdefault((model, key), Row(f"{model}, {relation} top {k}", "model", "chosen on DEV", ""))
                units = _units(result)
                if units not in row.treebank.split("; "):
                    row.treebank = "; ".join(filter(None, [row.treebank, units]))
                for suffix in ("chosen", "random"):
                    if f"{column}: {suffix}" not in columns:
                        columns.append(f"{column}: {suffix}")
                chosen, random = versus_cells(entry, block["higher_is_better"])
                row.cells[f"{column}: chosen"], row.cells[f"{column}: random"] = chosen, random
    ordered = sorted(rows.items(), key=lambda item: (item[0][0], item[0][1].rpartition("@")[0],
                                                     int(item[0][1].rpartition("@")[2])))
    return [Table(_ordered(columns), [row for _, row in ordered], NOTES, title="Chosen vs matched random heads",
                  key="versus", mean=False, marks_best=False, effects=True)]


def _ordered(columns: list[str]) -> list[str]:
    """Losses first, then BLiMP overall and its phenomena, then the probe, each as chosen then random."""
    def rank(column: str):
        name = column.rsplit(": ", 1)[0]
        group = (0 if name.endswith(" loss") else 1 if name == "BLiMP overall" else 2 if name.startswith("BLiMP ")
                 else 3 if name == PROBE_OWN else 4 if name == PROBE_ALL else 5)
        return group, name if group in (2, 5) else "", column.endswith(": random")

    return sorted(columns, key=rank)


NOTES = [
    "Each row disables a relation's top k heads on DEV (each in its better direction; a decoder's later-to-earlier "
    "one competes too) and, as controls, matched random sets: as many heads in each layer as the chosen set, drawn "
    "from that layer's other heads, seeded by (seed, draw index).",
    "effect = metric(disabled) - metric(intact) on the same units. chosen: the chosen set's effect [its 95% paired "
    "bootstrap interval] and p = (1 + count) / (1 + draws), count the random sets whose effect is at least as "
    "harmful. random: the random sets' mean effect [2.5th, 97.5th percentile], the number of draws, and how many "
    "were short (a layer had too few heads left).",
    "Losses in nats (a rise hurts); accuracies in percentage points (a drop hurts). BLiMP overall: the mean of the "
    "accuracies of the paradigms scored (all 67 only when the run scored them all: the treebank column says how many); "
    "a phenomenon (BLiMP's linguistics_term): the share of its pairs right. probe: own "
    "relation: the best head's accuracy on the row's relation; all: on every pair.",
]
