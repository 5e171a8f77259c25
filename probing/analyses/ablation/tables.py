"""``probing ablate``'s terminal tables: per part, the conditions whose removal helps most first."""

from __future__ import annotations

from probing.naming import interval_text


def ranked(result: dict, part: str) -> list[dict]:
    """The conditions for one part, those whose removal helps most first (the intact model left out)."""
    rows = [c for c in result["conditions"][1:] if c["parts"][part]["improvement"] is not None]
    return sorted(rows, key=lambda condition: -condition["parts"][part]["improvement"])


def ablation_tables(result: dict, top: int | None = None) -> str:
    """One table per part (the loss, or each relation), sorted so that helpful removals come first."""
    from tabulate import tabulate

    scale, unit = (100.0, " %") if result["metric"]["higher_is_better"] else (1.0, "")
    # a change's interval: signed percentage points, or a loss's signed change to four decimals
    interval_scale, decimals = ("points", None) if scale == 100.0 else ("nats", 4)
    blocks = []
    for part, base in result["baseline"].items():
        rows = ranked(result, part)
        shown = rows if top is None else rows[:top]
        table = []
        for condition in shown:
            entry = condition["parts"][part]
            table.append(
                [condition["label"], _fmt(entry["value"], scale), _fmt(entry["change"], scale, signed=True),
                 interval_text(entry["interval"], interval_scale, decimals=decimals),
                 entry["verdict"]] + ([entry["detail"] or "-"] if base["detail"] else [])
            )
        headers = ["disabled (layer-head)", f"{part}{unit}", "change", "95% interval", "removal"]
        if base["detail"]:
            headers.append("best head after")
        title = f"{part}: {_fmt(base['value'], scale)}{unit} with every head"
        if base["detail"]:
            title += f" (best head {base['detail']})"
        more = f"\n({len(rows) - len(shown)} more conditions in the JSON)" if len(shown) < len(rows) else ""
        blocks.append(title + "\n" + tabulate(table, headers=headers, tablefmt="simple", disable_numparse=True) + more)
    return "\n\n".join(blocks)


def _fmt(value: float | None, scale: float, signed: bool = False) -> str:
    if value is None:
        return "-"
    digits = 1 if scale == 100.0 else 4
    return f"{scale * value:{'+' if signed else ''}.{digits}f}"


def versus_table(result: dict) -> str:
    """The terminal table of a ``--chosen`` run's versus block, tested as a board tests its cells
    (probing.analyses.ablation.family): per chosen set and metric part, the effect [its 95% interval], the random
    sets' mean with the spread of their draws, p with what became of it (Holm over the run's primary cells, or
    untestable at this size by Tarone's rule, or exploratory), the threshold of a tested cell (the effect it must
    exceed to pass Holm here) and the short sets; ``no data`` where a part had no unit. Under it, what they mean."""
    from probing.analyses.ablation.family import TESTED, FamilyCell, declare, family_note, is_primary, p_text
    from probing.analyses.ablation.versus import effect_scale, threshold_effect, versus_effects
    from probing.naming import scaled, spread_text

    block = result["versus"]
    scale = effect_scale(block["higher_is_better"])
    rows = [(part, key, entry) for part, sets in block["parts"].items() for key, entry in sets.items()]
    family = declare([FamilyCell(f"{key} {part}", entry["p_value"],
                                 entry["random"]["draws"] if entry["random"] else None,
                                 is_primary(block["metric"], part, key.rpartition("@")[0])) for part, key, entry in rows])
    effects = versus_effects(result) if family.m else {}

    def number(value) -> str:
        return "no data" if value is None else scaled(value, scale)

    width = max([10, *(len(part) for part in block["parts"])])
    unit = "points" if scale == "points" else "nats"
    lines = [f"{'set':<10} {'part':<{width}} {f'chosen effect, {unit} [95%]':<28} "
             f"{'random mean, draws 2.5-97.5%':<40} {'p':<52} {'threshold':<11} short"]
    for (part, key, entry), cell in zip(rows, family.cells):
        interval = interval_text(entry["chosen"]["interval"], scale, missing="no data", absent="[no data]")
        chosen = f"{number(entry['chosen']['effect'])} {interval}"
        spread = entry["random"]
        random = "no data" if spread is None else f"{number(spread['mean'])}, {spread_text(spread['percentiles'], scale)}"
        p = "-" if cell.p is None else p_text(cell, exact=bool(entry.get("exact")))
        threshold = "-"
        if cell.status == TESTED:
            value = threshold_effect(effects[part][key]["random"], block["higher_is_better"], family.m)
            threshold = "unreachable" if value is None else scaled(value, scale)
        elif cell.primary and cell.p is not None:
            threshold = "unreachable"
        lines.append(f"{key:<10} {part:<{width}} {chosen:<28} {random:<40} {p:<52} {threshold:<11} "
                     f"{entry['short_sets']}")
    match = block.get("match", "layer")
    notes = [
        "p: the permutation p-value, (1 + random sets at least as harmful as the chosen set) / (1 + random sets), "
        f"one-sided; the random sets {match}-matched (exact: every set of the space was used once).",
        family_note(family, where="this run"),
        "threshold: the effect the chosen set must exceed for its adjusted p to reach 0.05 in this run (the random "
        "effect at rank floor((1 + draws) x 0.05 / m) from the harmful end); unreachable for an untestable cell.",
        "short: how many random sets have fewer heads than the chosen set, a layer (or band) holding fewer heads "
        "outside the chosen set than the chosen set takes from it (0: every random set matches it head for head).",
    ]
    return "\n".join(lines + [""] + notes)
