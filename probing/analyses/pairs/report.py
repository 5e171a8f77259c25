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
