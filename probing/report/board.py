"""Leaderboards: result files -> tables of accuracies per model, in five formats.

A leaderboard is a list of tables, one per kind of result given: the probe's
relation table (one row per model plus the best-offset baseline row of each
treebank, one column per relation), and the tables that other analyses
register in :data:`TABLES` (whole trees, coreference, ...). A cell holds the
held-out accuracy (head chosen on dev, reported on test) with its 95%
bootstrap interval and the head as layer-head counted from 1. A result
without a ``heldout`` object shows its in-sample numbers, marked as such.
Reference rows (figures quoted from a paper) come last, unranked. A model
read under another attention reading (``--attention norms``) is a row of its
own beside its raw-weights row.

Never imports torch: it reads result JSON (numpy only for in-sample intervals).

>>> cell = Cell(accuracy=0.868, interval=[0.851, 0.884], head="8-10", direction="dep_to_head")
>>> cell_text(cell)
'86.8 [85.1, 88.4] 8-10'
"""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from probing.errors import ProbingError
from probing.naming import head_name, offset_name
from probing.registry import Registry
from probing.stats.heldout import in_sample_reports

COUNTING = "layers and heads counted from 1 (8-10 = layer 8, head 10)"


@dataclass
class Cell:
    """One relation of one row. ``head`` is ``"8-10"`` (from 1) or an offset such as ``"+1"``."""

    accuracy: float | None
    interval: list[float] | None = None
    head: str = ""
    direction: str | None = None
    pairs: int | None = None
    ties: int = 1
    p_not_better: float | None = None
    clearly_better: bool | None = None  # the difference's interval lies above 0


@dataclass
class Row:
    model: str
    kind: str  # "model", "baseline" or "reference"
    selection: str  # "held-out", "in-sample"
    treebank: str
    cells: dict[str, Cell | None] = field(default_factory=dict)
    rank: str = ""
    mean: float | None = None
    note: str = ""


@dataclass
class Table:
    """One table of a leaderboard: rows of cells under ``columns`` (relations, or what an analysis measures)."""

    relations: list[str]
    rows: list[Row]
    notes: list[str]
    level: float = 0.95
    title: str = "Attention-head probe leaderboard"
    key: str = "probe"
    mean: bool = True
    """Whether rows are ranked by (and show) the mean over the columns."""
    marks_best: bool = True
    """Whether the HTML marks each column's highest value as the best (not for shares that are not scores)."""


@dataclass
class Leaderboard:
    """The tables made from a set of result files, in :data:`TABLES` order."""

    tables: list[Table]

    @property
    def relations(self) -> list[str]:
        return self.tables[0].relations

    @property
    def rows(self) -> list[Row]:
        return self.tables[0].rows

    @property
    def notes(self) -> list[str]:
        return self.tables[0].notes

    @property
    def level(self) -> float:
        return self.tables[0].level


# ---------------------------------------------------------------- reading


def read_json(path: str | Path) -> dict:
    """A result file (validated) or a reference file of quoted figures."""
    from probing.results.io import read_result

    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        data = None
    if isinstance(data, dict) and "reference" in data:
        return data
    return read_result(path)


def model_label(model: dict, reading: str = "weights") -> str:
    """The model's name (its folder's name or hub id, as every table and plot calls it); random-init runs
    and readings other than the raw weights say so: ``all-MiniLM-L6-v2 (random init, norms)``."""
    name = model.get("name") or Path(str(model["name_or_path"])).name
    marks = (["random init"] if model.get("random_init") else []) + ([reading] if reading != "weights" else [])
    return f"{name} ({', '.join(marks)})" if marks else name


def result_label(result: dict) -> str:
    """:func:`model_label` of a result file (its model and its reading)."""
    return model_label(result["model"], result["config"].get("attention", "weights"))


def treebank_label(path: str) -> str:
    """``en_ewt-ud-test`` for ``.../en_ewt-ud-test.conllu``."""
    return Path(path).stem


# ---------------------------------------------------------------- rows


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
    treebank = _row_treebank(result)
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


