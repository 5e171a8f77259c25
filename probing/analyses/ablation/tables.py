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
