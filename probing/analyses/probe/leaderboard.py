"""The probe's leaderboard table: one row per model, the best-offset baseline row of each treebank, one column
per relation, and rows quoted from a paper last (torch-free).

A cell holds the held-out accuracy (head chosen on dev, reported on test) with its 95% bootstrap interval
and the head as layer-head counted from 1. A result without a ``heldout`` object shows its in-sample
numbers, marked as such. Reference rows (figures quoted from a paper) come last, unranked. A model read
under another attention reading (``--attention norms``) is a row of its own beside its raw-weights row.

>>> reference = {"reference": {"model": "BERT", "short_citation": "C19", "citation": "Clark et al.",
...              "treebank": "wsj", "relations": {"det": {"accuracy": 0.9, "layer": 7, "head": 9}}}}
>>> [(row.model, row.cells["det"].head) for row in reference_rows(reference)]
[('BERT [C19]', '8-10')]
"""

from __future__ import annotations

from collections.abc import Iterable

from probing.analyses.probe.heldout_block import in_sample_reports
from probing.naming import head_name, offset_name
from probing.report.board import Cell, Row, Table, leaderboard_position, mean_over, rank_rows, result_label, treebank_label


def _head_cell(head: dict | None, difference: dict | None, pairs: int, ties: int = 1) -> Cell:
    if head is None:
        return Cell(accuracy=None, pairs=pairs)
    interval = difference and difference.get("interval")
    return Cell(
        accuracy=head["accuracy"],
        interval=head.get("interval"),
        head=head_name(head["layer"], head["head"]),
        direction=head["direction"],
        pairs=pairs,
        ties=ties,
        p_not_better=difference and difference.get("p_not_better"),
        clearly_better=None if not interval else interval[0] > 0,
    )


def _baseline_cell(baseline: dict | None, pairs: int, ties: int = 1) -> Cell:
    if baseline is None:
        return Cell(accuracy=None, pairs=pairs)
    return Cell(
        accuracy=baseline["accuracy"],
        interval=baseline.get("interval"),
        head=offset_name(baseline['offset']),
        pairs=pairs,
        ties=ties,
    )


def result_rows(result: dict) -> tuple[Row, Row]:
    """The model's row and its treebank's best-offset baseline row."""
    heldout = result.get("heldout")
    treebank = row_treebank(result)
    selection = "held-out" if heldout else "in-sample"
    model = Row(result_label(result), "model", selection, treebank)
    baseline = Row("best offset baseline", "baseline", selection, treebank)
    in_sample = {} if heldout else in_sample_reports(result)
    for name, entry in result["relations"].items():
        if heldout:
            chosen, dev = heldout["relations"][name]["heldout"], heldout["relations"][name]["dev"]
            pairs = heldout["relations"][name]["pairs"]
            model.cells[name] = _head_cell(
                chosen["head"], chosen["difference"], pairs, dev["head"]["ties"] if dev["head"] else 1
            )
            baseline.cells[name] = _baseline_cell(
                chosen["baseline"], pairs, dev["baseline"]["ties"] if dev["baseline"] else 1
            )
        else:
            report = in_sample[name]
            model.cells[name] = _head_cell(report["head"], report["difference"], entry["total"])
            baseline.cells[name] = _baseline_cell(report["baseline"], entry["total"])
    return model, baseline


CAUSAL_NOTE = ("(causal direction): a decoder's second row, each pair scored by its later word, right when it "
               "attends most, among earlier words, to the earlier one (later>earlier); every pair is within its "
               "reach, while each classic direction reaches only the pairs on one side. Encoders have no such row.")


def causal_row(result: dict) -> Row | None:
    """A decoder's second row: each relation's head in the causal direction (every pair scored by its later
    word, docs/scoring.md), held out when the result is; None for an encoder or a result scored before the
    causal direction existed."""
    relations = result["relations"]
    if not relations or not all("causal" in entry for entry in relations.values()):
        return None
    heldout = result.get("heldout")
    if heldout and not all("causal" in entry for entry in heldout["relations"].values()):
        return None
    row = Row(f"{result_label(result)} (causal direction)", "model", "held-out" if heldout else "in-sample",
              row_treebank(result))
    for name, entry in relations.items():
        if heldout:
            block = heldout["relations"][name]["causal"]
            chosen, ties, pairs = block["heldout"], (block["dev"] or {}).get("ties", 1), heldout["relations"][name]["pairs"]
        else:
            chosen, ties, pairs = entry["causal"]["best"], 1, entry["total"]
        row.cells[name] = _head_cell(chosen, None, pairs, ties)
    return row


def reference_rows(data: dict) -> list[Row]:
    """Rows quoted from a paper: the model's and, when given, its baseline's."""
    ref = data["reference"]
    label = f"{ref['model']} [{ref['short_citation']}]"
    model = Row(label, "reference", ref.get("selection", "in-sample"), ref["treebank"], rank="ref", note=ref.get("note", ""))
    baseline = Row(f"best offset baseline [{ref['short_citation']}]", "reference", model.selection, ref["treebank"], rank="ref")
    for name, entry in ref["relations"].items():
        model.cells[name] = Cell(
            accuracy=entry["accuracy"],
            head=head_name(entry["layer"], entry["head"]) if "layer" in entry else "",
            direction=entry.get("direction"),
        )
        if "baseline" in entry:
            baseline.cells[name] = Cell(accuracy=entry["baseline"]["accuracy"], head=offset_name(entry['baseline']['offset']))
    return [model, baseline] if baseline.cells else [model]


