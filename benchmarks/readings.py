"""What does reading norm-based attention (or rollout) cost over the raw weights?

Times, on the batches the engine makes (``batches_of_chunk``: length-sorted,
padded, batches of ``--batch-size``) of the first ``--sentences`` sentences of
a treebank:

- ``weights``: the forward pass with attentions returned, stacked into
  ``[batch, layer, head, query, key]`` (``probing.extraction.attention``);
- ``norms``: the same pass with the value-norm capture attached (the norms
  reading attaches it afresh for every batch) and the weights turned into
  norm-based attention;
- ``rollout``: the same pass and the rollout of its weights;
- ``probe``: the whole probe run on those sentences (``probing.api.run_probe``,
  no bootstrap), so the extra seconds of norms can be set against it;
- norms' own work, timed apart from the forward pass.

The three readings run interleaved, batch by batch, so that a change in the
machine's load hits them alike; ratios are taken per repeat, then the median
of ``--repeats``. The target: norms add at
most 20% to a probe run; ``norms / weights`` on the forward pass alone is the
stricter figure, since a probe run does more than the forward pass. Usage::

    python benchmarks/readings.py                       # all-MiniLM-L6-v2, en_ewt dev, 500 sentences
    python benchmarks/readings.py --model DIR --treebank FILE --sentences 200 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent

from probing.api import load_for, run_probe  # noqa: E402
from probing.batching import BatchStats, batches_of_chunk  # noqa: E402
from probing.config import ScoreConfig  # noqa: E402
from probing.datasets import resolve_treebank  # noqa: E402
from probing.extraction import attention  # noqa: E402
from probing.inputs import open_input  # noqa: E402
from probing.readings import READINGS, ValueNorms, norm_weighted  # noqa: E402

TARGET = 1.20
"""Norms may add at most 20% to a probe run."""


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    shared_treebanks = HERE.parent.parent / "shared" / "treebanks"
    if "PROBING_TREEBANKS" not in os.environ and shared_treebanks.is_dir():
        os.environ["PROBING_TREEBANKS"] = str(shared_treebanks)  # the checkout's offline copy
    treebank = resolve_treebank(args.treebank)
    config = ScoreConfig(
        model=args.model or default_model(), treebank=str(treebank), batch_size=args.batch_size,
        limit=args.sentences, bootstrap=0,
    )
    load_before = os.getloadavg()
    config = config.validated()
    loaded = load_for(config)
    units = list(open_input(str(treebank), limit=args.sentences).units())
    batches = list(batches_of_chunk(units, loaded.tokenizer, batch_size=args.batch_size,
                                    max_length=loaded.max_length(), stats=BatchStats(),
                                    prepend=loaded.prepend_token_id))
    print(f"{len(batches)} batches of {sum(len(b.sentences) for b in batches)} sentences, "
          f"{torch.get_num_threads()} threads", file=sys.stderr)

    readings = [READINGS[name] for name in ("weights", "norms", "rollout")]
    read_all(loaded, batches, readings, {})  # warm-up: first calls allocate and pick kernels
    run_probe(config, loaded=loaded)
    seconds: dict[str, list[float]] = {reading.name: [] for reading in readings}
    seconds["probe"] = []
    for repeat in range(args.repeats):
        totals: dict[str, float] = {}
        read_all(loaded, batches, readings, totals)
        started = time.perf_counter()
        run_probe(config, loaded=loaded)
        totals["probe"] = time.perf_counter() - started
        for name, value in totals.items():
            seconds[name].append(value)
        print(f"repeat {repeat + 1}/{args.repeats}: "
              + ", ".join(f"{name} {values[-1]:.2f}s" for name, values in seconds.items()), file=sys.stderr)
    own_work = [norms_own_work(loaded, batches) for _ in range(args.repeats)]
    load_after = os.getloadavg()

    median = {name: statistics.median(values) for name, values in seconds.items()}
    # per repeat, then the median: each repeat's readings ran on the same batches, interleaved
    forward_ratio = statistics.median(n / w for n, w in zip(seconds["norms"], seconds["weights"]))
    rollout_ratio = statistics.median(r / w for r, w in zip(seconds["rollout"], seconds["weights"]))
    probe_ratio = statistics.median(
        (p + n - w) / p for p, n, w in zip(seconds["probe"], seconds["norms"], seconds["weights"])
    )
    lines = [
        f"model {loaded.name_or_path} ({loaded.num_layers} layers x {loaded.num_heads} heads), "
        f"treebank {Path(treebank).name}, {args.sentences} sentences, batches of {args.batch_size}, "
        f"{len(batches)} batches, {torch.get_num_threads()} threads, torch {torch.__version__}",
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}; {args.repeats} repeats",
        "",
        "| measurement | median s | range s |",
        "| --- | ---: | ---: |",
        *(f"| {name} | {median[name]:.3f} | {min(values):.3f}-{max(values):.3f} |" for name, values in seconds.items()),
        "",
        "median over repeats of the per-repeat ratio:",
        f"norms / weights, forward pass alone: {forward_ratio:.3f}",
        f"rollout / weights, forward pass alone: {rollout_ratio:.3f}",
        f"(probe run + norms' extra time) / probe run: {probe_ratio:.3f}",
        f"norms' own work alone (attach, value norms, stack, N = weights x norms), fastest of {args.repeats}: "
        f"{min(own_work):.3f} s = {min(own_work) / min(seconds['weights']):.3f} of the fastest weights pass",
        f"target: at most {TARGET:.2f} -> {'met' if forward_ratio <= TARGET else 'MISSED'} (on the forward pass alone)",
    ]
    report = "\n".join(lines)
    print(report)
    if args.output:
        Path(args.output).write_text(report + "\n", encoding="utf-8")
    return 0


def read_all(loaded, batches, readings, totals: dict[str, float]) -> None:
    """Every batch once per reading, the readings interleaved batch by batch (in turn first),
    so that a change in the machine's load hits them alike; seconds are added to ``totals``."""
    for number, batch in enumerate(batches):
        shift = number % len(readings)
        for reading in readings[shift:] + readings[:shift]:
            started = time.perf_counter()
            with reading.attached(loaded):
                values = reading.read(loaded, batch)  # [batch, layer, head, query, key]
            del values
            totals[reading.name] = totals.get(reading.name, 0.0) + time.perf_counter() - started


