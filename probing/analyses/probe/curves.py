"""Probing during training: the best head's accuracy per relation against the training step.

Syntactic heads can appear suddenly during pre-training (Chen et al. 2024,
"Sudden Drops in the Loss", tracked Clark-style head accuracy across BERT
checkpoints). A *curve* is a list of :class:`CurvePoint`, one per step and
relation, made from ordinary probe results: the chosen head's accuracy and
the chosen offset's, held-out (chosen on dev, reported on test) when a result
has a ``heldout`` object, else the in-sample best, as in the paper. Intervals
come along when the results have a bootstrap.

Two producers feed it, and neither has a loop over batches of its own:

- ``probing score --model RUN_FOLDER``, where the folder holds
  ``checkpoint-STEP/`` subfolders (transformers Trainer's layout): every
  checkpoint is an ordinary scoring run (:func:`score_checkpoints`);
- :class:`probing.analyses.probe.callbacks.ProbingCallback`, which scores the model being
  trained at each evaluation.

Files (for ``--output NAME.json``): ``NAME-stepSTEP.json`` per checkpoint (an
ordinary result file), ``NAME-curve.csv`` (one row per step and relation),
``NAME-curve.md`` (one row per step) and ``NAME-curve.png``. Everything but
:func:`score_checkpoints` works on result dicts alone and never imports torch.

>>> step_path("runs/bert.json", 500).name, curve_paths("runs/bert.json")["png"].name
('bert-step500.json', 'bert-curve.png')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from probing.errors import ProbingError
from probing.report.escaping import csv_text, markdown_cell, markdown_text
from probing.stats.intervals import interval_pair

CHECKPOINT_NAME = re.compile(r"^checkpoint-(\d+)$")
"""A Trainer checkpoint folder's name; the number is the training step."""

CURVE_FILES = ("csv", "md", "png")


@dataclass(frozen=True)
class Checkpoint:
    """One saved state of a training run: its step and its folder."""

    step: int
    path: Path


def find_checkpoints(folder: str | Path | None) -> list[Checkpoint] | None:
    """The ``checkpoint-STEP/`` subfolders of a training run's folder, in step order (500 before 1000,
    whatever the names sort as); None when ``folder`` is not such a folder (a checkpoint itself, a hub
    id, a path that does not exist), so that it is loaded as one model.

    >>> import tempfile
    >>> run = Path(tempfile.mkdtemp())
    >>> for step in (100, 20, 3):
    ...     (run / f"checkpoint-{step}").mkdir(); _ = (run / f"checkpoint-{step}" / "config.json").write_text("{}")
    >>> [c.step for c in find_checkpoints(run)], find_checkpoints(run / "checkpoint-3")
    ([3, 20, 100], None)
    """
    if folder is None:
        return None
    root = Path(folder).expanduser()
    if not root.is_dir() or (root / "config.json").exists():
        return None
    found = []
    for child in root.iterdir():
        match = CHECKPOINT_NAME.match(child.name)
        if match and child.is_dir():
            found.append(Checkpoint(int(match.group(1)), child))
    if not found:
        return None
    found.sort(key=lambda checkpoint: checkpoint.step)
    for before, after in zip(found, found[1:]):
        if before.step == after.step:
            raise ProbingError(f"{before.path.name} and {after.path.name} are both step {before.step}",
                               source="--model")
    from probing.results.schema.bounds import MAX_INTEGER

    for checkpoint in found:
        if not (checkpoint.path / "config.json").is_file():
            raise ProbingError(f"{checkpoint.path.name} holds no config.json (a save that did not finish?); "
                               "remove it or score its siblings one by one", source=f"--model {folder}")
        if checkpoint.step > MAX_INTEGER:  # every result records its step
            raise ProbingError(f"{checkpoint.path.name}: step {checkpoint.step} is larger than any number a result "
                               f"holds (at most {MAX_INTEGER})", source=f"--model {folder}")
    return found


def step_path(output: str | Path, step: int) -> Path:
    """Where the result of one step goes: ``NAME-stepSTEP.json`` beside ``--output NAME.json``."""
    output = Path(output)
    return output.with_name(f"{output.stem}-step{step}.json")


