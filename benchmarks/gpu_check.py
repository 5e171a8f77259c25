"""The one-command device check: ``python benchmarks/run.py --device cuda --quick`` (or ``python -m benchmarks.run``).

For each model (MiniLM, MPNet, SmolLM2, gemma-3-270m from ``$PROBING_MODELS``;
nothing is downloaded) and each dtype (float32, bfloat16), on LIMIT en_ewt dev
sentences (the sample treebank when en_ewt is not at hand):

- the probe's counts on the device against the counts on the CPU in float32:
  equal, or how many head cells differ (a float32 device moves a count only
  through rounding at near-ties, docs/results.md; bfloat16 weights are another
  model, so their cells are reported, not judged);
- the whole run (``run_probe``) over the forward pass as the run makes it, up
  to the last layer's attention;
- sentences per second of the whole run, and how much of it the model waited for its input (the result's
  ``seconds_waiting_for_input``: near zero when the input side keeps the device fed);
- peak device memory (``torch.cuda.max_memory_allocated``; n/a on the CPU).

``--device cpu`` runs the same code on the CPU (the suite's smoke test, with
tiny models given by ``--model``), so the check cannot rot.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from benchmarks.common import ewt_dev, machine, the_batches
from probing.analyses.probe.api import run_probe
from probing.analyses.probe.config import ScoreConfig
from probing.data.inputs import InputSource, sample_treebank_path
from probing.model.extraction import each_layer
from probing.model.loading import load_model
from probing.naming import DIRECTIONS

CHECK_FOLDERS = ("all-MiniLM-L6-v2", "all-mpnet-base-v2", "SmolLM2-135M-Instruct", "gemma-3-270m")
DTYPES = ("float32", "bfloat16")
NEAR_TIE_CELLS = 0.01
"""A float32 device passes when at most this share of head cells differ from the CPU's (near-ties only)."""


@dataclass
class Row:
    model: str
    dtype: str
    attention_path: str
    sentences: int
    whole_seconds: float
    forward_seconds: float
    waiting_seconds: float
    peak_mib: float | None
    differing_cells: int
    cells: int
    verdict: str

    def markdown(self) -> str:
        peak = "n/a" if self.peak_mib is None else f"{self.peak_mib:.0f} MiB"
        return (f"| {self.model} | {self.dtype} | {self.attention_path} | {self.sentences} | "
                f"{self.whole_seconds:.2f} s | {self.whole_seconds / self.forward_seconds:.2f} | "
                f"{self.sentences / self.whole_seconds:.1f} | {self.waiting_seconds / self.whole_seconds:.0%} | {peak} | "
                f"{self.differing_cells} of {self.cells} | {self.verdict} |")


HEADER = ("| model | dtype | attention path | sentences | whole run | whole / forward to the last attention | "
          "sentences/s | waiting for the input | peak device memory | head cells unlike the CPU's float32 | counts |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")


def head_counts(result: dict) -> torch.Tensor:
    """Every relation's correct counts per direction, layer and head, side by side (long)."""
    return torch.tensor([[relation["heads"][direction] for direction in DIRECTIONS]
                         for relation in result["relations"].values()])


def forward_to_last_attention(loaded, treebank: str, limit: int, batch_size: int) -> float:
    """The forward passes a run makes (each layer's attention handed on and dropped), nothing else."""
    batches = the_batches(loaded, InputSource.treebank(treebank, limit=limit), batch_size)
    _synchronise(loaded.device)
    started = time.perf_counter()
    for batch in batches:
        each_layer(loaded, batch.input_ids, batch.attention_mask, lambda layer, weights: None)
    _synchronise(loaded.device)
    return time.perf_counter() - started


