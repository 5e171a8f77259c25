"""``probing score`` against the bare forward pass, each in a fresh process, paired repeats.

Why fresh processes: a setting that a run makes for its whole process (glibc's
allocator, torch's threads) slows everything that process does afterwards,
the bare forward pass too. Measured in one process, such a change cancels out
of the ratio: a fixed 128 KiB mmap threshold once made every run 45% slower
while the in-process ratio of ``benchmarks/run.py`` did not move. Here each
side starts from nothing, as a user's command and a user's own loop do.

Each repeat runs the two children back to back (so a change in the machine's
load hits both alike) and reads, for each:

- ``pass``: the seconds of the work itself: the result's ``timing.seconds_total``
  (reading, batching, the forward passes, pooling, counting) for ``probing
  score``; the forward loop over the engine's batches, attentions returned,
  for the bare child (cold, as the run is: no warm-up on either side);
- ``wall``, ``user``, ``sys`` and ``peak``: the whole process, from the
  operating system (``wait4``): start-up and loading included.

>>> median_ratio([{"score": {"pass": 2.4}, "bare": {"pass": 2.0}}, {"score": {"pass": 3.0}, "bare": {"pass": 2.0}},
...               {"score": {"pass": 1.1}, "bare": {"pass": 1.0}}], "pass")
1.2
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def score_child(model: str, treebank: str, env: dict[str, str] | None = None) -> dict:
    """``probing score`` on ``treebank`` in a fresh process: its pass seconds (from the result) and its process."""
    with tempfile.TemporaryDirectory(prefix="probing-fresh-") as folder:
        output = Path(folder) / "run.json"
        ran = measured([sys.executable, "-m", "probing", "score", "--quiet", "--model", model, "--treebank", treebank,
                        "--output", str(output)], env)
        result = json.loads(output.read_text(encoding="utf-8"))
    return {**ran, "pass": result["timing"]["seconds_total"]}


def bare_child(model: str, treebank: str, env: dict[str, str] | None = None) -> dict:
    """The bare forward pass over the engine's batches of ``treebank``, in a fresh process (this module's
    ``__main__``): its forward seconds and its process."""
    ran = measured([sys.executable, "-m", "benchmarks.fresh", model, treebank], env)
    return {**ran, "pass": json.loads(ran.pop("stdout").strip().splitlines()[-1])["seconds"]}


def measured(command: list[str], env: dict[str, str] | None = None) -> dict:
    """``command`` run to its end in a fresh process: wall, user and system seconds, peak resident MiB, stdout.

    The child is reaped with ``wait4``, whose resource usage is that child's alone (its peak included)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=REPO,
                                   env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait on it again
        out.seek(0), err.seek(0)
        if process.returncode:
            message = err.read().decode(errors="replace")[-2000:]
            raise SystemExit(f"benchmarks: {' '.join(command[2:4])} failed:\n{message}")
        return {"wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime, "peak": usage.ru_maxrss / 1024,
                "stdout": out.read().decode(errors="replace")}


def paired(model: str, treebank: str, repeats: int, *, score_env: dict[str, str] | None = None,
           log=print) -> list[dict]:
    """``repeats`` pairs of (``probing score``, bare forward pass), each pair back to back, the order alternating
    so that neither side always runs first."""
    pairs = []
    for repeat in range(repeats):
        runs = {}
        for side in (("score", "bare") if repeat % 2 == 0 else ("bare", "score")):
            runs[side] = score_child(model, treebank, score_env) if side == "score" else bare_child(model, treebank)
        pairs.append(runs)
        log(f"  repeat {repeat + 1}/{repeats}: " + "; ".join(
            f"{side} pass {runs[side]['pass']:.2f} s (process {runs[side]['wall']:.1f} s wall, "
            f"{runs[side]['user']:.1f} s user, {runs[side]['sys']:.1f} s sys, {runs[side]['peak']:.0f} MiB)"
            for side in ("score", "bare")))
    return pairs


def median_ratio(pairs: list[dict], what: str) -> float:
    """The median over repeats of score's ``what`` over the bare child's (``pass`` or ``wall``)."""
    return round(statistics.median(runs["score"][what] / runs["bare"][what] for runs in pairs), 3)


def median_of(pairs: list[dict], side: str, what: str) -> float:
    return statistics.median(runs[side][what] for runs in pairs)


def _bare(model: str, treebank: str) -> float:
    """The bare child's work: load, batch as the engine does, then time the forward passes with attentions."""
    from benchmarks.common import the_batches
    from benchmarks.run import bare_forward
    from probing.data.inputs import InputSource
    from probing.model.loading import load_model

    loaded = load_model(model)
    batches = the_batches(loaded, InputSource.treebank(treebank))
    return bare_forward(loaded, batches)


if __name__ == "__main__":
    print(json.dumps({"seconds": _bare(sys.argv[1], sys.argv[2])}))