def build_leaderboard(results: Iterable[dict], references: Iterable[dict] = ()) -> Leaderboard:
    """Every table the results make: the probe's relation table first, then each registered analysis's."""
    results, references = list(results), list(references)
    if not results and not references:
        raise ProbingError("no result files given")
    tables = []
    for analysis, build in TABLES.items():
        mine = [result for result in results if result["analysis"] == analysis]
        if mine or (analysis == "probe" and references):
            tables.append(build(mine, references) if analysis == "probe" else build(mine))
    unknown = sorted({result["analysis"] for result in results} - set(TABLES.names()))
    if unknown:
        raise ProbingError(f"no leaderboard table is made from {', '.join(unknown)} results; give results of "
                           f"{', '.join(TABLES.names())}", source="RESULT")
    return Leaderboard(tables)


def relation_table(results: list[dict], references: Iterable[dict] = ()) -> Table:
    """Rows of every result (sorted within each treebank), one baseline row per treebank, references last."""
    references = list(references)
    relations: list[str] = []
    for data in results:
        relations += [name for name in data["relations"] if name not in relations]
    groups: dict[str, list[Row]] = {}
    baselines: dict[str, list[Row]] = {}
    for data in results:
        model, baseline = result_rows(data)
        groups.setdefault(model.treebank, []).append(model)
        baselines.setdefault(model.treebank, []).append(baseline)
    level = _level(results)
    notes = _notes(results, references, level)
    rows: list[Row] = []
    for treebank, models in groups.items():
        baseline, differ = _one_baseline(baselines[treebank])
        if differ:
            notes.append(f"{treebank}: the results differ in pairs scored (skipped sentences); "
                         "each baseline cell is the first result's")
        rows += _ranked(models + [baseline], relations)
    for data in references:
        for row in reference_rows(data):
            row.mean = _mean(row, relations)
            rows.append(row)
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


def _mean(row: Row, relations: list[str]) -> float | None:
    """Mean accuracy over every relation column; None when a relation is missing or has no pairs."""
    values = [row.cells.get(name) and row.cells[name].accuracy for name in relations]
    return None if any(v is None for v in values) else sum(values) / len(values)


def rank_rows(rows: list[Row], columns: list[str]) -> list[Row]:
    """Rows sorted and ranked by their mean over ``columns`` (the one ranking rule of every table)."""
    return _ranked(rows, columns)


def _ranked(rows: list[Row], relations: list[str]) -> list[Row]:
    """Sorted by mean accuracy (rows lacking a relation last); equal shown means share a rank (=2)."""
    for row in rows:
        row.mean = _mean(row, relations)
    rows.sort(key=lambda row: (row.mean is None, -(row.mean or 0.0), row.kind != "model", row.model))
    shown = [None if row.mean is None else round(100 * row.mean, 1) for row in rows]
    for position, row in enumerate(rows):
        if row.mean is None:
            row.rank = "-"
            continue
        first = shown.index(shown[position]) + 1
        row.rank = f"={first}" if shown.count(shown[position]) > 1 else str(first)
    return rows


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


# ---------------------------------------------------------------- cells


def cell_text(cell: Cell | None) -> str:
    """``86.8 [85.1, 88.4] 8-10``; plain words for missing data."""
    if cell is None:
        return "not scored"
    if cell.accuracy is None:
        return "no pairs"
    text = f"{100 * cell.accuracy:.1f}"
    if cell.interval:
        text += f" [{100 * cell.interval[0]:.1f}, {100 * cell.interval[1]:.1f}]"
    suffix = cell_suffix(cell)
    return f"{text} {suffix}" if suffix else text


def cell_suffix(cell: Cell) -> str:
    """What follows the numbers: head or offset, direction, markers (``9-6 h>d*``)."""
    text = cell.head
    if cell.direction == "head_to_dep":
        text += " h>d"
    if cell.clearly_better is False:
        text += "*"
    if cell.ties > 1:
        text += f" (tie {cell.ties})"
    return text.strip()


def _mean_text(row: Row) -> str:
    return "-" if row.mean is None else f"{100 * row.mean:.1f}"


def _title(board: Leaderboard) -> str:
    return board.tables[0].title if len(board.tables) == 1 else "Attention-head leaderboards"


def _header(table: Table) -> list[str]:
    return ["rank", "model", "selection", "treebank", *table.relations] + (["mean"] if table.mean else [])