def norms_own_work(loaded, batches) -> float:
    """Seconds of the work the norms reading adds, timed apart from the forward pass (whose noise
    on a shared machine can exceed it): attaching, turning every layer's value projection output
    into norms, stacking them, and multiplying the weights. The projection outputs are recorded
    by an untimed pass first."""
    total = 0.0
    for batch in batches:
        capture = ValueNorms(loaded)
        outputs = []
        handles = [hooked.value_module.register_forward_hook(lambda m, args, out: outputs.append(out))
                   for hooked in capture._attentions]
        try:
            weights = attention(loaded, batch.input_ids, batch.attention_mask)
        finally:
            for handle in handles:
                handle.remove()
        started = time.perf_counter()
        capture = ValueNorms(loaded)
        hooked = capture._attentions * (len(outputs) // len(capture._attentions))  # ALBERT: one module, every layer
        norms = torch.stack([each.norms(output) for each, output in zip(hooked, outputs)], dim=1)
        norm_weighted(weights, norms)
        total += time.perf_counter() - started
    return total


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="checkpoint folder or hub id (default: all-MiniLM-L6-v2 via get-model)")
    parser.add_argument("--treebank", default="en_ewt:dev", help="treebank file or NAME:SPLIT (default: %(default)s)")
    parser.add_argument("--sentences", type=int, default=500, help="first sentences of the treebank (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=32, help="sentences per batch (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats of each measurement (default: %(default)s)")
    parser.add_argument("--output", help="also write the report to this file")
    return parser.parse_args(argv)


def default_model() -> str:
    """all-MiniLM-L6-v2: the shared copy when get-model is there, else the packaged default."""
    get_model = HERE.parent.parent / "shared" / "models" / "get-model"
    if get_model.is_file():
        output = subprocess.run([str(get_model), "minilm"], capture_output=True, text=True, check=True)
        return output.stdout.strip().splitlines()[-1]
    from probing.models import default_model_path

    return default_model_path()


if __name__ == "__main__":
    sys.exit(main())
