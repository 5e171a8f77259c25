"""Tables, a figure and leaderboard rows from trees results (no torch: result files only).

Every number here is read from a result's ``trees``, ``selection`` and
``heldout`` blocks (see :mod:`probing.analyses.trees.accumulator`); nothing is
recomputed. Percentages with their 95% intervals; layers and heads counted
from 1 (``3-9`` is layer 3, head 9), as in every table of the project.

>>> cell({"accuracy": 0.5123, "interval": [0.5, 0.52]}, "3-9")
'51.2 [50.0, 52.0] 3-9'
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from probing.naming import (
    ARROWS,
    DIRECTIONS,
    head_name,
    heldout_title,
    percent,
    percent_with_interval,
    selection_sides,
)
from probing.report.board import Cell, Row, Table, leaderboard_position, rank_rows, result_label
from probing.results.outputs import Figures

METRICS = ("uas", "uuas")
DECODINGS = ("max", "mst")
PROBES = ("attn", "attn+vectors", "distances+vectors")
PROBE_DECODINGS = ("argmax", "mst")
BASELINES = ("right_branching", "left_branching")
SHORT = {"dep_to_head": "d>h", "head_to_dep": "h>d"}


CAUSAL_TREES_NOTE = ("later->earlier: a decoder's causal reading, each edge scored by its later word's attention to "
                     "the earlier one, whichever is the head (docs/trees.md); it says which words belong together, "
                     "not which is the head, so its UUAS is the number to read.")


def head_first_line(trees: dict) -> str:
    """What each classic direction of a decoder can reach on this treebank.

    >>> head_first_line({"words": 4, "causal": {"head_first": 1}})
    'head before its word: 25.0% of scored words (all dep->head can reach on a decoder; head->dep the other 75.0%)'
    """
    share = trees["causal"]["head_first"] / trees["words"] if trees["words"] else None
    return (f"head before its word: {percent(share)}% of scored words (all dep->head can reach on a decoder; "
            f"head->dep the other {percent(None if share is None else 1 - share)}%)")


def cell(measured: dict | None, label: str = "") -> str:
    """``accuracy [low, high] label`` in percent, or a dash."""
    if not measured or measured.get("accuracy") is None:
        return "-"
    text = percent_with_interval(measured["accuracy"], measured.get("interval"))
    return f"{text} {label}".rstrip()


def members_text(members: list[dict]) -> str:
    """Ensemble members as ``3-9 4-1`` (from 1)."""
    return " ".join(head_name(member["layer"], member["head"]) for member in members)


def _tabulate(rows, headers, align) -> str:
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt="simple", colalign=align, disable_numparse=True)


def header(result: dict) -> str:
    """One line: model, treebank, what was scored and skipped."""
    model, trees = result["model"], result["trees"]
    skipped = {**result["input"].get("skipped", {}), **trees["sentences"]["skipped"]}
    skipped_text = ", ".join(f"{count} {why.replace('_', ' ')}" for why, count in skipped.items() if count)
    name = model.get("name") or model["name_or_path"]
    return (f"{name} ({model['architecture']}, {trees['layers']}x{trees['heads']}"
            f"{', random init' if model.get('random_init') else ''}) on {Path(result['input']['path']).name}: "
            f"{trees['sentences']['scored']} sentences, {trees['words']} scored words"
            + (f" (skipped: {skipped_text})" if skipped_text else ""))


def heldout_tables(result: dict) -> str:
    """Every family of held-out numbers: chosen on the selection treebank, measured on this one."""
    heldout, selection = result["heldout"], result["selection"]
    made_on = selection["made_on"]
    chosen = (f"chosen on {Path(made_on['path']).name} ({made_on['sentences']} sentences, {made_on['words']} scored "
              f"words); {int(100 * heldout['level'])}% intervals from {heldout['replicates']} bootstrap replicates")
    parts = [header(result), heldout_title(heldout["level"], *selection_sides(made_on, result["input"])), chosen, ""]
    rows = []
    for key in ("best_heads", "causal_best_heads"):  # the classic directions, then a decoder's causal reading
        for decoding in DECODINGS:
            for metric in METRICS:
                entry = (heldout.get(key) or {}).get(decoding, {}).get(metric)
                if entry is None:
                    continue
                versus = entry.get("vs_right_branching") or {}
                rows.append([decoding.upper(), metric.upper(),
                             head_name(entry["layer"], entry["head"], entry["direction"]),
                             percent(entry["dev"]["accuracy"]), cell(entry),
                             percent_with_interval(versus.get("value"), versus.get("interval"), signed=True)])
    parts += ["Best single head as a tree (chosen on DEV)",
              _tabulate(rows, ["decoding", "metric", "head (from 1)", "DEV %", "TEST % [95%]", "vs right-branching"],
                        ("left", "left", "left", "right", "right", "right"))]
    if "causal_best_heads" in heldout:
        parts += [CAUSAL_TREES_NOTE, head_first_line(result["trees"])]
    parts.append("")
    rows = [[name.replace("_", "-"), cell(heldout["baselines"][name]["uas"]), cell(heldout["baselines"][name]["uuas"])]
            for name in BASELINES]
    parts += ["Baselines (same scored words)", _tabulate(rows, ["baseline", "UAS %", "UUAS %"], ("left", "right", "right")), ""]
    if heldout.get("ensembles"):
        rows = []
        for entry in heldout["ensembles"]:
            difference = entry["difference"]
            rows.append([entry["relation"], ARROWS[entry["direction"]], members_text(entry["members"]), entry["total"],
                         cell(entry), head_name(entry["single"]["layer"], entry["single"]["head"]), cell(entry["single"]),
                         percent_with_interval(difference["value"], difference["interval"], signed=True)])
        parts += ["Head ensembles per relation and direction (chosen on DEV; relation accuracy)",
                  _tabulate(rows, ["relation", "direction", "members (from 1)", "pairs", "ensemble % [95%]",
                                   "best single", "single % [95%]", "difference"],
                            ("left", "left", "left", "right", "right", "left", "right", "right")), ""]
        trees = heldout["ensemble_trees"]
        line = (f"Ensemble trees (mst over all classic ensembles, weighted by DEV accuracy): UAS {cell(trees['uas'])}, "
                f"UUAS {cell(trees['uuas'])}")
        parts.append(line)
        if "causal_ensemble_trees" in heldout:
            trees = heldout["causal_ensemble_trees"]
            parts.append(f"Ensemble trees, causal reading (mst over the later->earlier ensembles): UAS "
                         f"{cell(trees['uas'])}, UUAS {cell(trees['uuas'])}")
        parts.append("")
    if heldout.get("probes"):
        rows = []
        for name, entry in heldout["probes"].items():
            for decoding in PROBE_DECODINGS:
                rows.append([name, decoding, cell(entry[decoding]["uas"]), cell(entry[decoding]["uuas"])])
        vectors = selection.get("word_vectors") or {}
        source = "the model's input embeddings" if vectors.get("source") == "input_embeddings" else vectors.get("file")
        parts += [f"Attention probes (trained on DEV; word vectors: {source})",
                  _tabulate(rows, ["probe", "decoding", "UAS % [95%]", "UUAS % [95%]"], ("left", "left", "right", "right"))]
        if "distances+vectors" in heldout["probes"]:
            parts.append("distances+vectors reads no attention (word vectors and distance only): the baseline of "
                         "attn+vectors.")
        parts.append("")
    return "\n".join(parts).rstrip()


def in_sample_tables(result: dict) -> str:
    """Chosen and reported on the same treebank: best heads, baselines, and what was chosen here."""
    trees = result["trees"]
    words = trees["words"]
    parts = [header(result), "in-sample: every number is chosen and measured on this treebank (optimistic)", ""]
    rows = []
    for block in (trees["decodings"], trees.get("causal") or {}):  # classic, then a decoder's causal reading
        for decoding in DECODINGS:
            for metric in METRICS:
                best = (block.get(decoding) or {}).get(f"best_{metric}")
                if best is not None:
                    rows.append([decoding.upper(), metric.upper(),
                                 head_name(best["layer"], best["head"], best["direction"]),
                                 percent(best["accuracy"]), best["ties"]])
    parts += ["Best single head as a tree", _tabulate(rows, ["decoding", "metric", "head (from 1)", "%", "ties"],
                                                       ("left", "left", "left", "right", "right"))]
    if "causal" in trees:
        parts += [CAUSAL_TREES_NOTE, head_first_line(trees)]
    parts.append("")
    rows = [[name.replace("_", "-"), percent(trees["baselines"][name]["uas"] / words if words else None),
             percent(trees["baselines"][name]["uuas"] / words if words else None)] for name in BASELINES]
    parts += ["Baselines", _tabulate(rows, ["baseline", "UAS %", "UUAS %"], ("left", "right", "right")), ""]
    selection = result.get("selection")
    if selection is None:
        parts.append("No ensembles or probes: a shard chooses nothing (merge the shards, or select on a whole DEV run).")
        return "\n".join(parts)
    rows = [[e["relation"], ARROWS[e["direction"]], members_text(e["members"]), e["total"],
             percent(e["correct"] / e["total"] if e["total"] else None),
             percent(e["single_correct"] / e["total"] if e["total"] else None)] for e in selection["ensembles"]]
    parts += ["Head ensembles chosen here (relation accuracy on this treebank)",
              _tabulate(rows, ["relation", "direction", "members (from 1)", "pairs", "ensemble %", "best single %"],
                        ("left", "left", "left", "right", "right", "right")), ""]
    if selection.get("probes"):
        rows = [[name, entry["training"]["epochs"], entry["training"]["parameters"],
                 f"{entry['training']['mean_loss_per_epoch'][-1]:.3f}"] for name, entry in selection["probes"].items()]
        parts += ["Attention probes trained here", _tabulate(rows, ["probe", "epochs", "parameters", "final loss"],
                                                              ("left", "right", "right", "right")), ""]
    parts.append("Report them on another treebank: probing trees --select-on THIS.json --treebank TEST")
    return "\n".join(parts)


def tables(result: dict) -> str:
    return heldout_tables(result) if "heldout" in result else in_sample_tables(result)


# ---------------------------------------------------------------------------- the figure


def uas_grids(result: dict, decoding: str = "mst", metric: str = "uas") -> dict[str, np.ndarray]:
    """Per direction (and a decoder's ``causal`` reading), the [layer, head] accuracy of every head as a tree on
    this result's treebank."""
    trees = result["trees"]
    words = max(trees["words"], 1)
    grids = {direction: np.asarray(trees["decodings"][decoding][metric][direction], dtype=float) / words
             for direction in DIRECTIONS}
    if "causal" in trees:  # a decoder: its causal reading beside the classic directions
        grids["causal"] = np.asarray(trees["causal"][decoding][metric], dtype=float) / words
    return grids


def uas_figure(result: dict, path, decoding: str = "mst") -> Path:
    """UAS of every layer x head as a tree (``mst``), one panel per direction (a decoder's causal reading a
    third); the selection's ensemble members of that direction are outlined."""
    from probing.atomic import save_figure_atomic
    from probing.report.drawing import layer_head_heatmap, new_figure

    grids = uas_grids(result, decoding)
    selection = result.get("selection") or {}
    layers, heads = next(iter(grids.values())).shape
    figure = new_figure(len(grids) * (1.2 + 0.42 * heads), 1.6 + 0.42 * layers, layout="constrained")
    axes = figure.subplots(1, len(grids))
    top = max(float(grid.max()) for grid in grids.values())
    image = None
    for axis, (direction, grid) in zip(axes, grids.items()):
        marks = sorted({(m["layer"], m["head"]) for e in selection.get("ensembles") or []
                        if e["direction"] == direction for m in e["members"]})
        image = layer_head_heatmap(axis, grid, vmin=0.0, vmax=max(top, 1e-9), scale=100, marks=marks,
                                   annotate=heads <= 16)
        axis.set_title(f"{ARROWS[direction]}", fontsize=9)
    figure.colorbar(image, ax=list(axes), shrink=0.8, label=f"{decoding.upper()} UAS %")
    name = result["model"].get("name") or Path(result["model"]["name_or_path"]).name
    where = Path(result["input"]["path"]).name
    figure.suptitle(f"{name}: each head as a tree ({decoding.upper()}, gold root) on {where}; "
                    "outlined: ensemble members", fontsize=9)
    return save_figure_atomic(figure, path)


# ---------------------------------------------------------------------------- the leaderboard's table

TABLE_COLUMNS = ["MAX UAS", "MST UAS", "ensemble trees UAS", "attn UAS (argmax)", "attn+vectors UAS (argmax)",
                 "distances+vectors UAS (argmax)"]
"""The probes' columns say their decoding: docs/trees.md and the README quote them MST-decoded too."""


@leaderboard_position(20)
def leaderboard_tables(results: list[dict]) -> list[Table]:
    """Whole trees' part of a leaderboard (registered as the analysis's ``tables``)."""
    return [leaderboard_table(results)]


def leaderboard_table(results: list[dict]) -> Table:
    """The trees table of a leaderboard (torch-free): per model the
    held-out UAS of the best single head (MAX,
    MST), of the ensemble trees and of the three probes (argmax), with intervals; one right-branching row
    per treebank. Rows are grouped by treebank and ranked by MST UAS; in-sample results are marked.
    """
    groups: dict[str, list] = {}
    seen_baselines = set()
    levels = set()
    for result in results:
        treebank = Path(result["input"]["path"]).stem
        heldout = result.get("heldout")
        label = "held-out" if heldout else "in-sample"
        row = Row(result_label(result), "model", label, treebank)
        if heldout:
            levels.add(heldout["level"])
            for column, decoding in (("MAX UAS", "max"), ("MST UAS", "mst")):
                entry = heldout["best_heads"][decoding]["uas"]
                row.cells[column] = _table_cell(entry, head=entry)
            row.cells["ensemble trees UAS"] = _table_cell((heldout.get("ensemble_trees") or {}).get("uas"))
            for probe_name in PROBES:
                entry = (heldout.get("probes") or {}).get(probe_name)
                row.cells[f"{probe_name} UAS (argmax)"] = _table_cell(entry and entry["argmax"]["uas"])
            baseline = heldout["baselines"]["right_branching"]["uas"]
        else:
            trees = result["trees"]
            for column, decoding in (("MAX UAS", "max"), ("MST UAS", "mst")):
                best = trees["decodings"][decoding]["best_uas"]
                row.cells[column] = None if best is None else Cell(
                    accuracy=best["accuracy"], head=head_name(best["layer"], best["head"]),
                    direction=best["direction"], pairs=trees["words"], ties=best["ties"])
            words = trees["words"]
            correct = trees["baselines"]["right_branching"]["uas"]
            baseline = {"correct": correct, "total": words, "accuracy": correct / words if words else None,
                        "interval": None}
        groups.setdefault(treebank, []).append(row)
        causal = causal_row(result, treebank)
        if causal is not None:
            groups[treebank].append(causal)
        key = (treebank, baseline["correct"], baseline["total"], label)
        if key not in seen_baselines:  # every model of one treebank scores the same words
            seen_baselines.add(key)
            line = Row("right-branching", "baseline", label, treebank)
            for column in ("MAX UAS", "MST UAS", "ensemble trees UAS"):
                line.cells[column] = _table_cell(baseline)
            groups[treebank].append(line)
    rows = []
    for group in groups.values():
        rows += rank_rows(group, ["MST UAS"])
    level = min(levels) if levels else 0.95
    notes = [
        (f"UAS % [{100 * level:.0f}% Poisson-bootstrap interval over sentences] on the report treebank; best heads, "
        "ensembles and probes chosen or trained on its dev split. Heads as layer-head counted from 1 (h>d: the head "
        "attends to the dependent)."),
        ("Scored words: all but the gold root and punctuation. MAX: each word's strongest attention; MST: maximum "
        "spanning tree rooted at the gold root; probes decoded by argmax per word (Clark et al.). "
        "distances+vectors reads no attention. Rows are ranked by MST UAS."),
        "Right-branching (each word's head is the next word) is shown under the columns that need no training.",
        *([LEADERBOARD_CAUSAL_NOTE] if any(row.model.endswith(CAUSAL_SUFFIX) for row in rows) else []),
        "Clark et al. 2019 (BERT-base, PTB/SD): right-branching 26, distances+GloVe 58, attn 61, attn+GloVe 77 UAS.",
    ]
    return Table(list(TABLE_COLUMNS), rows, notes, level=level, key="trees", mean=False,
                 title="Whole trees from attention: UAS")


CAUSAL_SUFFIX = " (causal reading)"
LEADERBOARD_CAUSAL_NOTE = ("(causal reading): a decoder's second row, its best single heads and ensemble trees with "
                           "each edge scored by the later word's attention to the earlier one, whichever is the head "
                           "(later>earlier); "
                           "each classic direction of a decoder sees only one side of every edge. Encoders have no "
                           "such row.")


def causal_row(result: dict, treebank: str) -> Row | None:
    """A decoder's second row: the best single heads (MAX, MST UAS) and, held out, the ensemble trees in the
    causal reading; None for an encoder or a result made before the causal reading existed."""
    heldout = result.get("heldout")
    if heldout:
        if "causal_best_heads" not in heldout:
            return None
        row = Row(result_label(result) + CAUSAL_SUFFIX, "model", "held-out", treebank)
        for column, decoding in (("MAX UAS", "max"), ("MST UAS", "mst")):
            entry = heldout["causal_best_heads"][decoding]["uas"]
            row.cells[column] = _table_cell(entry, head=entry)
        row.cells["ensemble trees UAS"] = _table_cell((heldout.get("causal_ensemble_trees") or {}).get("uas"))
        return row
    causal = result["trees"].get("causal")
    if causal is None:
        return None
    row = Row(result_label(result) + CAUSAL_SUFFIX, "model", "in-sample", treebank)
    for column, decoding in (("MAX UAS", "max"), ("MST UAS", "mst")):
        best = causal[decoding]["best_uas"]
        row.cells[column] = None if best is None else Cell(
            accuracy=best["accuracy"], head=head_name(best["layer"], best["head"]), direction=best["direction"],
            pairs=result["trees"]["words"], ties=best["ties"])
    return row


def _table_cell(entry: dict | None, head: dict | None = None) -> Cell | None:
    if not entry or entry.get("accuracy") is None:
        return None
    return Cell(accuracy=entry["accuracy"], interval=entry.get("interval"),
                      head="" if head is None else head_name(head["layer"], head["head"]),
                      direction=None if head is None else head["direction"], pairs=entry.get("total"))


def figures(options) -> Figures:
    """What a trees result has beside it: T-uas, every head's MST UAS."""
    return Figures(("uas",), lambda result, path_of: [uas_figure(result, path_of("uas"))])
