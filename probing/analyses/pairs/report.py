"""The terminal table of a minimal-pairs result (torch-free).

>>> result = {"overall": {"paradigms": 1, "pairs": 2, "accuracy": 0.5, "interval": [0.0, 1.0]},
...           "fields": {"syntax": {"paradigms": 1, "pairs": 2, "accuracy": 0.5, "interval": None}},
...           "paradigms": {"a": {"field": "syntax", "pairs": 2, "accuracy": 0.5, "interval": None}}}
>>> print(pairs_table(result).splitlines()[-1])
overall (mean of 1 paradigms)  -                2  50.0 [0.0, 100.0]
"""

from __future__ import annotations

from tabulate import tabulate

from probing.naming import percent_with_interval

PUBLISHED = {"GPT-2": 0.830, "LSTM": 0.698, "5-gram": 0.612}
"""BLiMP's own summary (Warstadt et al. 2020): the mean of the 67 paradigm accuracies of each model, on all
1,000 pairs of every paradigm."""


def pairs_table(result: dict) -> str:
    """One row per paradigm, then per field, then the overall mean of the paradigm accuracies."""
    rows = [[uid, entry["field"], entry["pairs"], percent_with_interval(entry["accuracy"], entry["interval"])]
            for uid, entry in result["paradigms"].items()]
    rows += [[f"field: {name}", f"{entry['paradigms']} paradigms", entry["pairs"],
              percent_with_interval(entry["accuracy"], entry["interval"])] for name, entry in result["fields"].items()]
    overall = result["overall"]
    rows.append([f"overall (mean of {overall['paradigms']} paradigms)", "-", overall["pairs"],
                 percent_with_interval(overall["accuracy"], overall["interval"])])
    return tabulate(rows, headers=["paradigm", "field", "pairs", "acc % [95% CI]"], tablefmt="plain",
                    colalign=("left", "left", "right", "right"), disable_numparse=True)


def leaderboard_tables(results: list[dict]) -> list:
    """BLiMP's part of a leaderboard (registered as the analysis's ``tables``)."""
    return [leaderboard_table(results)]


def leaderboard_table(results: list[dict]):
    """One row per intact causal LM: BLiMP overall (the mean of paradigm accuracies) and each field, with
    intervals; then BLiMP's published overall figures, quoted, for comparison."""
    from probing.report.board import Cell, Row, Table, result_label

    fields: list[str] = []
    for data in results:
        fields += [name for name in data["pairs"]["fields"] if name not in fields]
    columns = ["overall"] + fields
    rows = []
    for data in results:
        block, limit = data["pairs"], data["config"].get("limit")
        treebank = f"BLiMP, {block['overall']['paradigms']} paradigms" + (f", first {limit} pairs each" if limit else "")
        row = Row(result_label(data), "model", "all pairs", treebank)
        row.cells["overall"] = Cell(accuracy=block["overall"]["accuracy"], interval=block["overall"]["interval"],
                                    pairs=block["overall"]["pairs"])
        for name in fields:
            entry = block["fields"].get(name)
            row.cells[name] = None if entry is None else Cell(accuracy=entry["accuracy"], interval=entry["interval"],
                                                              pairs=entry["pairs"])
        rows.append(row)
    for model, accuracy in PUBLISHED.items():
        row = Row(f"{model} [W20]", "reference", "all pairs", "BLiMP, 67 paradigms, 1,000 pairs each", rank="ref")
        row.cells["overall"] = Cell(accuracy=accuracy)
        rows.append(row)
    notes = [
        "overall: the mean of the paradigm accuracies (BLiMP's convention); a field: the share of its pairs right. "
        "A pair is right when log p(good) > log p(bad) (a tie is wrong), each sentence after one BOS token (EOS "
        "without one), as docs/minimal-pairs.md says.",
        "[low, high]: 95% percentile bootstrap interval, pairs resampled within each paradigm.",
        "A row scored with a limit (first N pairs of each paradigm) is not the full benchmark: its figures are "
        "estimates of it, with the interval that so few pairs allow.",
        "[W20] Warstadt et al. 2020, BLiMP (TACL), the repository's summary: the mean of the 67 paradigms over all "
        "1,000 pairs each. How its scripts began a sentence (a context token or none) may differ from our rule.",
        "Masked LMs have no minimal-pair score and no row here.",
    ]
    return Table(columns, rows, notes, title="BLiMP minimal pairs: intact causal LMs", key="pairs", mean=False,
                 marks_best=False)


class PairsAccumulator:
    """A minimal-pairs result has no running counts to merge: one run scores every pair it reports."""

    @classmethod
    def from_result(cls, result: dict):
        from probing.errors import ProbingError

        raise ProbingError("minimal-pairs results are not merged: score the paradigms in one run (probing pairs)")
