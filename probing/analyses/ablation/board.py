"""The leaderboard table of ``ablate --chosen`` results: chosen heads against matched random heads (no torch).

One row per model and chosen set (REL@K), gathered from every result of that model (one per metric: lm,
probe, minimal-pairs, ...). Per metric part: the chosen set's effect with its 95% bootstrap interval ``[a, b]``
and p, and the random sets' mean effect with the spread of their draws (``draws 2.5-97.5%: a to b``), how they
were matched and how many sets that matching allows; per primary part (the row's question: the loss, BLiMP
overall, the probe on the row's own relation) also the threshold, the effect the chosen set must exceed to pass
Holm on this board. Which cells are tested is the board's declared family (probing.analyses.ablation.family):
primary cells only, those that cannot reach significance left out by Tarone's rule and listed, Holm over the rest.
Numbers come from each result's ``versus`` block, or from its conditions and state when it has none
(probing.analyses.ablation.versus.result_versus).

>>> column_of("minimal-pairs", "phenomenon:subject_verb_agreement", "nsubj"), column_of("probe", "det", "nsubj")
('BLiMP subject_verb_agreement', None)
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.errors import ProbingError

PROBE_OWN, PROBE_ALL = "probe: own relation", "probe: all"
KINDS = ("chosen", "random", "threshold")
"""The columns of a metric part, in order: the chosen set's, the random sets', and (primary parts only) the
threshold."""


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


def context_of(result: dict) -> str | None:
    """The token a minimal-pairs result scored every sentence after, as the tokenizer writes it: what its
    ``metric`` block records (``ablate`` writes it), else a token its recorded ``--context`` option names; None
    when the file does not say (a bare ``bos`` or ``eos`` names no token by itself).

    >>> context_of({"metric": {"context_token": "<bos>"}, "config": {}})
    '<bos>'
    >>> context_of({"metric": {}, "config": {"options": {"context": "<|endoftext|>"}}}), context_of({"config": {}})
    ('<|endoftext|>', None)
    """
    recorded = (result.get("metric") or {}).get("context_token")
    if recorded:
        return recorded
    option = (result["config"].get("options") or {}).get("context") or result["config"].get("context")
    return option if option and option not in ("bos", "eos", "none") else None


def units_text(result: dict) -> str:
    """What a result measured on: its pair set (its limit, and the token every sentence was scored after) or the
    treebank's name."""
    from probing.report.board import treebank_label

    limit = result["config"].get("limit")
    if result["config"]["metric"] == "minimal-pairs":
        paradigms = len(result["config"]["metric_options"]["layout"])
        token = context_of(result)
        after = f"each sentence after {token}" if token else "the token before each sentence not recorded"
        from probing.analyses.pairs.report import pairs_source

        return (f"{pairs_source(result)}, {paradigms} paradigms" + (f" (first {limit} pairs each)" if limit else "")
                + f", {after}")
    return treebank_label(result["input"]["path"]) + (f" (first {limit})" if limit else "")


@dataclass
class Found:
    """One chosen cell of the board and where it comes from."""

    row: object  # probing.report.board.Row
    column: str
    result: dict
    part: str
    key: str
    entry: dict
    match: str
    primary: bool
    higher_is_better: bool

    @property
    def draws(self) -> int | None:
        return None if self.entry["random"] is None else self.entry["random"]["draws"]


def chosen_cell(entry: dict, scale: str):
    """The chosen set's cell: its effect, its 95% paired bootstrap interval and standard error; its text (p and
    what became of it) is set once the board's family is known (:func:`leaderboard_tables`)."""
    from probing.report.board import Cell

    chosen = entry["chosen"]
    return Cell(accuracy=chosen["effect"], interval=chosen["interval"], scale=scale, p_not_better=entry["p_value"],
                exact=bool(entry.get("exact")), se=chosen.get("se"))


def random_cell(entry: dict, scale: str, match: str):
    """The random sets' cell: their mean effect, the spread of their draws (2.5th and 97.5th percentiles, no
    interval of anything), how many there were, how they were matched and the space that matching allows; None
    without draws.

    >>> entry = {"random": {"mean": 0.1, "percentiles": [0.0, 0.3], "draws": 100}, "space": 4096, "short_sets": 0}
    >>> from probing.report.board import cell_text
    >>> cell_text(random_cell(entry, "nats", "layer"))
    '+0.100 draws 2.5-97.5%: +0.000 to +0.300 100 draws, layer-matched (space 4,096)'
    """
    from probing.report.board import Cell

    random = entry["random"]
    if random is None:
        return None
    space = entry.get("space")
    if entry.get("exact"):
        drawn = f"all {random['draws']:,} sets of the {match}-matched space"
    else:
        drawn = f"{random['draws']:,} draws, {match}-matched" + (f" (space {space:,})" if space is not None else "")
    short = f", {entry['short_sets']} short" if entry["short_sets"] else ""
    return Cell(accuracy=random["mean"], interval=random["percentiles"], scale=scale, spread=True,
                head=f"{drawn}{short}")