def _text_rows(table: Table, cell: Callable[[Cell | None], str] = cell_text) -> list[list[str]]:
    return [
        [row.rank, row.model, row.selection, row.treebank, *(cell(row.cells.get(r)) for r in table.relations)]
        + ([_mean_text(row)] if table.mean else [])
        for row in table.rows
    ]


# ---------------------------------------------------------------- formats


def render_markdown(board: Leaderboard) -> str:
    from tabulate import tabulate

    blocks = []
    for table in board.tables:
        text = tabulate(_text_rows(table), headers=_header(table), tablefmt="github", disable_numparse=True)
        notes = "\n".join(f"- {note}" for note in table.notes)
        heading = "#" if len(board.tables) == 1 else "##"
        blocks.append(f"{heading} {table.title}\n\n{text}\n\n{notes}\n")
    if len(board.tables) == 1:
        return blocks[0]
    return f"# {_title(board)}\n\n" + "\n".join(blocks)


def render_csv(board: Leaderboard) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for number, table in enumerate(board.tables):
        if number:
            writer.writerow([])
        _csv_table(writer, table, with_table_column=len(board.tables) > 1)
    return out.getvalue()


def _csv_table(writer, table: Table, *, with_table_column: bool) -> None:
    columns = (["table"] if with_table_column else []) + ["rank", "model", "kind", "selection", "treebank"]
    for name in table.relations:
        columns += [f"{name}_acc_pct", f"{name}_low_pct", f"{name}_high_pct", f"{name}_head_from_1", f"{name}_direction",
                    f"{name}_pairs", f"{name}_p_not_better"]
    writer.writerow(columns + (["mean_acc_pct"] if table.mean else []))
    for row in table.rows:
        values = ([table.key] if with_table_column else []) + [row.rank, row.model, row.kind, row.selection,
                                                                row.treebank]
        for name in table.relations:
            cell = row.cells.get(name)
            if cell is None or cell.accuracy is None:
                values += ["", "", "", "", "", "" if cell is None else cell.pairs, ""]
                continue
            low, high = cell.interval or ("", "")
            values += [_pct(cell.accuracy), _pct(low), _pct(high), cell.head, cell.direction or "", _blank(cell.pairs),
                       _blank(cell.p_not_better)]
        writer.writerow(values + ([_pct(row.mean)] if table.mean else []))


def _pct(value) -> str:
    return "" if value is None or value == "" else f"{100 * value:.2f}"


def _blank(value) -> str:
    return "" if value is None else str(value)


def _json_table(table: Table) -> dict:
    return {
        "key": table.key,
        "title": table.title,
        "counting": COUNTING,
        "level": table.level,
        "relations": table.relations,
        "notes": table.notes,
        "rows": [
            {
                **{key: value for key, value in asdict(row).items() if key != "cells"},
                "cells": {name: (asdict(row.cells[name]) if name in row.cells and row.cells[name] else None)
                          for name in table.relations},
            }
            for row in table.rows
        ],
    }