def curve_paths(output: str | Path) -> dict[str, Path]:
    """Where the curve goes beside ``--output NAME.json``: ``NAME-curve.csv``, ``.md`` and ``.png``."""
    output = Path(output)
    return {kind: output.with_name(f"{output.stem}-curve.{kind}") for kind in CURVE_FILES}


def earlier_output(path: str | Path):
    """What an existing file among a folder run's outputs (:func:`planned_outputs`) must be to be replaced: a
    probe result (each step's), or the curve an earlier run wrote (its CSV's header, its Markdown's heading and
    first words, a PNG figure). See probing.atomic.check_output_path.

    >>> earlier_output("run-curve.csv").recognise(b"step,relation,pairs,selection", None)
    True
    """
    from probing.atomic import figure_of, result_of, text_matching

    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        return text_matching(",".join(CSV_COLUMNS[:3]) + ",", "a probing curve (CSV)")
    if suffix == ".md":
        return text_matching(r"# [^\n]*\n\nAccuracy % of each relation's head", "a probing curve (Markdown)")
    if suffix == ".json":
        return result_of("probe")
    return figure_of(path)


# ---------------------------------------------------------------------------- points


@dataclass(frozen=True)
class CurvePoint:
    """One relation at one step: the chosen head and offset, and their accuracies (0..1).

    ``head`` is ``layer-head direction`` counted from 1 (``"3-9 dep->head"``);
    ``selection`` is ``"chosen on dev"`` or ``"in-sample best"``; intervals
    are ``[low, high]`` or None without a bootstrap; ``random_init`` marks the
    untrained control.
    """

    step: int
    relation: str
    pairs: int
    head: str | None
    accuracy: float | None
    interval: list[float] | None
    offset: int | None
    offset_accuracy: float | None
    offset_interval: list[float] | None
    selection: str
    random_init: bool = False


def points_of(step: int, result: dict) -> list[CurvePoint]:
    """The curve points of one probe result (held-out numbers when it has them)."""
    from probing.analyses.probe.plots import chosen
    from probing.naming import head_name

    points = []
    for relation, entry in result["relations"].items():
        report = chosen(result, relation)
        head, baseline = report.get("head"), report.get("baseline")
        points.append(CurvePoint(
            step=step,
            relation=relation,
            pairs=entry["total"],
            head=None if head is None else head_name(head["layer"], head["head"], head["direction"]),
            accuracy=None if head is None else head["accuracy"],
            interval=interval_pair(head and head.get("interval")),
            offset=None if baseline is None else baseline["offset"],
            offset_accuracy=None if baseline is None else baseline["accuracy"],
            offset_interval=interval_pair(baseline and baseline.get("interval")),
            selection=report["selection"],
            random_init=bool(result["model"].get("random_init")),
        ))
    return points


def curve(results: Iterable[tuple[int, dict]]) -> list[CurvePoint]:
    """Every point of ``(step, result)`` pairs, in step order (relations in each result's order)."""
    return [point for step, result in sorted(results, key=lambda item: item[0]) for point in points_of(step, result)]


def relations_of(points: list[CurvePoint]) -> list[str]:
    return list(dict.fromkeys(point.relation for point in points))


def steps_of(points: list[CurvePoint]) -> list[int]:
    return list(dict.fromkeys(point.step for point in points))


# ---------------------------------------------------------------------------- tables


CSV_COLUMNS = ("step", "relation", "pairs", "selection", "head", "accuracy", "low", "high",
               "offset", "offset_accuracy", "offset_low", "offset_high", "random_init")
"""One row per step and relation; accuracies as fractions (0..1), heads and layers from 1; random_init is 1 for
the untrained control."""


def curve_csv(points: list[CurvePoint]) -> str:
    """The curve as CSV (:data:`CSV_COLUMNS`), for a spreadsheet or another plotting tool.

    >>> print(curve_csv([CurvePoint(500, "det", 40, "3-9 dep->head", 0.8, None, 1, 0.6, None, "in-sample best")]))
    step,relation,pairs,selection,head,accuracy,low,high,offset,offset_accuracy,offset_low,offset_high,random_init
    500,det,40,in-sample best,3-9 dep->head,0.8,,,+1,0.6,,,0
    <BLANKLINE>
    """
    rows = [list(CSV_COLUMNS)]
    for p in points:
        low, high = p.interval or (None, None)
        offset_low, offset_high = p.offset_interval or (None, None)
        rows.append([p.step, p.relation, p.pairs, p.selection, p.head, p.accuracy, low, high,
                     None if p.offset is None else f"{p.offset:+d}", p.offset_accuracy, offset_low, offset_high,
                     int(p.random_init)])
    return csv_text(rows)