def threshold_cell(found: Found, status: str, m: int, scale: str, effects: dict):
    """A primary cell's threshold: the effect its chosen set must exceed for its adjusted p to reach 0.05 on this
    board (probing.analyses.ablation.versus.threshold_effect, from its own random effects: ``effects``, the
    result's :func:`~probing.analyses.ablation.versus.versus_effects`); ``unreachable`` for a cell the family left
    out or whose draws cannot reach it; None (a dash) without a test."""
    from probing.analyses.ablation.family import TESTED, UNTESTABLE
    from probing.analyses.ablation.versus import threshold_effect
    from probing.report.board import Cell

    if status == UNTESTABLE:
        return Cell(None, text="unreachable")
    if status != TESTED:
        return None
    value = threshold_effect(effects[found.part][found.key]["random"], found.higher_is_better, m)
    return Cell(None, text="unreachable") if value is None else Cell(value, scale=scale)


def leaderboard_tables(results: list[dict]) -> list:
    """The chosen-vs-random table of ``ablate --chosen`` results (registered as the analysis's ``tables``)."""
    from probing.analyses.ablation.family import TESTED, FamilyCell, declare, family_note, is_primary, p_text
    from probing.analyses.ablation.versus import effect_scale, result_versus, versus_effects
    from probing.report.board import Row, Table, result_label

    found: list[Found] = []
    rows: dict[tuple[str, str], Row] = {}
    for result in results:
        if not any(c["label"].endswith(":chosen") for c in result["conditions"]):
            raise ProbingError(f"an ablation result of {result_label(result)} is not a --chosen run: the "
                               "leaderboard shows chosen heads against matched random ones", source="RESULT")
        block, metric = result_versus(result), result["config"]["metric"]
        scale = effect_scale(block["higher_is_better"])
        match = block.get("match", "layer")
        for part, sets in block["parts"].items():
            for key, entry in sets.items():
                relation, _, k = key.rpartition("@")
                column = column_of(metric, part, relation)
                if column is None:
                    continue
                model = result_label(result)
                if any(f.row.model == f"{model}, {relation} top {k}" and f.column == column for f in found):
                    raise ProbingError(f"two results give {model}'s {key} on {column}; give one", source="RESULT")
                row = rows.setdefault((model, key), Row(f"{model}, {relation} top {k}", "model", "chosen on DEV", ""))
                units = units_text(result)
                if units not in row.treebank.split("; "):
                    row.treebank = "; ".join(filter(None, [row.treebank, units]))
                row.cells[f"{column}: chosen"] = chosen_cell(entry, scale)
                row.cells[f"{column}: random"] = random_cell(entry, scale, match)
                found.append(Found(row, column, result, part, key, entry, match,
                                   is_primary(block["metric"], part, relation), block["higher_is_better"]))
    family = declare([FamilyCell(f"{f.row.model}: {f.column}", f.entry["p_value"], f.draws, f.primary)
                      for f in found])
    effects: dict[int, dict] = {}  # every set's effect, per result, computed once for the thresholds it gives
    for f, cell in zip(found, family.cells):
        chosen = f.row.cells[f"{f.column}: chosen"]
        chosen.p_adjusted = cell.adjusted
        if cell.p is not None:
            chosen.head = p_text(cell, exact=chosen.exact)
        if f.primary:
            if cell.status == TESTED and id(f.result) not in effects:
                effects[id(f.result)] = versus_effects(f.result)
            f.row.cells[f"{f.column}: threshold"] = threshold_cell(f, cell.status, family.m, chosen.scale,
                                                                   effects.get(id(f.result), {}))
    ordered = sorted(rows.items(), key=lambda item: (item[0][0], item[0][1].rpartition("@")[0],
                                                     int(item[0][1].rpartition("@")[2])))
    columns = _ordered({f"{f.column}: {kind}" for f in found for kind in KINDS if kind != "threshold" or f.primary})
    notes = NOTES + [family_note(family), THRESHOLD_NOTE, *untestable_notes(found, family), *sizing_notes(found, family)]
    measures = {column: column.rsplit(": ", 1)[0] if column.endswith(": chosen") else None for column in columns}
    return [Table(columns, [row for _, row in ordered], notes, title="Chosen vs matched random heads",
                  key="versus", mean=False, marks_best=False, effects=True, measures=measures)]


