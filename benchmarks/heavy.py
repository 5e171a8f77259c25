"""Affordable heavy runs: the ablation grid against its floor, minimal pairs against minicons (issue 43).

    python -m benchmarks.heavy                                  # both, printed
    python -m benchmarks.heavy --output benchmarks/RESULTS.md   # both, their section of the report replaced
    python -m benchmarks.heavy --only grid --repeats 1          # one of them, once (a quick look)

The section it writes into a report sits between two HTML comments (``<!-- heavy runs -->`` and
``<!-- /heavy runs -->``) and replaces the one already there (else it is added at the end), so that the rest
of the report, which ``benchmarks/run.py --full`` makes, is kept. Times are CPU seconds on one torch thread
(benchmarks.common.one_thread), with wall seconds beside them: on a machine others share, CPU time is the work
done, while wall time also counts what the other processes take.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import sys

from benchmarks.common import machine, machine_line, verdict
from benchmarks.grid import GRID_TARGET, GRIDS, measure_grid
from benchmarks.pairs import PAIRS_TARGET, PairsSpec, measure_pairs

BEGIN, END = "<!-- heavy runs -->", "<!-- /heavy runs -->"


def render_grid(entries: list[dict]) -> list[str]:
    lines = ["### The ablation grid against its floor", "",
             "| model | metric | conditions (mean layers rerun of its layers) | sentences | grid | floor, stacked as "
             "the run stacks | floor, one pass each | grid / floor | target |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for entry in entries:

        def cell(name: str, entry=entry) -> str:
            return f"{entry['cpu'].median(name):.2f} s ({entry['wall'].median(name):.2f} s wall)"

        lines.append(f"| {entry['name']} | {entry['grid'].metric} | {entry['conditions']} ({entry['mean_layers']:.1f} "
                     f"of {entry['layers']}) | {entry['units']} | {cell('grid')} | {cell('floor')} | "
                     f"{cell('floor, one pass each')} | {entry['ratio']:.3f} ({entry['wall_ratio']:.3f} wall) | "
                     f"{verdict(entry['ratio'], GRID_TARGET)} |")
    lines += ["", "Each grid is " + "; ".join(f"`{entry['grid'].command()}`" for entry in entries) + ": the chosen "
              "set of each relation and k, each with its matched random sets, and the intact model. The floor "
              "is, per batch, one whole forward pass of the intact model plus one pass per condition of the layers "
              "from its lowest disabled layer up (those below reused from the intact pass, as the run reuses them), "
              "nothing disabled and nothing measured: the last hidden state and the LM head's logits at the "
              "positions the loss reads for `--metric lm`, every layer's attention up to the last one for "
              "`--metric probe`. The ratio is taken over the lower of the two "
              "floors (conditions stacked in one pass as the run stacks them, or one pass each), the median of "
              f"{len(entries[0]['cpu'].runs['grid'])} paired repeats.", ""]
    return lines


def render_pairs(entry: dict) -> list[str]:
    spec, cpu, wall = entry["spec"], entry["cpu"], entry["wall"]
    return [
        "### Minimal pairs against minicons", "",
        f"{entry['name']}, {entry['pairs']} BLiMP pairs (the first {spec.limit} of {', '.join(spec.paradigms)}), "
        f"{spec.batch_size} sentences a batch, each scorer loading the checkpoint as its user would (probing with "
        f"eager attention, minicons {entry['minicons_version']} with transformers' default):", "",
        "| scorer | seconds | pairs/s | accuracy |", "| --- | --- | --- | --- |",
        *(f"| {name} | {cpu.median(name):.2f} s ({wall.median(name):.2f} s wall) | {entry['speed'][name]:.1f} | "
          f"{100 * entry['accuracy'][name]:.1f} |" for name in ("probing", "minicons")), "",
        f"Decisions: {entry['agree']} of {entry['compared']} pairs the same ({entry['ties']} tied by either scorer, "
        f"not compared); the sentences read as the same ids: {entry['same_ids']} of {entry['sentences']}; the "
        f"largest difference of a sentence's log-probability: {entry['largest_difference']:.2e} nats. probing's "
        f"throughput over minicons': {entry['ratio']:.2f}, {verdict(entry['ratio'], PAIRS_TARGET, at_most=False)}.",
        ""]


def render(grids: list[dict], pairs: dict | None, command: str, missing: list[str]) -> str:
    info = machine()
    lines = [BEGIN, "## Affordable heavy runs", "",
             f"Made by `{command}` on {_dt.date.today().isoformat()}. Machine: {machine_line(info)}; load average "
             f"(1, 5, 15 min) at the end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}. CPU seconds on one torch "
             "thread, wall seconds beside them (benchmarks/heavy.py says why).", ""]
    if grids:
        lines += render_grid(grids)
    if pairs:
        lines += render_pairs(pairs)
    lines += [f"Not measured: {item}." for item in missing]
    return "\n".join(lines).rstrip("\n") + "\n" + END + "\n"


def section_of(report: str) -> str | None:
    r"""The heavy-runs section of a report (its comments and the newline after them included), or None.

    >>> section_of(f"a\n{BEGIN}\nx\n{END}\nb\n") == f"{BEGIN}\nx\n{END}\n"
    True
    """
    if BEGIN not in report or END not in report:
        return None
    return report[report.index(BEGIN) : report.index(END) + len(END)] + "\n"


def replace_section(report: str, section: str) -> str:
    """``report`` with its heavy-runs section replaced by ``section`` (added at the end when it has none).

    >>> replace_section(f"a\\n{BEGIN}\\nold\\n{END}\\nb\\n", f"{BEGIN}\\nnew\\n{END}\\n")
    'a\\n<!-- heavy runs -->\\nnew\\n<!-- /heavy runs -->\\nb\\n'
    >>> replace_section("a\\n", f"{BEGIN}\\nnew\\n{END}\\n")
    'a\\n\\n<!-- heavy runs -->\\nnew\\n<!-- /heavy runs -->\\n'
    """
    if BEGIN in report and END in report:
        start, stop = report.index(BEGIN), report.index(END) + len(END) + 1
        return report[:start] + section + report[stop:]
    return report.rstrip("\n") + "\n\n" + section


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["grid", "pairs"], help="one measurement (default: both)")
    parser.add_argument("--repeats", type=int, default=3, help="paired repeats (default: 3)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    parser.add_argument("--output", help="a report whose heavy-runs section is replaced (default: print)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be 1 or more")
    missing, grids, pairs = [], [], None
    if args.only in (None, "grid"):
        for grid in GRIDS:
            print(f"grid: {grid.model}, --metric {grid.metric}", file=sys.stderr)
            entry = measure_grid(grid, args.repeats, args.device)
            if entry is None:
                missing.append(f"the {grid.model} grid ($PROBING_MODELS or en_ewt's dev and test are not at hand)")
            else:
                grids.append(entry)
    if args.only in (None, "pairs"):
        print("pairs against minicons", file=sys.stderr)
        pairs = measure_pairs(PairsSpec(), args.repeats, args.device)
        if pairs is None:
            missing.append("minimal pairs against minicons (minicons, SmolLM2 in $PROBING_MODELS or BLiMP is not at "
                           "hand: pip install -e '.[bench]', $PROBING_BLIMP)")
    command = "python -m benchmarks.heavy" + (f" --only {args.only}" if args.only else "") + (
        f" --repeats {args.repeats}" if args.repeats != 3 else "") + (
        f" --device {args.device}" if args.device != "cpu" else "")
    section = render(grids, pairs, command, missing)
    if args.output:
        from pathlib import Path

        from probing.atomic import write_text_atomic

        path = Path(args.output)
        report = path.read_text(encoding="utf-8") if path.is_file() else "# Benchmarks\n"
        print(f"wrote {write_text_atomic(replace_section(report, section), path)}", file=sys.stderr)
    else:
        print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
