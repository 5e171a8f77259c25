"""The leaderboard table of ``importance`` results: syntax against harm, and the chosen head's rank (no torch).

One row per model and relation, gathered from every importance result of that model (one per metric: lm, probe,
minimal-pairs, ...); per metric, the row's **primary** part only (causal.md, section 4: the loss; BLiMP overall;
the probe on the row's own relation), in two columns: rho [95%] with its p and Holm's adjustment, and the chosen
head's harm [95%] with its exact rank in its layer band and in the model. Every part of every metric is in the
result files themselves.

>>> primary_part("probe", ["det", "nsubj", "all"], "nsubj"), primary_part("minimal-pairs", ["overall", "x"], "det")
('nsubj', 'overall')
"""

from __future__ import annotations

from probing.errors import ProbingError


def primary_part(metric: str, parts: list[str], relation: str) -> str | None:
    """The part of ``metric`` (its --metric name) that is a row's primary cell for ``relation``: the probe on the
    relation itself, BLiMP overall, or a loss's (any metric's) only part; None when the metric has no such part."""
    if metric == "probe":
        return relation if relation in parts else None
    if metric == "minimal-pairs":
        return "overall" if "overall" in parts else None
    return parts[0] if len(parts) == 1 else None


def chosen_text(entry: dict, part: dict) -> str:
    """``3-9: =1 of 36 in layers 2-4 (p=0.056), 1 of 72 in the model (p=0.014)``: the chosen head (from 1) and
    its ranks by harm, ``=`` where other heads are as harmful (they count in p).

    >>> band = {"layers": [1, 3], "heads": 36, "rank": 1, "ties": 1, "p_value": 2 / 36}
    >>> model = {**band, "heads": 72, "ties": 0, "p_value": 1 / 72}
    >>> chosen_text({"head": {"layer": 2, "head": 8}}, {"band": band, "model": model})
    '3-9: =1 of 36 in layers 2-4 (p=0.056), 1 of 72 in the model (p=0.014)'
    """
    from probing.naming import head_name, p_value_text

    def rank(entry: dict) -> str:
        return f"{'=' if entry['ties'] else ''}{entry['rank']} of {entry['heads']}"

    band, model = part["band"], part["model"]
    low, high = (layer + 1 for layer in band["layers"])
    return (f"{head_name(entry['head']['layer'], entry['head']['head'])}: {rank(band)} in layers {low}-{high} "
            f"(p={p_value_text(band['p_value'])}), {rank(model)} in the model (p={p_value_text(model['p_value'])})")


NO_RHO = "no rho: every accuracy or harm equal, or no unit"
"""What a rho cell says when there is none to compute."""


def leaderboard_tables(results: list[dict]) -> list:
    """The syntax-against-harm table of ``importance`` results (registered as the analysis's ``tables``)."""
    from probing.analyses.ablation.board import column_of, units_text
    from probing.analyses.ablation.versus import effect_scale
    from probing.report.board import Cell, Row, Table, result_label

    columns: list[str] = []
    rows: dict[tuple[str, str], Row] = {}
    measures: dict[str, str | None] = {}
    most = max((result["permutations"]["count"] for result in results), default=0)  # the least p: 1 / (1 + most)
    for result in results:
        metric, model = result["config"]["metric"], result_label(result)
        for relation, tests in result["syntax"].items():
            part = primary_part(metric, result["metric"]["parts"], relation)
            if part is None:
                continue
            name = column_of(metric, part, relation)
            row = rows.setdefault((model, relation), Row(f"{model}, {relation}", "model", "DEV accuracy", ""))
            if f"{name}: rho" in row.cells:
                raise ProbingError(f"two results give {model}'s {relation} on {name}; give one", source="RESULT")
            units = units_text(result)
            if units not in row.treebank.split("; "):
                row.treebank = "; ".join(filter(None, [row.treebank, units]))
            test, chosen = tests[part], result["chosen"][relation]
            row.cells[f"{name}: rho"] = Cell(accuracy=test["rho"], interval=test["interval"], scale="coefficient",
                                             p_not_better=test["p_value"], text=NO_RHO if test["rho"] is None else "")
            ranked = chosen["parts"][part]
            row.cells[f"{name}: chosen head"] = None if ranked is None else Cell(
                accuracy=ranked["effect"], interval=ranked["interval"],
                scale=effect_scale(result["metric"]["higher_is_better"]), head=chosen_text(chosen, ranked))
            for suffix, measure in (("rho", None), ("chosen head", _measure(name))):
                if f"{name}: {suffix}" not in columns:
                    columns.append(f"{name}: {suffix}")
                    measures[f"{name}: {suffix}"] = measure
    ordered = [rows[key] for key in sorted(rows, key=lambda key: (key[0], key[1] == "all", key[1]))]
    tested = tested_rhos([row.cells[column] for row in ordered for column in columns
                          if column.endswith(": rho") and row.cells.get(column) is not None], most)
    return [Table(columns, ordered, notes(tested, most), title="Syntax against harm: every head disabled alone",
                  key="importance", mean=False, marks_best=False, effects=True, measures=measures)]