def _row_names(found: list[Found]) -> str:
    """``model, det top 4 (lm loss, BLiMP overall); ...``: the cells of ``found`` grouped by row, in board order."""
    by_row: dict[str, list[str]] = {}
    for f in found:
        by_row.setdefault(f.row.model, []).append(f.column)
    return "; ".join(f"{row} ({', '.join(_in_order(columns))})" for row, columns in sorted(by_row.items()))


def _in_order(names: list[str]) -> list[str]:
    """Metric parts' column names in the board's order (:func:`_ordered`)."""
    return [column.rsplit(": ", 1)[0] for column in _ordered(f"{name}: chosen" for name in names)]


def untestable_notes(found: list[Found], family) -> list[str]:
    """The primary cells Tarone's rule left out, by row, each with its least reachable p: a row the board cannot
    answer says so, and why."""
    from probing.analyses.ablation.family import UNTESTABLE
    from probing.naming import p_value_text

    left = [(f, cell) for f, cell in zip(found, family.cells) if cell.status == UNTESTABLE]
    if not left:
        return []
    by_floor: dict[float, list[Found]] = {}
    for f, cell in left:
        by_floor.setdefault(cell.floor, []).append(f)
    groups = "; ".join(f"least p {p_value_text(floor)} ({'exact, ' if all(f.entry.get('exact') for f in cells) else ''}"
                       f"{cells[0].draws:,} {'sets' if cells[0].entry.get('exact') else 'draws'}): {_row_names(cells)}"
                       for floor, cells in sorted(by_floor.items()))
    return [f"Untestable at this size: {len(left)} primary cells whose least p is above {family.level:g} / m' = "
            f"{p_value_text(family.level / family.m_prime)}, so no data could make them significant here; their "
            f"raw p is shown and their threshold is unreachable. {groups}."]


def sizing_notes(found: list[Found], family) -> list[str]:
    """What draws would make every primary cell that can be tested reach 0.05 after Holm (probing.analyses.ablation
    .family.sizing): the draws a row needs, the matching that gives them (the layer-matched space, else the chosen
    heads' layer bands), the rows no draw can make testable, and what the missing draws cost at the pace each row's
    results ran (their recorded seconds over their sets)."""
    from probing.analyses.ablation.family import BAND, ENOUGH, LAYER, NEVER, TESTED, UNTESTABLE, Spaces, sizing
    from probing.analyses.ablation.versus import space_size
    from probing.results.schema.validation import heads_per_layer

    primary = [(f, cell) for f, cell in zip(found, family.cells) if cell.status in (TESTED, UNTESTABLE)]
    if not primary:
        return []
    spaces = []
    for f, _ in primary:
        heads, num_heads = f.entry["chosen"]["heads"], heads_per_layer(f.result)
        spaces.append(Spaces(f"{f.row.model}: {f.column}", f.draws, space_size(heads, num_heads),
                             space_size(heads, num_heads, "band", f.result["model"]["num_layers"])))
    plan = sizing(spaces, family.level)
    of = {id(space): f for space, (f, _) in zip(spaces, primary)}
    notes = [f"Draws the family needs: {plan.m} primary cells can be made testable, and each then needs 1 + draws >= "
             f"20 x {plan.m}, {plan.draws:,} draws (every one can then reach 0.05 after Holm over m = {plan.m})."]
    enough = plan.having(ENOUGH)
    if enough:
        notes[0] += f" Have them: {_row_names([of[id(cell)] for cell in enough])}."
    for plan_kind, why in ((LAYER, "layer-matched, from a layer-matched space that holds enough sets"),
                           (BAND, "band-matched (ablate --match band): the layer-matched space holds fewer sets")):
        short = plan.having(plan_kind)
        if not short:
            continue
        rows = "; ".join(f"{row} ({', '.join(columns)}; space {layer:,} layer-matched, {band:,} band-matched)"
                         for row, columns, layer, band in _by_row(short, of))
        notes.append(f"Need {plan.draws:,} draws, {why}: {rows}. {_cost(short, of, plan.draws)}")
    never = plan.having(NEVER)
    if never:
        bands = max(cell.band_space for cell in never)
        notes.append(f"No draw of sets can make these testable (a band holds at most {bands:,} sets for them, fewer "
                     f"than the {plan.draws:,} draws a row needs): {_row_names([of[id(cell)] for cell in never])}. "
                     "A single head's question is answered by the importance map instead: every head disabled alone, "
                     "and the chosen head's rank among every head of its band and of the model.")
    return notes