def render_json(board: Leaderboard) -> str:
    tables = [_json_table(table) for table in board.tables]
    data = {**tables[0], "tables": tables} if tables else {"tables": []}
    return json.dumps(data, indent=1) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
}


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters.

    >>> latex_escape("en_ewt 50% & more")
    'en\\_ewt 50\\% \\& more'
    """
    return "".join(_LATEX_SPECIAL.get(char, char) for char in str(text))


def _latex_cell(text: str) -> str:
    """Escaped, with the arrows of treebank labels and directions typeset as arrows."""
    return latex_escape(text).replace(" -\\textgreater{} ", " $\\to$ ").replace("h\\textgreater{}d", "h$\\to$d")


def render_latex(board: Leaderboard) -> str:
    return "\n".join(_latex_table(table) for table in board.tables)


def _latex_table(table: Table) -> str:
    header = _header(table)
    lines = [
        "% Requires \\usepackage{booktabs}. " + latex_escape(COUNTING),
        "\\begin{table}[t]",
        "\\centering",
        "\\small",
        f"\\begin{{tabular}}{{llll{'r' * (len(table.relations) + table.mean)}}}",
        "\\toprule",
        " & ".join(latex_escape(title) for title in header) + " \\\\",
        "\\midrule",
    ]
    previous_kind = None
    for row in _text_rows(table):
        kind = "reference" if row[0] == "ref" else "ranked"
        if previous_kind is not None and kind != previous_kind:
            lines.append("\\midrule")
        previous_kind = kind
        lines.append(" & ".join(_latex_cell(value) for value in row) + " \\\\")
    lines += [
        "\\bottomrule",
        "\\end{tabular}",
        f"\\caption{{{latex_escape(table.title + '. ' + ' '.join(table.notes))}}}",
        "\\end{table}",
    ]
    return "\n".join(lines) + "\n"


HTML_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem auto;max-width:1240px;padding:0 1rem;
color:#1d1d1f;line-height:1.4}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem}
.scroll{overflow-x:auto;max-width:100%;position:relative}
table.board{border-collapse:collapse;font-size:0.9rem;margin:0.5rem 0}
table.board th,table.board td{padding:0.3rem 0.55rem;border-bottom:1px solid #e3e3e6;text-align:right;vertical-align:top}
table.board thead th{border-bottom:2px solid #444;white-space:nowrap;vertical-align:bottom}
table.board .l{text-align:left}
table.board th button{font:inherit;font-weight:600;background:none;border:0;padding:0.1rem 0.2rem;cursor:pointer;color:inherit}
table.board th button:focus-visible{outline:2px solid #0a64d8;outline-offset:1px}
table.board th[aria-sort=ascending] button::after{content:" \\25B2";font-size:0.7em}
table.board th[aria-sort=descending] button::after{content:" \\25BC";font-size:0.7em}
table.board tr.group-head th{text-align:left;background:#eef1f6;font-weight:600;padding-top:0.45rem;border-bottom:1px solid #c9d1de}
table.board tr.group-head .how{font-weight:400;color:#555}
table.board tr.baseline td{color:#555;font-style:italic}
table.board tr.reference td{color:#666;background:#f7f7f7}
table.board td.model{max-width:16rem}
table.board td.model .links{display:block;font-size:0.78em}
table.board .acc{display:block;font-variant-numeric:tabular-nums;white-space:nowrap}
table.board .sub{display:block;font-size:0.76em;color:#666;white-space:nowrap;font-variant-numeric:tabular-nums}
table.board td.best .acc{font-weight:700;color:#0b5a1e}
table.board td.best{background:#e9f6ec}
table.board .head{font-family:ui-monospace,monospace}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
ul.notes{font-size:0.85rem;color:#333;max-width:60rem}
ul.notes li{margin:0.25em 0}
a{color:#0a55b8}
"""
"""The leaderboard's CSS (the explore page reuses it)."""

SORT_SCRIPT = """
(function(){
function key(cell){var v=cell?cell.getAttribute('data-sort'):null;if(v===null||v==='')return null;
 var n=Number(v);return isNaN(n)?v.toLowerCase():n;}
function sortBy(table,column,th){
 var dir=th.getAttribute('aria-sort')==='descending'?'ascending':(th.getAttribute('aria-sort')==='ascending'?'descending':th.getAttribute('data-first')||'descending');
 table.querySelectorAll('thead th').forEach(function(o){o.setAttribute('aria-sort','none');});
 th.setAttribute('aria-sort',dir);
 table.querySelectorAll('tbody').forEach(function(body){
  var rows=Array.prototype.slice.call(body.querySelectorAll('tr')).filter(function(r){return !r.classList.contains('group-head');});
  rows.sort(function(a,b){var x=key(a.children[column]),y=key(b.children[column]);
   if(x===null&&y===null)return 0;if(x===null)return 1;if(y===null)return -1;
   var c=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y));
   return dir==='ascending'?c:-c;});
  rows.forEach(function(r){body.appendChild(r);});
 });
}
document.querySelectorAll('table.board').forEach(function(table){
 table.querySelectorAll('thead th').forEach(function(th,column){
  var b=th.querySelector('button');if(b)b.addEventListener('click',function(){sortBy(table,column,th);});
 });
});
})();
"""
"""Sorts every ``table.board`` by a clicked column header, within each group (``tbody``); keyboard users
reach the headers' buttons with Tab and sort with Enter or Space; ``aria-sort`` says the order."""


