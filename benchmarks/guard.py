"""CI's speed guard: ``probing score`` must stay within reach of the bare forward pass it cannot avoid.

Runs ``probing score`` and a bare forward pass of the same sentences, each in a
fresh process (benchmarks/fresh.py says why a fresh one), back to back,
``--repeats`` times; fails (exit 1) when the median of the paired ratios of
their pass seconds passes ``--bound``, and prints both timings either way.

The input is the packaged sample treebank repeated :data:`COPIES` times with
the packaged all-MiniLM-L6-v2, so the guard needs nothing beside the clone and
runs in about a minute and a half on two cores. The run's own work beyond the forward
pass (batching in a thread, pooling, predictions, counts, the bootstrap) is
about 1.2 times the forward pass here on a quiet machine; the bound is
generous for a noisy one, and still well below what a process-wide slowdown
gives: glibc's mmap threshold fixed at 128 KiB makes it about 1.7 (both
measured in benchmarks/RESULTS.md, "The speed guard"). To see the guard catch that very change::

    python -m benchmarks.guard                                                  # passes
    python -m benchmarks.guard --score-env MALLOC_MMAP_THRESHOLD_=131072        # fails

>>> verdict_line(1.12, 1.35)
'guard: probing score / bare forward pass = 1.12 (median of paired repeats), at most 1.35: passed'
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from benchmarks.fresh import median_of, median_ratio, paired

BOUND = 1.35
"""The largest median ratio (whole run's pass over the bare forward pass) the guard lets through."""

COPIES = 32
"""How many times over the sample treebank (75 sentences) is read: enough work (2,400 sentences, a pass of about
6 s) that a run's fixed costs (the first chunk read before the model can start) do not decide the ratio (at 8
copies they made a third of it)."""


def verdict_line(ratio: float, bound: float) -> str:
    outcome = "passed" if ratio <= bound else "FAILED"
    return (f"guard: probing score / bare forward pass = {ratio:.2f} (median of paired repeats), "
            f"at most {bound:g}: {outcome}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="paired repeats (default: 3)")
    parser.add_argument("--bound", type=float, default=BOUND, help=f"the largest median ratio (default: {BOUND})")
    parser.add_argument("--copies", type=int, default=COPIES,
                        help=f"how many times over the sample treebank is read (default: {COPIES})")
    parser.add_argument("--model", help="a checkpoint folder (default: the packaged all-MiniLM-L6-v2)")
    parser.add_argument("--score-env", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable for the probing score processes only (repeatable): to show "
                             "what the guard catches, e.g. MALLOC_MMAP_THRESHOLD_=131072")
    args = parser.parse_args(argv)
    from probing.data.inputs import sample_treebank_path
    from probing.model.loading import default_model_path

    model = args.model or default_model_path()
    score_env = dict(item.split("=", 1) for item in args.score_env)
    with tempfile.TemporaryDirectory(prefix="probing-guard-") as folder:
        treebank = Path(folder) / f"sample-x{args.copies}.conllu"
        text = sample_treebank_path().read_text(encoding="utf-8").rstrip("\n") + "\n\n"
        treebank.write_text(text * args.copies, encoding="utf-8")
        print(f"guard: probing score and a bare forward pass, fresh processes, {args.repeats} paired repeats, "
              f"sample treebank x {args.copies}" + (f", score with {args.score_env}" if score_env else ""), file=sys.stderr)
        pairs = paired(str(model), str(treebank), args.repeats, score_env=score_env,
                       log=lambda line: print(line, file=sys.stderr))
    ratio = median_ratio(pairs, "pass")
    print(f"guard: medians: probing score {median_of(pairs, 'score', 'pass'):.2f} s, bare forward pass "
          f"{median_of(pairs, 'bare', 'pass'):.2f} s (processes: {median_of(pairs, 'score', 'wall'):.1f} s and "
          f"{median_of(pairs, 'bare', 'wall'):.1f} s wall)", file=sys.stderr)
    print(verdict_line(ratio, args.bound), file=sys.stderr)
    return 0 if ratio <= args.bound else 1


if __name__ == "__main__":
    sys.exit(main())