@leaderboard_position(0)
def leaderboard_tables(results: list[dict], references: Iterable[dict] = ()) -> list[Table]:
    """The probe's part of a leaderboard: its relation table (registered as the probe's ``tables``)."""
    return [relation_table(results, references)]


def relation_table(results: list[dict], references: Iterable[dict] = ()) -> Table:
    """Rows of every result (sorted within each treebank), one baseline row per treebank, references last."""
    references = list(references)
    relations: list[str] = []
    for data in results:
        relations += [name for name in data["relations"] if name not in relations]
    groups: dict[str, list[Row]] = {}
    baselines: dict[str, list[Row]] = {}
    extra_notes: list[str] = []
    for data in results:
        model, baseline = result_rows(data)
        groups.setdefault(model.treebank, []).append(model)
        causal = causal_row(data)
        if causal is not None:
            groups[model.treebank].append(causal)
            if CAUSAL_NOTE not in extra_notes:
                extra_notes.append(CAUSAL_NOTE)
        baselines.setdefault(model.treebank, []).append(baseline)
    level = _level(results)
    notes = _notes(results, references, level) + extra_notes
    rows: list[Row] = []
    for treebank, models in groups.items():
        baseline, differ = _one_baseline(baselines[treebank])
        if differ:
            notes.append(f"{treebank}: the results differ in pairs scored (skipped sentences); "
                         "each baseline cell is the first result's")
        rows += rank_rows(models + [baseline], relations)
    for data in references:
        for row in reference_rows(data):
            row.mean = mean_over(row, relations)
            rows.append(row)
    if any(cell is not None and cell.pairs == 0 for row in rows for cell in row.cells.values()):
        notes.append("none: the treebank has no pair of that relation (count 0); it is left out of the mean and "
                     "never ranked.")
    treebanks = sorted({row.treebank for row in rows if row.kind != "reference"})
    title = "Attention-head probe leaderboard" + (f": {', '.join(treebanks)}" if treebanks else "")
    return Table(relations, rows, notes, level=level, title=title, key="probe")


def _one_baseline(rows: list[Row]) -> tuple[Row, bool]:
    """One baseline row per treebank: each relation from the first result that has it.

    The offset is chosen on dev from counts that do not depend on the model, so
    the rows agree unless the models skipped different sentences (second value).
    """
    merged = Row(rows[0].model, rows[0].kind, rows[0].selection, rows[0].treebank)
    differ = False
    for row in rows:
        for name, cell in row.cells.items():
            if name not in merged.cells:
                merged.cells[name] = cell
            elif (cell and cell.pairs) != (merged.cells[name] and merged.cells[name].pairs):
                differ = True
    return merged, differ


def _level(results: list[dict]) -> float:
    levels = {data["heldout"]["level"] for data in results if data.get("heldout")}
    return levels.pop() if len(levels) == 1 else 0.95


def _notes(results: list[dict], references: list[dict], level: float) -> list[str]:
    replicates = sorted({(data.get("bootstrap") or {}).get("replicates", 0) for data in results} - {0})
    intervals = (
        f"[low, high]: {100 * level:g}% percentile bootstrap interval over sentences "
        f"({'/'.join(map(str, replicates))} Poisson replicates)."
        if replicates
        else "No intervals: the results were scored with --bootstrap 0."
    )
    notes = [
        "Layers and heads are counted from 1, as in the paper (8-10 = layer 8, head 10).",
        "Held-out: the layer, head, direction and offset are chosen on the dev split and scored on the "
        "test split; in-sample rows choose and score on the same sentences, as the paper does (optimistic).",
        intervals,
        "Cell: accuracy % [interval] head. h>d: the head word attends to the dependent (the paper's head<-dep); "
        "otherwise the dependent attends to its head. *: the 95% interval of head minus baseline reaches 0 "
        "(not clearly better than the best offset). (tie k): k heads tied on dev; the lowest layer, head wins.",
        "Rows are sorted by the mean over the relation columns; equal means share a rank (=); '-' ranks last "
        "(a relation is missing); 'not scored': the relation is not in that result; 'no pairs': none in the treebank.",
    ]
    for data in references:
        ref = data["reference"]
        notes.append(f"[{ref['short_citation']}] {ref['citation']}. {ref.get('note', '')}".strip())
    return notes


def row_key(result: dict) -> tuple[str, str]:
    """The (model, treebank) labels of a result's row: what ``links`` of the HTML leaderboard are keyed by."""
    return result_label(result), row_treebank(result)


def row_treebank(result: dict) -> str:
    """The treebank column of a result's row: ``en_ewt-ud-dev -> en_ewt-ud-test`` for a held-out result."""
    treebank = treebank_label(result["treebank"]["path"])
    heldout = result.get("heldout")
    if heldout:
        treebank = f"{treebank_label(heldout['select_on']['treebank']['path'])} -> {treebank}"
    return treebank