def _html_cell(cell: Cell | None, best: bool) -> str:
    """A ``<td>``: accuracy on one line; interval, head and markers smaller below; ``data-sort`` for sorting."""
    if cell is None or cell.accuracy is None:
        return f'<td data-sort="">{html.escape(cell_text(cell))}</td>'
    sub = []
    if cell.interval:
        sub.append(f"[{100 * cell.interval[0]:.1f}, {100 * cell.interval[1]:.1f}]")
    suffix = cell_suffix(cell)
    if suffix:
        sub.append(f'<span class="head">{html.escape(suffix)}</span>')
    mark, marked = (BEST_MARK, ' class="best"') if best else ("", "")
    below = f'<span class="sub">{" ".join(sub)}</span>' if sub else ""
    return f'<td data-sort="{cell.accuracy:.6f}"{marked}><span class="acc">{100 * cell.accuracy:.1f}{mark}</span>{below}</td>'


BEST_MARK = '<span class="sr"> (best in this group)</span>'
"""Said to screen readers after a best cell (sighted readers see it highlighted)."""


def _groups(table: Table) -> list[tuple[str, str, list[Row]]]:
    """Rows grouped by treebank and selection, in table order: (treebank, selection, rows)."""
    groups: dict[tuple[str, str, bool], list[Row]] = {}
    for row in table.rows:
        groups.setdefault((row.treebank, row.selection, row.kind == "reference"), []).append(row)
    return [(treebank, selection, rows) for (treebank, selection, _), rows in groups.items()]


SELECTION_WORDS = {"held-out": "held-out: chosen on dev, reported on test", "in-sample": "in-sample: chosen and "
                   "reported on the same sentences"}


def _best(rows: list[Row], relations: list[str]) -> dict[str, float | None]:
    """The best accuracy of each column (and the mean) among a group's rows."""
    best: dict[str, float | None] = {}
    for name in relations:
        values = [row.cells[name].accuracy for row in rows if row.cells.get(name) and row.cells[name].accuracy is not None]
        best[name] = max(values) if values else None
    means = [row.mean for row in rows if row.mean is not None]
    best["(mean)"] = max(means) if means else None
    return best


def _model_cell(row: Row, links: dict | None) -> str:
    found = (links or {}).get((row.model, row.treebank)) or []
    extra = ""
    if found:
        extra = '<span class="links">' + " · ".join(
            f'<a href="{html.escape(href)}">{html.escape(text)}</a>' for text, href in found) + "</span>"
    return f'<td class="l model" data-sort="{html.escape(row.model)}">{html.escape(row.model)}{extra}</td>'


def html_table(table: Table, heading: str, links: dict | None = None) -> str:
    """One sortable table: a group of rows per treebank (and selection) under a header row naming it once,
    the best cell of each column within a group marked, each model linked to its files when given."""
    columns = ["rank", "model", *table.relations] + (["mean"] if table.mean else [])
    text_columns = ("rank", "model")  # sorted ascending on the first click; numbers descending (best first)
    head_cells = "".join(
        f'<th scope="col" class="{"l" if title in text_columns else "n"}" aria-sort="none"'
        + (' data-first="ascending"' if title in text_columns else "")
        + f'><button type="button">{html.escape(title)}</button></th>'
        for title in columns)
    bodies = []
    for treebank, selection, rows in _groups(table):
        reference = rows[0].kind == "reference"
        how = "quoted from the paper, in-sample" if reference else SELECTION_WORDS.get(selection, selection)
        label = f"{'Reference: ' if reference else ''}{treebank.replace(' -> ', ' → ')}"
        lines = [f'<tr class="group-head"><th colspan="{len(columns)}" scope="rowgroup">{html.escape(label)} '
                 f'<span class="how">· {html.escape(how)}</span></th></tr>']
        best = _best([row for row in rows if row.kind != "reference"] or rows, table.relations) if table.marks_best \
            else {}
        for row in rows:
            rank_key = row.rank.lstrip("=") if row.rank.lstrip("=").isdigit() else ""
            cells = f'<td class="l" data-sort="{rank_key}">{html.escape(row.rank)}</td>' + _model_cell(row, links)
            for name in table.relations:
                cell = row.cells.get(name)
                is_best = bool(cell and cell.accuracy is not None and cell.accuracy == best.get(name)
                               and row.kind != "reference")
                cells += _html_cell(cell, is_best)
            if table.mean:
                is_best = row.mean is not None and row.mean == best.get("(mean)") and row.kind != "reference"
                mark, marked = (BEST_MARK, ' class="best"') if is_best else ("", "")
                key = "" if row.mean is None else f"{row.mean:.6f}"
                cells += f'<td data-sort="{key}"{marked}><span class="acc">{html.escape(_mean_text(row))}{mark}</span></td>'
            lines.append(f'<tr class="{html.escape(row.kind)}">{cells}</tr>')
        bodies.append('<tbody class="group">\n' + "\n".join(lines) + "\n</tbody>")
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in table.notes)
    return (f"<{heading}>{html.escape(table.title)}</{heading}>\n"
            f'<div class="scroll"><table class="board">\n<thead><tr>{head_cells}</tr></thead>\n'
            + "\n".join(bodies) + f'\n</table></div>\n<ul class="notes">{notes}</ul>\n')