def curve_rows(points: list[CurvePoint], *, intervals: bool = True) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of the wide table: one row per step (the untrained control marked); per relation
    the chosen head's accuracy % with its name (from 1) and the chosen offset's accuracy %."""
    from probing.naming import percent_with_interval

    relations = relations_of(points)
    by_cell = {(p.step, p.relation): p for p in points}
    headers = ["step"] + [title for relation in relations for title in (f"{relation} head", f"{relation} offset")]
    rows = []
    controls = {p.step for p in points if p.random_init}
    for step in steps_of(points):
        row = [f"{step} (random init)" if step in controls else str(step)]
        for relation in relations:
            p = by_cell.get((step, relation))
            if p is None or p.accuracy is None:
                row += ["-", "-"]
                continue
            row.append(f"{percent_with_interval(p.accuracy, p.interval if intervals else None)} {p.head}")
            row.append(f"{percent_with_interval(p.offset_accuracy, p.offset_interval if intervals else None)} {p.offset:+d}")
        rows.append(row)
    return headers, rows


def curve_table(points: list[CurvePoint], tablefmt: str = "simple", *, intervals: bool = True) -> str:
    """The wide table as text (``tablefmt="github"`` for Markdown; ``intervals`` False for a terminal)."""
    from tabulate import tabulate

    headers, rows = curve_rows(points, intervals=intervals)
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True)


def curve_markdown(points: list[CurvePoint], title: str = "") -> str:
    """The wide table as a Markdown page, with what its cells mean (every cell escaped for Markdown)."""
    from tabulate import tabulate

    selection = points[0].selection if points else "in-sample best"
    headers, rows = curve_rows(points)
    table = tabulate([[markdown_cell(value) for value in row] for row in rows],
                     headers=[markdown_cell(title) for title in headers], tablefmt="github", disable_numparse=True)
    lines = [f"# {markdown_text(title)}" if title else "# Probing curve", "",
             f"Accuracy % of each relation's head ({selection}; layer-head from 1) and of its best "
             "fixed-offset baseline, per training step; intervals are 95% bootstrap intervals where scored.", "",
             table, ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- figure


HEAD_COLOUR = "#1f5fa8"
OFFSET_COLOUR = "#8a8a8a"


def draw_curve(points: list[CurvePoint], title: str = ""):
    """One panel per relation: the chosen head's accuracy % (solid) and the best offset's (dashed) against
    the step, with interval bands where the results have a bootstrap; the last head is named."""
    from probing.report.drawing import new_figure

    relations = relations_of(points)
    if not relations:
        raise ProbingError("no step was scored, so there is no curve to draw")
    columns = min(3, len(relations))
    rows = -(-len(relations) // columns)
    figure = new_figure(3.6 * columns, 2.7 * rows + 0.6, layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False)
    for index, relation in enumerate(relations):
        ax = axes[index // columns][index % columns]
        mine = [p for p in points if p.relation == relation and p.accuracy is not None]
        _draw_panel(ax, relation, mine)
    for index in range(len(relations), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if any(p.random_init for p in points):
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], marker="o", markersize=6, markerfacecolor="white", markeredgecolor=HEAD_COLOUR,
                              linestyle="none"))
        labels.append("the untrained (random-init) control")
    figure.legend(handles, labels, loc="outside lower center", ncols=len(handles), fontsize=8, frameon=False)
    figure.suptitle(title or "probing curve", fontsize=9)
    return figure


def _draw_panel(ax, relation: str, points: list[CurvePoint]) -> None:
    steps = [p.step for p in points]
    head = [100 * p.accuracy for p in points]
    offset = [100 * p.offset_accuracy for p in points]
    from matplotlib.ticker import MaxNLocator

    selection = points[0].selection if points else "in-sample best"
    ax.plot(steps, head, "-o", color=HEAD_COLOUR, markersize=3, linewidth=1.6, label=f"best head ({selection})")
    controls = [(p.step, 100 * p.accuracy) for p in points if p.random_init]
    if controls:
        ax.plot(*zip(*controls), "o", markersize=6, markerfacecolor="white", markeredgecolor=HEAD_COLOUR,
                linestyle="none")
    ax.plot(steps, offset, "--", color=OFFSET_COLOUR, linewidth=1.3, label="best offset baseline")
    for values, colour in (([p.interval for p in points], HEAD_COLOUR), ([p.offset_interval for p in points],
                                                                          OFFSET_COLOUR)):
        if all(values):
            ax.fill_between(steps, [100 * v[0] for v in values], [100 * v[1] for v in values], color=colour,
                            alpha=0.15, linewidth=0)
    if points:
        last = points[-1]
        ax.annotate(f"{last.head}", (last.step, 100 * last.accuracy), textcoords="offset points", xytext=(-4, 6),
                    ha="right", fontsize=7, color=HEAD_COLOUR)
    pairs = points[-1].pairs if points else 0
    ax.set_title(f"{relation} ({pairs} pairs)", fontsize=9)
    ax.set_xlabel("training step", fontsize=8)
    ax.set_ylabel("accuracy %", fontsize=8)
    ax.set_ylim(0, 100)
    ax.tick_params(labelsize=7)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3, linewidth=0.5)


def write_curve(points: list[CurvePoint], output: str | Path, *, title: str = "", follow_symlinks: bool = False,
                dpi: int = 130) -> list[Path]:
    """Write ``NAME-curve.csv``, ``.md`` and ``.png`` beside ``output`` (atomically); return their paths."""
    from probing.atomic import save_figure_atomic, write_text_atomic

    paths = curve_paths(output)
    written = [
        write_text_atomic(curve_csv(points), paths["csv"], follow_symlinks=follow_symlinks,
                          replaces=earlier_output(paths["csv"])),
        write_text_atomic(curve_markdown(points, title), paths["md"], follow_symlinks=follow_symlinks,
                          replaces=earlier_output(paths["md"])),
    ]
    figure = draw_curve(points, title)
    target = paths["png"].resolve() if follow_symlinks and paths["png"].is_symlink() else paths["png"]
    written.append(save_figure_atomic(figure, target, dpi=dpi))
    return written


# ---------------------------------------------------------------------------- scoring a run's folder


def planned_outputs(output: str | Path, steps: Iterable[int]) -> list[Path]:
    """Every file a folder run writes beside ``--output``: one result per step, then the curve."""
    return [step_path(output, step) for step in steps] + list(curve_paths(output).values())


def score_checkpoints(config, checkpoints: list[Checkpoint], *, control: bool = False,
                      after_each: Callable[[int, dict], None] | None = None) -> list[tuple[int, dict]]:
    """Score every checkpoint as an ordinary ``probing score`` run of ``config`` (a ScoreConfig; held-out when
    its ``select_on`` or a treebank with dev and test splits says so), in step order; ``control`` adds the
    random-init control of the first checkpoint's architecture as step 0. ``after_each(step, result)`` runs as
    each finishes (to write it, so that a long run keeps what it has done). Returns ``(step, result)`` pairs.
    """
    from probing.analyses.probe.heldout import score_with_selection
    from probing.model.loading import read_config

    for checkpoint in checkpoints:  # every config read before the first is scored: no step's files, then a refusal
        read_config(str(checkpoint.path), trust_remote_code=config.model.trust_remote_code)
    plan = [(0, config.replace(model=str(checkpoints[0].path), random_init=True))] if control else []
    plan += [(c.step, config.replace(model=str(c.path), random_init=False)) for c in checkpoints]
    results = []
    for step, step_config in plan:
        result = score_with_selection(step_config)
        result["config"]["training_step"] = step
        results.append((step, result))
        if after_each is not None:
            after_each(step, result)
    return results


def run_title(folder: str | Path, result: dict) -> str:
    """``RUN on TREEBANK`` for a curve's table and figure."""
    from probing.report.board import treebank_label

    return f"{Path(folder).name} on {treebank_label(result['treebank']['path'])}"