def tested_rhos(cells: list, permutations: int) -> int:
    """Adjust the rho cells' p-values together, by the causal board's family rules (every rho is its row's primary
    cell; Tarone's rule leaves out none that 10,000 permutations let reach 0.05 / m'), and write each cell's p as
    that board writes it: ``p=0.014, Holm 0.041: significant``. Returns Holm's m."""
    from probing.analyses.ablation.family import FamilyCell, declare, p_text

    family = declare([FamilyCell(str(i), cell.p_not_better, permutations) for i, cell in enumerate(cells)])
    for cell, tested in zip(cells, family.cells):
        cell.p_adjusted = tested.adjusted
        if tested.p is not None:
            cell.head = p_text(tested)
    return family.m


def _measure(column: str) -> str:
    """The measure a chosen head's effects are in, for the board's minimum detectable effect."""
    return "loss" if column.endswith(" loss") else "BLiMP accuracy" if column.startswith("BLiMP") else "probe accuracy"


def notes(tested: int, permutations: int) -> list[str]:
    """What the table's columns mean, and how significant a rho can be on it (Holm over its m tests, the least p
    a test can reach 1 / (1 + the most ``permutations`` any made)).

    >>> notes(2, 10_000)[-1].split(". ")[-1]
    'After Holm over m = 2 tests the least any can reach is 0.0002: a row can be called significant.'
    """
    from probing.naming import p_value_text
    from probing.stats.multiplicity import LEVEL

    floor = 1 / (1 + permutations)
    reach = min(1.0, tested * floor)
    return [
        "Each head of the model is disabled alone (ablate --each-head: its attention made uniform), one pass per "
        "head from its layer up; effect = metric(disabled) - metric(intact) on the same units, harm = the effect in "
        "the metric's harmful direction (a drop of an accuracy, a rise of a loss).",
        "rho: Spearman's rho over every head between its DEV accuracy on the row's relation (its better direction; "
        "a decoder's later-to-earlier one competes) and its harm; [95% bootstrap interval over units: rho of each "
        "replicate's harms, the accuracies fixed]. p: the DEV accuracies permuted among the heads of each layer "
        "(depth, which can both track syntax and matter, is the same in every permutation), p = (1 + permutations "
        "with rho at least the observed one) / (1 + permutations): one-sided, syntactic heads more harmful.",
        "chosen head: the relation's top head on DEV (the one ablate --chosen REL --k 1 disables), its effect "
        "[95% paired bootstrap interval], and its rank by harm among the heads of its layer band (layers L-1 to "
        "L+1) and of the model, with the exact p = (1 + other heads at least as harmful) / heads compared. These ranks "
        "are exploratory: not in Holm's family (the least p they allow is 1 / heads compared, 1/12 for a band of "
        "three 4-head layers).",
        "Columns per metric: its primary part only (the loss; BLiMP overall; the probe on the row's own relation: "
        "the best remaining head's accuracy). Losses in nats (a rise hurts), accuracies in percentage points (a drop "
        "hurts); rho is a coefficient from -1 to 1.",
        f"Holm: this board makes m = {tested} tests, one per rho with a p-value, each adjusted for all of them by "
        f"Holm's step-down rule; a row is called significant (at {LEVEL:g}) by its adjusted p only. With "
        f"{permutations:,} permutations the least p a test can reach is {p_value_text(floor)}. After Holm "
        f"over m = {tested} tests the least any can reach is {p_value_text(reach)}: "
        + ("a row can be called significant." if reach <= LEVEL else "no row can be called significant."),
    ]