def render_html(board: Leaderboard, links: dict | None = None) -> str:
    """One page: every table, sortable by any column (click or Enter on a header), grouped by treebank, the
    best cell of each column marked. ``links``: (model, treebank label) -> [(text, href)], e.g. its plots."""
    title = html.escape(_title(board))
    single = len(board.tables) == 1
    sections = "".join(html_table(table, "h1" if single else "h2", links) for table in board.tables)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{title}</title>\n<style>{HTML_STYLE}</style>\n</head>\n<body>\n"
        + ("" if single else f"<h1>{title}</h1>\n") + sections + f"<script>{SORT_SCRIPT}</script>\n</body>\n</html>\n"
    )


def row_key(result: dict) -> tuple[str, str]:
    """The (model, treebank) labels of a result's row: what ``links`` of :func:`render_html` are keyed by."""
    return result_label(result), _row_treebank(result)


def _row_treebank(result: dict) -> str:
    treebank = treebank_label(result["treebank"]["path"])
    heldout = result.get("heldout")
    if heldout:
        treebank = f"{treebank_label(heldout['select_on']['treebank']['path'])} -> {treebank}"
    return treebank


TABLES: Registry[Callable[..., Table]] = Registry("leaderboard table")
"""Analysis -> the function that makes its table from its results (the probe's also takes reference files)."""
TABLES.register("probe", relation_table)


def _coref_table(results: list[dict]) -> Table:
    from probing.analyses.coref.report import leaderboard_table

    return leaderboard_table(results)


TABLES.register("coref", _coref_table)


def _trees_table(results: list[dict]) -> Table:
    from probing.analyses.trees.report import leaderboard_table

    return leaderboard_table(results)


TABLES.register("trees", _trees_table)


def noop_table(results: list[dict]) -> Table:
    """The no-op test's table: per model, a row for the words each relation's chosen head reads (its dependents,
    or its head words for a head->dep head) and one for the other words; a cell is that share of attention to
    special tokens with its interval (probing.analyses.noop.accumulator)."""
    from probing.analyses.noop.report import ATTENDING, NOTES

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
    return Table(relations, rows, NOTES(results[0]["noop"]["level"]), level=results[0]["noop"]["level"], key="noop",
                 mean=False, marks_best=False, title="The no-op test: attention to special tokens from the words a head reads and "
                                   "from the others")


TABLES.register("noop", noop_table)


FORMATS: Registry[Callable[[Leaderboard], str]] = Registry("format", option="--format")
FORMATS.register("md", render_markdown)
FORMATS.register("csv", render_csv)
FORMATS.register("json", render_json)
FORMATS.register("latex", render_latex)
FORMATS.register("html", render_html)


def render(board: Leaderboard, fmt: str) -> str:
    return FORMATS[fmt](board)


def leaderboard_from_files(paths: Iterable[str | Path], references: Iterable[str | Path] = ()) -> Leaderboard:
    """Read result files of any analysis with a table (and reference files, which may be mixed into ``paths``)."""
    results, refs = [], []
    for path in list(paths) + list(references):
        data = read_json(path)
        (refs if "reference" in data else results).append(data)
    return build_leaderboard(results, refs)
