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


def units_text(result: dict) -> str:
    """What a result measured on: BLiMP (and its limit) or the treebank's name."""
    from probing.report.board import treebank_label

    limit = result["config"].get("limit")
    if result["config"]["metric"] == "minimal-pairs":
        paradigms = len(result["config"]["metric_options"]["layout"])
        return f"BLiMP, {paradigms} paradigms" + (f" (first {limit} pairs each)" if limit else "")
    return treebank_label(result["input"]["path"]) + (f" (first {limit})" if limit else "")


def versus_cells(entry: dict, higher_is_better: bool):
    """The (chosen, random) cells of one versus entry: effects in percentage points for an accuracy, in nats
    for a loss; the chosen cell carries p (its text is set once the board's rows are all known, by
    :func:`holm_cells`), the random cell its draws (and short sets)."""
    from probing.analyses.ablation.versus import effect_scale
    from probing.report.board import Cell

    scale = effect_scale(higher_is_better)
    chosen = entry["chosen"]
    chosen_cell = Cell(accuracy=chosen["effect"], interval=chosen["interval"], scale=scale,
                       p_not_better=entry["p_value"], exact=bool(entry.get("exact")))
    random = entry["random"]
    if random is None:
        return chosen_cell, None
    short = f", {entry['short_sets']} short" if entry["short_sets"] else ""
    drawn = f"all {random['draws']} sets" if entry.get("exact") else f"{random['draws']} draws"
    return chosen_cell, Cell(accuracy=random["mean"], interval=random["percentiles"], scale=scale,
                             head=f"{drawn}{short}")


def holm_cells(cells: list) -> int:
    """Adjust the p-values of ``cells`` (every chosen cell of a board) together by Holm's rule and write each
    cell's text: ``p=0.0099 exact, Holm 0.04: significant``; the number of rows tested (m)."""
    from probing.naming import p_value_text
    from probing.stats.multiplicity import holm, significant

    adjusted = holm([cell.p_not_better for cell in cells])
    for cell, p_adjusted in zip(cells, adjusted):
        cell.p_adjusted = p_adjusted
        if p_adjusted is not None:
            cell.head = (f"p={p_value_text(cell.p_not_better)}{' exact' if cell.exact else ''}, "
                         f"Holm {p_value_text(p_adjusted)}{': significant' if significant(p_adjusted) else ''}")
    return sum(1 for p in adjusted if p is not None)


def leaderboard_tables(results: list[dict]) -> list:
    """The chosen-vs-random table of ``ablate --chosen`` results (registered as the analysis's ``tables``)."""
    from probing.analyses.ablation.versus import result_versus
    from probing.report.board import Row, Table, result_label

    columns: list[str] = []
    most_draws = 0  # the most random draws (or sets of an exact space) any chosen cell was tested against
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
                units = units_text(result)
                if units not in row.treebank.split("; "):
                    row.treebank = "; ".join(filter(None, [row.treebank, units]))
                for suffix in ("chosen", "random"):
                    if f"{column}: {suffix}" not in columns:
                        columns.append(f"{column}: {suffix}")
                chosen, random = versus_cells(entry, block["higher_is_better"])
                if entry["random"] is not None:
                    most_draws = max(most_draws, entry["random"]["draws"])
                row.cells[f"{column}: chosen"], row.cells[f"{column}: random"] = chosen, random
    ordered = sorted(rows.items(), key=lambda item: (item[0][0], item[0][1].rpartition("@")[0],
                                                     int(item[0][1].rpartition("@")[2])))
    columns = _ordered(columns)
    tested = holm_cells([row.cells[column] for _, row in ordered for column in columns
                         if column.endswith(": chosen") and row.cells.get(column) is not None])
    notes = NOTES + [holm_note(tested, most_draws)]
    measures = {column: None if column.endswith(": random") else _measure(column) for column in columns}
    return [Table(columns, [row for _, row in ordered], notes, title="Chosen vs matched random heads",
                  key="versus", mean=False, marks_best=False, effects=True, measures=measures)]


def holm_note(tested: int, most_draws: int) -> str:
    """The board's note on multiplicity: m, and the least adjusted p that its draws allow (a board whose draws are
    too few for m can call nothing significant, and says so with the draws it would take).

    >>> holm_note(2, 100).rsplit(". ", 1)[1]
    'After Holm over m = 2 tests, the least any can reach is 0.02: a row can be called significant.'
    """
    from probing.stats.multiplicity import LEVEL

    note = (f"Holm: this board makes m = {tested} tests, one per chosen cell with a p-value (a model, relation and "
            "k, and one part of a metric: the loss; the probe on the row's relation and on all; BLiMP overall and "
            "each phenomenon). Each p is adjusted for all of them by Holm's step-down rule, and a row is called "
            f"significant (at {LEVEL:g}) by its adjusted p only.")
    if not tested or not most_draws:
        return note
    from probing.analyses.ablation.versus import reach_note

    return f"{note} {reach_note(tested, most_draws)}"


def _measure(column: str) -> str:
    """The measure a chosen column's effects are in, for the board's minimum detectable effect."""
    name = column.rsplit(": ", 1)[0]
    return "loss" if name.endswith(" loss") else "BLiMP accuracy" if name.startswith("BLiMP") else "probe accuracy"


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
    "bootstrap interval] and p = (1 + count) / (1 + draws), count the random draws whose effect is at least as "
    "harmful, an equal one (within 1e-9: rounding) included (a set drawn twice counts twice; it is computed once). "
    "random: the random sets' mean effect [2.5th, "
    "97.5th percentile], the number of draws, and how many were short (a layer had too few heads left).",
    "exact: the layer-matched space of random sets (the product over the chosen set's layers of C(heads left there, "
    "heads taken)) held no more sets than the draws asked for, so every set of it was used once: p = (1 + count) / "
    "(1 + the space's size), and the random column says all N sets.",
    "p-values are written with two significant digits: the smallest a row can reach, 1 / (1 + draws), reads as "
    "itself (0.0099 for 100 draws), never as 0.",
    "Losses in nats (a rise hurts); accuracies in percentage points (a drop hurts). BLiMP overall: the mean of the "
    "accuracies of the paradigms scored (all 67 only when the run scored them all: the treebank column says how many); "
    "a phenomenon (BLiMP's linguistics_term): the share of its pairs right. probe: own "
    "relation: the best head's accuracy on the row's relation; all: on every pair.",
]
