"""Leaderboards: the table data model (Cell, Row, Table), the one ranking rule, and tables from result files.

A leaderboard is a list of tables, one or more per kind of result given; each
analysis makes its own from its results (the ``tables`` part of its
registration in :mod:`probing.plugins`: the probe's relation table, whole
trees, coreference, the no-op test, ...), and :mod:`probing.report.renderers`
writes them in five formats. A cell holds an accuracy (or a share) with its
interval and the head as layer-head counted from 1; rows of one group are
ranked by their mean over the columns that rank them.

Never imports torch, nor any analysis by name: tables are found through the
registry of analyses.

>>> cell = Cell(accuracy=0.868, interval=[0.851, 0.884], head="8-10", direction="dep_to_head")
>>> cell_text(cell)
'86.8 [85.1, 88.4] 8-10'
>>> rows = rank_rows([Row("a", "model", "held-out", "t", {"det": Cell(0.5)}),
...                   Row("b", "model", "held-out", "t", {"det": Cell(0.7)})], ["det"])
>>> [(row.rank, row.model) for row in rows]
[('1', 'b'), ('2', 'a')]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from probing.errors import ProbingError
from probing.naming import interval_text, percent, scaled

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
    scale: str = "percent"  # how accuracy and interval read (probing.naming.SCALES): a difference, a loss in nats
    p_adjusted: float | None = None  # p_not_better adjusted for the board's many rows (Holm), on a board of effects
    exact: bool = False  # p_not_better is exact: the whole space of random sets, not draws from it
    spread: bool = False  # interval is the spread of random draws (2.5th, 97.5th percentile), no estimate's interval
    text: str = ""  # what a cell without a number says instead (unreachable), where "no pairs" would mislead
    se: float | None = None  # the paired bootstrap standard error of an effect, for the board's detectable effect


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
    effects: bool = False
    """Whether cells are effects (a change, in each cell's own scale) with a p-value and a note, not accuracies
    of a head: the CSV names its columns for that (``_effect``, ``_low``, ``_high``, ``_note``, ``_p``, ``_p_holm``)."""
    measures: dict[str, str | None] | None = None
    """Column -> the measure its cells are in, for the minimum detectable effect (:func:`mde_note`); None for a
    column whose intervals are no estimate's (the spread of random draws). Without it, every column is one measure."""


@dataclass
class Leaderboard:
    """The tables made from a set of result files, in the order of :func:`leaderboard_position`."""

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
    from probing.results.io import read_result, read_result_text
    from probing.results.schema.bounds import parse_json
    from probing.results.schema.validation import validate_reference

    path = Path(path)
    if path.is_file():
        data = parse_json(read_result_text(path), source=str(path))
        if isinstance(data, dict) and "reference" in data:
            return validate_reference(data, source=str(path))
    return read_result(path)


def model_label(model: dict, reading: str = "weights", marks: Iterable[str] = ()) -> str:
    """The model's name (its folder's name or hub id, as every table and plot calls it); random-init runs
    and readings other than the raw weights say so, and so do further ``marks``:
    ``all-MiniLM-L6-v2 (random init, norms)``."""
    name = model.get("name") or Path(str(model["name_or_path"])).name
    marks = (["random init"] if model.get("random_init") else []) + ([reading] if reading != "weights" else []) + [
        *marks]
    return f"{name} ({', '.join(marks)})" if marks else name


SHOWN_FILE = "shown_file"
"""The key :func:`board_results` sets, on a result read for a board, to the file name its rows show: set only where
two results would otherwise make rows that look the same (a rerun beside the committed file). Never written."""


def result_label(result: dict) -> str:
    """:func:`model_label` of a result file (its model and its reading). A ``--shard`` part says which part it is
    (its numbers are that part's units only: ``part 1 of 4, --shard 0/4``), and a result :func:`board_results`
    had to tell apart from another names its file.

    >>> result_label({"model": {"name": "m"}, "config": {"shard": {"index": 0, "count": 4}}})
    'm (part 1 of 4, --shard 0/4)'
    """
    shard = result["config"].get("shard")
    marks = [f"part {shard['index'] + 1} of {shard['count']}, --shard {shard['index']}/{shard['count']}"] if shard \
        else []
    marks += [result[SHOWN_FILE]] if result.get(SHOWN_FILE) else []
    return model_label(result["model"], result["config"].get("attention", "weights"), marks)


def treebank_label(path: str) -> str:
    """``en_ewt-ud-test`` for ``.../en_ewt-ud-test.conllu``."""
    return Path(path).stem


# ---------------------------------------------------------------- the tables of every analysis

DEFAULT_POSITION = 100


def leaderboard_position(position: int):
    """Mark an analysis's ``tables`` function with where its tables stand on a leaderboard (lower first;
    unmarked: :data:`DEFAULT_POSITION`, after the built-in analyses; equal positions in name order)."""

    def mark(tables: Callable) -> Callable:
        tables.leaderboard_position = position
        return tables

    return mark


def _table_makers() -> dict[str, Callable[..., list[Table]]]:
    """Analysis name -> its ``tables`` function, for every registered analysis that has one, in board order."""
    from probing.plugins import analyses

    registry = analyses()
    makers = {name: registry[name].load("tables") for name in registry.names() if registry[name].tables}
    return dict(sorted(makers.items(), key=lambda item: (getattr(item[1], "leaderboard_position",
                                                                 DEFAULT_POSITION), item[0])))


def reference_analysis(reference: dict) -> str:
    """The analysis whose table a reference file's quoted figures join (the probe's unless it says)."""
    return reference["reference"].get("analysis", "probe")


def build_leaderboard(results: Iterable[dict], references: Iterable[dict] = ()) -> Leaderboard:
    """Every table the results make, each analysis's through the registry; reference files go to the tables
    of their analysis (``tables(results, references=...)``)."""
    results, references = list(results), list(references)
    if not results and not references:
        raise ProbingError("no result files given")
    makers = _table_makers()
    unknown = sorted(({result["analysis"] for result in results}
                      | {reference_analysis(reference) for reference in references}) - set(makers))
    if unknown:
        raise ProbingError(f"no leaderboard table is made from {', '.join(unknown)} results; give results of "
                           f"{', '.join(makers)}", source="RESULT")
    tables: list[Table] = []
    for analysis, make in makers.items():
        mine = [result for result in results if result["analysis"] == analysis]
        quoted = [reference for reference in references if reference_analysis(reference) == analysis]
        if mine or quoted:
            tables += make(mine, references=quoted) if quoted else make(mine)
    for table in tables:  # every board that makes a claim says how small an effect it could see
        note = mde_note(table)
        if note:
            table.notes = [*table.notes, note]
    return Leaderboard(tables)


MDE_FACTOR = 2.80
"""z(0.975) + z(0.80): an effect this many standard errors from 0 is found at 80% power by a two-sided test at 0.05."""


def mde_note(table: Table) -> str | None:
    """What the board's intervals can tell from 0, per measure: the median over its cells of the half-width of their
    interval (called that: it is no power calculation) and, where cells carry the paired bootstrap standard error
    of an effect (``se``), the minimum detectable effect, :data:`MDE_FACTOR` x the median error; in the board's
    unit (percentage points for accuracies and shares, nats for a loss); None when no cell has an interval.
    Columns the table's ``measures`` maps to None are left out; a measure is never pooled with another.

    >>> rows = [Row("a", "model", "held-out", "t", {"det": Cell(0.5, [0.46, 0.54])}),
    ...         Row("b", "model", "held-out", "t", {"det": Cell(0.7, [0.68, 0.72])}),
    ...         Row("c", "model", "held-out", "t", {"det": Cell(0.6, [0.5, 0.7])})]
    >>> mde_note(Table(["det"], rows, [])).split(": ", 1)[1]    # half-widths 4, 2 and 10 points
    '4.0 points (3 cells).'
    >>> effect = Table(["loss"], [Row("a", "model", "", "t", {"loss": Cell(0.1, [0.0, 0.2], scale="nats", se=0.05)})],
    ...                [], measures={"loss": "loss"})
    >>> mde_note(effect).split(". ")[1].split(": ")[-1]      # 2.80 x 0.05
    'loss 0.140 nats (1 cells).'
    """
    from statistics import median

    halves: dict[str | None, tuple[str, list[float]]] = {}
    errors: dict[str | None, tuple[str, list[float]]] = {}
    for row in table.rows:
        for column in table.relations:
            cell = row.cells.get(column)
            measure = column if table.measures is None else table.measures.get(column)
            if cell is None or cell.accuracy is None or not cell.interval or measure is None or cell.spread:
                continue
            unit = "nats" if cell.scale == "nats" else "points"
            key = None if table.measures is None else measure
            halves.setdefault(key, (unit, []))[1].append((cell.interval[1] - cell.interval[0]) / 2)
            if cell.se is not None:
                errors.setdefault(key, (unit, []))[1].append(MDE_FACTOR * cell.se)
    if not halves:
        return None

    def medians(found) -> str:
        parts = []
        for measure, (unit, values) in found.items():
            middle = median(values)
            amount = f"{middle:.3f} nats" if unit == "nats" else f"{100 * middle:.1f} points"
            parts.append(f"{measure + ' ' if measure else ''}{amount} ({len(values)} cells)")
        return "; ".join(parts)

    note = (f"Half-width of the {round(100 * table.level)}% intervals (the median over a measure's cells; an estimate "
            f"nearer 0 than its half-width has an interval that holds 0): {medians(halves)}.")
    if errors:
        note += (f" Minimum detectable effect against 0 (80% power, two-sided 0.05: {MDE_FACTOR:.2f} x the paired "
                 f"bootstrap standard error, the median over a measure's cells): {medians(errors)}.")
    return note


def leaderboard_from_files(paths: Iterable[str | Path], references: Iterable[str | Path] = ()) -> Leaderboard:
    """Read result files of any analysis with a table (and reference files, which may be mixed into ``paths``)."""
    results, refs = board_results(paths, references)
    return build_leaderboard([result for _, result in results], refs)


def board_results(paths: Iterable[str | Path], references: Iterable[str | Path] = ()) -> tuple[list, list[dict]]:
    """The results a board is made of, as (path, result), and the reference files among ``paths`` and
    ``references``. Each result is checked against what its counts give again (:func:`check_derived`); results
    whose rows would look the same as another's (the same model, selection and treebank: a rerun beside the
    committed file) show their file names (:data:`SHOWN_FILE`), so that no two rows of a board read alike."""
    results, refs = [], []
    for path in list(paths) + list(references):
        data = read_json(path)
        if "reference" in data:
            refs.append(data)
        else:
            check_derived(data, source=str(path))
            results.append((str(path), data))
    alike = _alike_results([result for _, result in results], refs)
    if alike:
        names = [Path(results[index][0]).name for index in alike]
        shown = names if len(set(names)) == len(names) else [results[index][0] for index in alike]
        for index, name in zip(alike, shown):
            results[index] = (results[index][0], {**results[index][1], SHOWN_FILE: name})
    return results, refs


def _row_keys(board: Leaderboard) -> list[tuple]:
    """Every model row of a board as what a reader tells rows by: the table, the model, the selection, the
    treebank."""
    return [(table.key, row.model, row.selection, row.treebank) for table in board.tables for row in table.rows
            if row.kind == "model"]


def _alike_results(results: list[dict], references: list[dict]) -> list[int]:
    """The indices of the results that make a row another result's row looks the same as (none when no two rows
    of the whole board are alike: the one case worth the second look, each result's rows on their own)."""
    keys = _row_keys(build_leaderboard(results, references)) if results else []
    alike = {key for key in keys if keys.count(key) > 1}
    if not alike:
        return []
    return [index for index, result in enumerate(results) if alike & set(_row_keys(build_leaderboard([result])))]


def check_derived(result: dict, source: str) -> None:
    """Refuse a result holding a block derived from its counts that is not what the counts give again (the
    ``derived`` check of its analysis's record, probing.plugins: an ablate --chosen result's versus block): a
    board shows no number its own counts do not give. One line naming the file and the first field that differs.
    """
    from probing.plugins import analyses

    record = analyses()[result["analysis"]]
    found = record.load("derived")(result) if record.derived else None
    if found:
        raise ProbingError(f"{found}; a board shows only what a result's own counts give (was the file edited?)",
                           source=source)


# ---------------------------------------------------------------- ranking


def mean_over(row: Row, columns: list[str]) -> float | None:
    """Mean accuracy over ``columns``; None when one is missing or has no pairs. A column whose cell says the
    treebank has no pair of it at all (count 0, shown as none) is left out: such a relation is never ranked."""
    cells = [row.cells.get(name) for name in columns]
    values = [cell and cell.accuracy for cell in cells if not (cell is not None and cell.pairs == 0)]
    if not values or any(v is None for v in values):
        return None
    return sum(values) / len(values)


def rank_rows(rows: list[Row], columns: list[str]) -> list[Row]:
    """Rows sorted and ranked by their mean over ``columns`` (the one ranking rule of every table): rows lacking
    a column last (rank ``-``); equal shown means share a rank (``=2``)."""
    for row in rows:
        row.mean = mean_over(row, columns)
    rows.sort(key=lambda row: (row.mean is None, -(row.mean or 0.0), row.kind != "model", row.model))
    shown = [None if row.mean is None else round(100 * row.mean, 1) for row in rows]
    for position, row in enumerate(rows):
        if row.mean is None:
            row.rank = "-"
            continue
        first = shown.index(shown[position]) + 1
        row.rank = f"={first}" if shown.count(shown[position]) > 1 else str(first)
    return rows


# ---------------------------------------------------------------- cells as text


def cell_text(cell: Cell | None) -> str:
    """``86.8 [85.1, 88.4] 8-10``; plain words for missing data (a cell's own ``head`` note says why, where it
    has one: ``no rho: every accuracy or harm equal``)."""
    if cell is None:
        return "not scored"
    if cell.accuracy is None:
        return cell.text or ("none" if cell.pairs == 0 else "no pairs")
    text = scaled(cell.accuracy, cell.scale) + (f" {range_text(cell)}" if cell.interval else "")
    suffix = cell_suffix(cell)
    return f"{text} {suffix}" if suffix else text


def range_text(cell: Cell) -> str:
    """A cell's interval as it reads: ``[a, b]`` for an estimate's interval, ``draws 2.5-97.5%: a to b`` for the
    spread of random draws (a different thing, never written alike).

    >>> cell = Cell(0.01, [-0.02, 0.03], scale="points")
    >>> range_text(cell), range_text(Cell(0.01, [-0.02, 0.03], scale="points", spread=True))
    ('[-2.0, +3.0]', 'draws 2.5-97.5%: -2.0 to +3.0')
    """
    from probing.naming import spread_text

    return spread_text(cell.interval, cell.scale) if cell.spread else interval_text(cell.interval, cell.scale)


def cell_suffix(cell: Cell) -> str:
    """What follows the numbers: head or offset, direction, markers (``9-6 h>d*``)."""
    text = cell.head
    if cell.direction == "head_to_dep":
        text += " h>d"
    elif cell.direction == "causal":
        text += " later>earlier"
    if cell.clearly_better is False:
        text += "*"
    if cell.ties > 1:
        text += f" (tie {cell.ties})"
    return text.strip()


def mean_text(row: Row) -> str:
    return "-" if row.mean is None else percent(row.mean)


def board_title(board: Leaderboard) -> str:
    return board.tables[0].title if len(board.tables) == 1 else "Attention-head leaderboards"


def text_header(table: Table) -> list[str]:
    """The column titles of the text formats (Markdown, LaTeX)."""
    return ["rank", "model", "selection", "treebank", *table.relations] + (["mean"] if table.mean else [])


def text_rows(table: Table) -> list[list[str]]:
    """Every row as the text formats show it, under :func:`text_header`."""
    return [
        [row.rank, row.model, row.selection, row.treebank, *(cell_text(row.cells.get(r)) for r in table.relations)]
        + ([mean_text(row)] if table.mean else [])
        for row in table.rows
    ]