def _by_row(cells, of) -> list[tuple[str, list[str], int, int]]:
    """(row, its columns, layer space, band space) of sizing's ``cells`` (``of``: each one's Found)."""
    rows: dict[str, tuple[list[str], int, int]] = {}
    for cell in cells:
        f = of[id(cell)]
        rows.setdefault(f.row.model, ([], cell.layer_space, cell.band_space))[0].append(f.column)
    return [(row, _in_order(columns), layer, band) for row, (columns, layer, band) in sorted(rows.items())]


def _cost(cells, of, draws: int) -> str:
    """What sets of ``draws`` draws would cost these cells' results at the pace they ran: per model and device,
    the seconds their results recorded over the sets they computed, times the sets the new draws make (the intact
    model, the chosen set and the draws)."""
    paces: dict[tuple[str, str], float] = {}
    for result in {id(of[id(cell)].result): of[id(cell)].result for cell in cells}.values():
        seconds = (result.get("timing") or {}).get("seconds_total")
        if not seconds:
            continue
        name = result["model"].get("name") or str(result["model"]["name_or_path"])
        key = (name, result["model"].get("device") or "cpu")
        paces[key] = paces.get(key, 0.0) + seconds / len(result["conditions"]) * (draws + 2)
    if not paces:
        return ""
    spent = "; ".join(f"{name} {hours:,.1f} h on {device}" for (name, device), hours in
                      sorted((key, seconds / 3600) for key, seconds in paces.items()))
    return f"At the pace their results ran (recorded seconds over the sets they computed), that is about {spent}."


def _ordered(columns) -> list[str]:
    """Losses first, then BLiMP overall and its phenomena, then the probe, each as chosen, random, threshold."""
    def rank(column: str):
        name, kind = column.rsplit(": ", 1)
        group = (0 if name.endswith(" loss") else 1 if name == "BLiMP overall" else 2 if name.startswith("BLiMP ")
                 else 3 if name == PROBE_OWN else 4 if name == PROBE_ALL else 5)
        return group, name if group in (2, 5) else "", KINDS.index(kind)

    return sorted(columns, key=rank)


THRESHOLD_NOTE = (
    "threshold: the effect the chosen set must exceed for its adjusted p to reach 0.05 on this board, read from its "
    "own random effects: the one at rank ceil((1 + draws) x 0.05 / m) from the harmful end (where that product is not "
    "whole, an effect just beyond it still leaves p x m slightly above 0.05: the rank below is the strict bound; "
    "Holm multiplies only the smallest p by m, so this is what the cell needs at best); unreachable where the cell "
    "is untestable or m / (1 + draws) is above 0.05.")

NOTES = [
    "Each row disables a relation's top k heads on DEV (each in its better direction; a decoder's later-to-earlier one "
    "competes too) and, as controls, matched random sets, seeded by (seed, draw index): layer-matched, as many heads "
    "in each layer as the chosen set, from that layer's other heads; band-matched, k heads from layers L-1 to L+1 of "
    "the chosen heads, the chosen heads excluded (for a chosen set whose layer-matched space is too small).",
    "effect = metric(disabled) - metric(intact) on the same units. chosen: the chosen set's effect with [a, b], its "
    "95% paired bootstrap interval, and p = (1 + count) / (1 + draws), count the random draws whose effect is at "
    "least as harmful, an equal one (within 1e-9: rounding) included (a set drawn twice counts twice; it is computed "
    "once). random: the random sets' mean effect and the spread of their effects, draws 2.5-97.5%: a to b (the 2.5th "
    "and 97.5th percentiles of the draws: no interval of any estimate), the number of draws, their matching and the "
    "space it allows, and how many were short (a layer or band had too few heads left).",
    "exact: the space of random sets (layer-matched, the product over the chosen set's layers of C(heads left there, "
    "heads taken); band-matched, C(heads of the bands, k)) held no more sets than the draws asked for, so every set "
    "of it was used once: p = (1 + count) / (1 + the space's size), and the random column says all N sets.",
    "p-values are written with two significant digits: the smallest a row can reach, 1 / (1 + draws), reads as "
    "itself (0.0099 for 100 draws), never as 0.",
    "Losses in nats (a rise hurts); accuracies in percentage points (a drop hurts). BLiMP overall: the mean of the "
    "accuracies of the paradigms scored (all 67 only when the run scored them all: the treebank column says how many, "
    "and the token every sentence was scored after); a phenomenon (BLiMP's linguistics_term): the share of its pairs "
    "right. probe: own relation: the best head's accuracy on the row's relation; all: on every pair.",
]