def check_model(path: str, name: str, treebank: str, limit: int, device: str, batch_size: int = 32) -> list[Row]:
    config = ScoreConfig.from_fields(model=path, treebank=treebank, limit=limit, batch_size=batch_size, bootstrap=1000)
    reference = head_counts(run_probe(config, loaded=load_model(path)))  # the CPU, float32
    rows = []
    for dtype in DTYPES:
        loaded = load_model(path, device=device, dtype=dtype)
        run_probe(config.replace(limit=min(limit, 2 * batch_size)), loaded=loaded)  # warm-up: kernels chosen
        if device.startswith("cuda"):
            torch.cuda.reset_peak_memory_stats(device)
        _synchronise(device)
        started = time.perf_counter()
        result = run_probe(config, loaded=loaded)
        _synchronise(device)
        whole = time.perf_counter() - started
        peak = torch.cuda.max_memory_allocated(device) / 2**20 if device.startswith("cuda") else None
        forward = forward_to_last_attention(loaded, treebank, limit, batch_size)
        counts = head_counts(result)
        differing = int((counts != reference).sum())
        if dtype == "float32":
            verdict = "equal" if differing == 0 else (
                "near-ties" if differing <= NEAR_TIE_CELLS * counts.numel() else "**unlike the CPU**")
        else:
            verdict = "reported (other weights)"
        rows.append(Row(name, dtype, loaded.attention_path, result["treebank"]["sentences_scored"], whole, forward,
                        result["timing"]["seconds_waiting_for_input"], peak, differing, counts.numel(), verdict))
        del loaded
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
    return rows


def report(rows: list[Row], context: str) -> str:
    lines = ["## The device check", "", context, "", HEADER, *(row.markdown() for row in rows)]
    failed = [row for row in rows if row.verdict.startswith("**")]
    lines += ["", "Every float32 run's counts equal the CPU's up to near-ties." if not failed else
              f"{len(failed)} float32 run(s) unlike the CPU: " + ", ".join(row.model for row in failed)]
    return "\n".join(lines) + "\n"


def _synchronise(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


DEVICE_CHECK_LIMIT = 400
"""Sentences per run of the device check: on one GPU all four models in both dtypes finish in minutes."""


def device_check_command(args, root: str | None) -> str:
    """The ``--quick`` command as given, for the report; a model under ``$PROBING_MODELS`` is written as there
    (the report names no folder of this machine).

    >>> device_check_command(argparse.Namespace(device="cuda", model=None, limit=400), "/m")
    'python benchmarks/run.py --device cuda --quick'
    >>> device_check_command(argparse.Namespace(device="cpu", model=["/m/tiny"], limit=64), "/m")
    'python benchmarks/run.py --device cpu --quick --model $PROBING_MODELS/tiny --limit 64'
    """
    command = f"python benchmarks/run.py --device {args.device} --quick"
    for path in args.model or ():
        inside = root is not None and Path(path).resolve().parent == Path(root).resolve()
        command += f" --model {'$PROBING_MODELS/' + Path(path).name if inside else Path(path).name}"
    if args.limit != DEVICE_CHECK_LIMIT:
        command += f" --limit {args.limit}"
    return command


def device_check(args) -> int:
    """``--quick``: benchmarks/gpu_check.py over the given models (or the four of $PROBING_MODELS)."""
    treebank = ewt_dev() or str(sample_treebank_path())
    root = os.environ.get("PROBING_MODELS")
    if args.model:
        models = [(Path(path).name, path) for path in args.model]
    else:
        models = [(name, str(Path(root) / name)) for name in CHECK_FOLDERS
                  if root and (Path(root) / name / "config.json").is_file()]
    missing = [name for name in CHECK_FOLDERS if not args.model and name not in dict(models)]
    started = time.perf_counter()
    rows = []
    for name, path in models:
        print(f"device check: {name}", file=sys.stderr)
        rows += check_model(path, name, treebank, args.limit, args.device)
    info = machine()
    context = (f"Made by `{device_check_command(args, root)}` on {_dt.date.today().isoformat()} in "
               f"{time.perf_counter() - started:.0f} s; device {args.device}"
               + (f" ({torch.cuda.get_device_name(args.device)})" if args.device.startswith("cuda") else "")
               + f"; torch {info.get('torch', torch.__version__)}; treebank "
               + ("en_ewt dev" if ewt_dev() else "the sample treebank") + f", first {args.limit} sentences."
               + (f" Not in $PROBING_MODELS, so not checked: {', '.join(missing)}." if missing else ""))
    text = report(rows, context)
    if args.output:
        from probing.atomic import write_text_atomic

        print(f"wrote {write_text_atomic(text, args.output)}", file=sys.stderr)
    else:
        print(text)
    return 0 if all(not row.verdict.startswith("**") for row in rows) else 1
