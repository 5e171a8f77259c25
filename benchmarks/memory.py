"""Memory flat over a long treebank and time kept, measured together: ``python benchmarks/run.py --memory``.

Two targets that a fix for one must not buy with the other (a fixed 128 KiB mmap
threshold once held the peak flat and made every run 45% slower):

- peak resident memory of ``probing score`` on en_ewt dev four times over, at
  most :data:`MEMORY_TARGET` times its peak on en_ewt dev once (all-MiniLM-L6-v2);
- the whole run at most :data:`TIME_TARGET` times a bare forward pass of the same
  sentences: all-MiniLM-L6-v2 on the fourfold treebank and all-mpnet-base-v2 on
  en_ewt dev, each side in a fresh process, paired repeats (benchmarks/fresh.py).

``--settings`` adds rows for other allocator settings (glibc's
``MALLOC_MMAP_THRESHOLD_``, given to the ``probing score`` processes only), the
table from which the shipped setting was chosen.

>>> growth({"1x": {"peak": 700.0}, "4x": {"peak": 714.0}})
1.02
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path

from benchmarks.common import verdict
from benchmarks.fresh import median_of, median_ratio, paired, score_child

MEMORY_TARGET = 1.05
"""Peak memory on the fourfold treebank over the peak on the treebank once."""

TIME_TARGET = 1.20
"""The whole ``probing score`` process over the bare forward pass's process, medians of paired repeats."""

SETTINGS = {"glibc's own rule (nothing held)": {"PROBING_MALLOC": "glibc"},
            "MALLOC_MMAP_THRESHOLD_=131072 (128 KiB)": {"MALLOC_MMAP_THRESHOLD_": "131072"},
            "MALLOC_MMAP_THRESHOLD_=1048576 (1 MiB)": {"MALLOC_MMAP_THRESHOLD_": "1048576"},
            "MALLOC_MMAP_THRESHOLD_=16777216 (16 MiB)": {"MALLOC_MMAP_THRESHOLD_": "16777216"},
            "MALLOC_MMAP_THRESHOLD_=67108864 (64 MiB)": {"MALLOC_MMAP_THRESHOLD_": "67108864"}}
"""The allocator settings measured beside the shipped one with ``--settings`` (environment variables of the
``probing score`` processes), one repeat each."""


def growth(peaks: dict) -> float:
    """The fourfold treebank's peak over the single one's."""
    return round(peaks["4x"]["peak"] / peaks["1x"]["peak"], 3)


def memory_and_time(minilm: str, mpnet: str | None, treebank: Path, repeats: int, *, settings: bool = False,
                    log=print) -> dict:
    """Every measurement of the report: per setting, MiniLM's paired runs on the fourfold treebank and its peak
    on the single one; MPNet's paired runs on the single one under the shipped setting."""
    folder = Path(tempfile.mkdtemp(prefix="probing-memory-"))
    try:
        fourfold = folder / "x4.conllu"
        text = treebank.read_text(encoding="utf-8")
        fourfold.write_text((text.rstrip("\n") + "\n\n") * 4, encoding="utf-8")
        rows = {"as shipped": ({}, repeats)}
        if settings:
            rows.update({name: (env, 1) for name, env in SETTINGS.items()})
        measured_rows = {}
        for name, (env, times) in rows.items():
            log(f"memory and time: all-MiniLM-L6-v2, {name}")
            runs = paired(minilm, str(fourfold), times, score_env=env, log=log)
            single = [score_child(minilm, str(treebank), env) for _ in range(times)]
            measured_rows[name] = {"runs": runs, "peaks": {"1x": {"peak": statistics.median(r["peak"] for r in single)},
                                                          "4x": {"peak": median_of(runs, "score", "peak")}}}
        result = {"rows": measured_rows, "repeats": repeats, "mpnet": None}
        if mpnet:
            log("memory and time: all-mpnet-base-v2, as shipped")
            result["mpnet"] = paired(mpnet, str(treebank), repeats, log=log)
        return result
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def memory_report(result: dict) -> str:
    """The report's section: the table of settings (the bare forward pass last), then the two verdicts."""
    shipped = result["rows"]["as shipped"]
    lines = [f"All-MiniLM-L6-v2 on en_ewt dev four times over (8,004 sentences), each process fresh; the shipped "
             f"setting's row and the bare forward pass are medians of {result['repeats']} paired repeats, any other "
             "setting's row one repeat; peak 1x is the same command on en_ewt dev once.", "",
             "| run | wall | user | sys | peak 4x | peak 1x | 4x / 1x | wall / bare |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, row in result["rows"].items():
        runs = row["runs"]
        lines.append(f"| `probing score`, {name} | {median_of(runs, 'score', 'wall'):.1f} s | "
                     f"{median_of(runs, 'score', 'user'):.1f} s | {median_of(runs, 'score', 'sys'):.1f} s | "
                     f"{row['peaks']['4x']['peak']:.0f} MiB | {row['peaks']['1x']['peak']:.0f} MiB | "
                     f"{growth(row['peaks']):.3f} | {median_ratio(runs, 'wall'):.3f} |")
    runs = shipped["runs"]
    lines.append(f"| a bare forward pass of the same sentences | {median_of(runs, 'bare', 'wall'):.1f} s | "
                 f"{median_of(runs, 'bare', 'user'):.1f} s | {median_of(runs, 'bare', 'sys'):.1f} s | "
                 f"{median_of(runs, 'bare', 'peak'):.0f} MiB | | | 1 |")
    lines += ["", f"- Memory: {growth(shipped['peaks']):.3f} times, {verdict(growth(shipped['peaks']), MEMORY_TARGET)}.",
              f"- Time, all-MiniLM-L6-v2 on the fourfold treebank: the whole process {median_ratio(runs, 'wall'):.3f} "
              f"times the bare forward pass's, {verdict(median_ratio(runs, 'wall'), TIME_TARGET)} (the passes alone, "
              f"without start-up and loading: {median_ratio(runs, 'pass'):.3f})."]
    if result["mpnet"]:
        mpnet = result["mpnet"]
        lines.append(f"- Time, all-mpnet-base-v2 on en_ewt dev: {median_ratio(mpnet, 'wall'):.3f} times, "
                     f"{verdict(median_ratio(mpnet, 'wall'), TIME_TARGET)} (passes alone: "
                     f"{median_ratio(mpnet, 'pass'):.3f}; {median_of(mpnet, 'score', 'wall'):.1f} s against "
                     f"{median_of(mpnet, 'bare', 'wall'):.1f} s).")
    return "\n".join(lines)

