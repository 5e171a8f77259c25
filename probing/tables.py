"""Plain-text tables made from result files (never imports torch).

Layers and heads are counted from 1 in every table, as in the paper
("8-10" is layer 8, head 10); the JSON counts from 0.

>>> head_label({"layer": 7, "head": 9, "direction": "dep_to_head"})
'8-10 dep->head'
"""

from __future__ import annotations

from tabulate import tabulate

_ARROWS = {"dep_to_head": "dep->head", "head_to_dep": "head->dep"}


def head_label(best: dict | None) -> str:
    """``layer-head direction`` counted from 1, or a dash when there is none."""
    if best is None:
        return "-"
    return f"{best['layer'] + 1}-{best['head'] + 1} {_ARROWS[best['direction']]}"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def score_table(result: dict, tablefmt: str = "simple") -> str:
    """One row per relation: pairs, best head and accuracy, best offset and accuracy."""
    rows = []
    for name, entry in result["relations"].items():
        best, baseline = entry["best"], entry["best_baseline"]
        rows.append(
            [
                name,
                entry["total"],
                head_label(best),
                percent(best and best["accuracy"]),
                "-" if baseline is None else f"{baseline['offset']:+d}",
                percent(baseline and baseline["accuracy"]),
            ]
        )
    headers = ["relation", "pairs", "best head (layer-head, from 1)", "acc %", "best offset", "offset acc %"]
    return tabulate(
        rows,
        headers=headers,
        tablefmt=tablefmt,
        colalign=("left", "right", "left", "right", "right", "right"),
        disable_numparse=True,
    )


def run_header(result: dict) -> str:
    """One line that says what was scored on what."""
    model, treebank = result["model"], result["treebank"]
    skipped = ", ".join(f"{count} {why.replace('_', ' ')}" for why, count in treebank["skipped"].items() if count)
    return (
        f"{model['name_or_path']} ({model['architecture']}, {model['num_layers']}x{model['num_heads']}"
        f"{', random init' if model.get('random_init') else ''}) on {treebank['path']}: "
        f"{treebank['sentences_scored']}/{treebank['sentences_total']} sentences, {treebank['words_scored']} words"
        + (f" (skipped: {skipped})" if skipped else "")
    )
