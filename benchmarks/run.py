"""How fast and how flat is ``probing score``? Measures, on the same batches and in one run:

1. the bare forward pass with attentions returned (nothing else done);
2. the full run (``run_probe`` + ``build_result``: validation pass, reading,
   alignment, batching, forward, pooling, scoring, bootstrap, result), with
   the default 1000 bootstrap replicates and without them, plus a breakdown
   of the full run by stage;
3. pooling + scoring alone on precomputed attention, vectorised, against the
   reference code's plain per-sentence, per-head loop (benchmarks/plain_loop.py),
   with a check that both give the same counts;
4. peak resident memory of ``probing score`` (a fresh process each time, its
   own ``ru_maxrss``) on a treebank and on the same treebank repeated four
   times (written to a temporary file at run time, never kept).

Each timing is the median of ``--repeats`` runs, interleaved so that a change
in the machine's load hits every measurement alike. Writes
benchmarks/RESULTS.md (machine, versions, load, commands, medians, ratios,
targets). Usage::

    python benchmarks/run.py                        # all-MiniLM-L6-v2 on en_ewt dev, 5 repeats
    python benchmarks/run.py --repeats 3 --model DIR --treebank FILE --output RESULTS.md
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from plain_loop import plain_counts  # noqa: E402

from probing.config import ScoreConfig  # noqa: E402
from probing.datasets import resolve_treebank  # noqa: E402
from probing.extraction import attention  # noqa: E402
from probing.pipeline import RunStats, make_batches, prepare, run_probe  # noqa: E402
from probing.pooling import pool_word_attention  # noqa: E402
from probing.relations import relation_pairs  # noqa: E402
from probing.results import build_result  # noqa: E402
from probing.scoring.counts import BootstrapSpec, ProbeCounts  # noqa: E402
from probing.scoring.pairs import collect_pairs  # noqa: E402
from probing.scoring.predictions import predict_heads  # noqa: E402
from probing.treebank import read_treebank  # noqa: E402

TARGETS = {
    "full_over_bare": 1.10,  # full run at most 1.10 x the bare forward pass
    "loop_over_vectorised": 50.0,  # pooling + scoring at least 50 x faster than the plain loop
    "memory_4x_over_1x": 1.05,  # peak memory of the 4 x treebank within 5% of the 1 x one
}


@dataclass
class Timings:
    """Seconds per repeat, by measurement name."""

    runs: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, seconds: float) -> None:
        self.runs.setdefault(name, []).append(seconds)

    def median(self, name: str) -> float:
        return statistics.median(self.runs[name])

    def spread(self, name: str) -> str:
        values = self.runs[name]
        return f"{min(values):.2f}-{max(values):.2f}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--live-memory-child"]:
        return live_memory_child(*argv[1:3])
    args = parse_args(argv)
    model = args.model or default_model()
    shared_treebanks = HERE.parent.parent / "shared" / "treebanks"
    if "PROBING_TREEBANKS" not in os.environ and shared_treebanks.is_dir():
        os.environ["PROBING_TREEBANKS"] = str(shared_treebanks)  # the checkout's offline copy
    treebank = resolve_treebank(args.treebank)
    load_before = os.getloadavg()
    config, path, loaded = prepare(ScoreConfig(model=model, treebank=str(treebank)))
    batches = the_batches(config, path, loaded)
    print(f"{len(batches)} batches of {sum(len(b.sentences) for b in batches)} sentences", file=sys.stderr)

    timings = Timings()
    bare_forward(loaded, batches)  # warm-up: first calls allocate and pick kernels
    for repeat in range(args.repeats):
        timings.add("bare", bare_forward(loaded, batches))
        timings.add("full", full_run(config, loaded))
        timings.add("full_no_bootstrap", full_run(config.replace(bootstrap=0), loaded))
        for name, seconds in stage_breakdown(config, path, loaded, batches).items():
            timings.add(name, seconds)
        print(f"repeat {repeat + 1}/{args.repeats}: " + ", ".join(
            f"{name} {values[-1]:.2f}" for name, values in timings.runs.items() if name in ("bare", "full")),
            file=sys.stderr)
    agreement = pooling_against_loop(config, loaded, batches, timings, args.loop_repeats)
    profile = profile_full_run(config, loaded)
    memory = peak_memory(model, treebank, args.memory_repeats)
    cli_seconds = [cli_wall_time(model, treebank) for _ in range(args.memory_repeats)]
    load_after = os.getloadavg()
    report = render(args, model, treebank, len(batches), timings, agreement, memory, cli_seconds,
                    (load_before, load_after), profile)
    Path(args.output).write_text(report, encoding="utf-8")
    print(report)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="checkpoint folder or hub id (default: all-MiniLM-L6-v2 via get-model)")
    parser.add_argument("--treebank", default="en_ewt:dev", help="treebank file or NAME:SPLIT (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats of each measurement (default: %(default)s)")
    parser.add_argument("--loop-repeats", type=int, default=3, help="repeats of the slow plain loop (default: %(default)s)")
    parser.add_argument("--memory-repeats", type=int, default=2, help="processes per memory measurement (default: %(default)s)")
    parser.add_argument("--output", default=str(HERE / "RESULTS.md"), help="report file (default: %(default)s)")
    return parser.parse_args(argv)


def default_model() -> str:
    """all-MiniLM-L6-v2: the shared copy when get-model is there, else the packaged default."""
    get_model = HERE.parent.parent / "shared" / "models" / "get-model"
    if get_model.is_file():
        output = subprocess.run([str(get_model), "minilm"], capture_output=True, text=True, check=True)
        return output.stdout.strip().splitlines()[-1]
    from probing.extraction import default_model_path

    return default_model_path()


def the_batches(config, path, loaded):
    """The batches of the full run: the same chunks, sort and padding as run_probe makes."""
    from probing.alignment import maximum_length

    max_length = maximum_length(loaded.tokenizer, loaded.model.config, config.max_length)
    return list(make_batches(read_treebank(path), loaded.tokenizer, max_length, config.batch_size, RunStats(),
                             prepend=loaded.prepend_token_id))


def bare_forward(loaded, batches) -> float:
    """(1) The model's forward pass with attentions returned; nothing else."""
    started = time.perf_counter()
    with torch.inference_mode():
        for batch in batches:
            output = loaded.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, output_attentions=True)
            del output
    return time.perf_counter() - started


def full_run(config, loaded) -> float:
    """(2) What ``probing score`` does after loading the model: run_probe and the result object."""
    started = time.perf_counter()
    build_result(run_probe(config, loaded=loaded))
    return time.perf_counter() - started


def profile_full_run(config, loaded, top: int = 15) -> list[tuple[str, int, float, float]]:
    """cProfile of one full run: the functions with the most time of their own."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    build_result(run_probe(config, loaded=loaded))
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    rows = []
    for (filename, line, name), (_, calls, own, cumulative, _) in stats.items():
        where = f"{Path(filename).parent.name}/{Path(filename).name}:{line}" if line else filename
        rows.append((f"{where} {name}" if line else name, calls, own, cumulative))
    return sorted(rows, key=lambda row: -row[2])[:top]


def stage_breakdown(config, path, loaded, batches) -> dict[str, float]:
    """The full run's stages timed one by one (the same work, in the same order)."""
    seconds: dict[str, float] = {}

    def timed(name, function, *args):
        started = time.perf_counter()
        value = function(*args)
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - started
        return value

    timed("stage_validation_pass", lambda: sum(1 for _ in read_treebank(path)))
    timed("stage_read_align_pad", the_batches, config, path, loaded)
    counts = new_counts(config, loaded, bootstrap=True)
    plain = new_counts(config, loaded, bootstrap=False)
    for batch in batches:
        token_attention = timed("stage_attention", attention, loaded, batch.input_ids, batch.attention_mask)
        words = timed("stage_pool", pool_word_attention, token_attention, batch.word_of_token, config.pool_from)
        del token_attention
        predictions = timed("stage_predict", predict_heads, words, batch.num_words)
        pairs = timed("stage_pairs", collect_pairs, batch.sentences, config.relations)
        indices, lengths = [s.index for s in batch.sentences], batch.num_words.tolist()
        timed("stage_count", plain.update, predictions, pairs, indices, lengths)
        timed("stage_count_with_bootstrap", counts.update, predictions, pairs, indices, lengths)
    return seconds


def new_counts(config, loaded, *, bootstrap: bool) -> ProbeCounts:
    spec = BootstrapSpec(config.bootstrap, config.seed) if bootstrap and config.bootstrap else None
    return ProbeCounts(config.relations, loaded.num_layers, loaded.num_heads, offsets=config.offsets,
                       bootstrap=spec, causal=loaded.is_causal)


def pooling_against_loop(config, loaded, batches, timings: Timings, loop_repeats: int) -> dict:
    """(3) Pooling + scoring on precomputed attention: vectorised vs the plain loop, same counts."""
    vectorised = new_counts(config, loaded, bootstrap=False)
    with_bootstrap = new_counts(config, loaded, bootstrap=True)
    plain = {"total": np.zeros(len(config.relations), dtype=np.int64),
             "heads": np.zeros(tuple(vectorised.heads.shape), dtype=np.int64),
             "baselines": np.zeros(tuple(vectorised.baselines.shape), dtype=np.int64)}
    offsets = config.offsets

    def pairs_of(sentence):
        return [(r, q, t) for r, name in enumerate(config.relations) for q, t in relation_pairs(name, sentence)]

    repeats = timings.runs.get("bare") and len(timings.runs["bare"]) or 1
    vector_seconds = [0.0] * repeats
    boot_seconds = [0.0] * repeats
    loop_seconds = [0.0] * loop_repeats
    for number, batch in enumerate(batches):
        token_attention = attention(loaded, batch.input_ids, batch.attention_mask)  # not timed
        for repeat in range(repeats):
            counts = vectorised if repeat == 0 else new_counts(config, loaded, bootstrap=False)
            vector_seconds[repeat] += score_vectorised(config, batch, token_attention, counts)
        for repeat in range(min(repeats, 2)):
            counts = with_bootstrap if repeat == 0 else new_counts(config, loaded, bootstrap=True)
            boot_seconds[repeat] += score_vectorised(config, batch, token_attention, counts)
        numpy_attention = token_attention.numpy()
        word_of_token = batch.word_of_token.numpy()
        token_counts = batch.attention_mask.sum(dim=1).tolist()
        for repeat in range(loop_repeats):
            target = plain if repeat == 0 else {key: np.zeros_like(value) for key, value in plain.items()}
            started = time.perf_counter()
            plain_counts(numpy_attention, word_of_token, token_counts, batch.sentences, pairs_of, offsets, target)
            loop_seconds[repeat] += time.perf_counter() - started
        if number % 10 == 0:
            print(f"pooling vs loop: batch {number + 1}/{len(batches)}", file=sys.stderr)
    timings.runs["pool_score_vectorised"] = vector_seconds
    timings.runs["pool_score_vectorised_bootstrap"] = boot_seconds[: min(repeats, 2)]
    timings.runs["pool_score_plain_loop"] = loop_seconds
    heads = vectorised.heads.numpy()
    differing = np.abs(heads - plain["heads"])
    return {
        "total_equal": bool((vectorised.total.numpy() == plain["total"]).all()),
        "baselines_equal": bool((vectorised.baselines.numpy() == plain["baselines"]).all()),
        "head_cells": int(heads.size),
        "head_cells_differing": int((differing > 0).sum()),
        "largest_difference": int(differing.max()),
        "pairs": int(vectorised.total.sum()),
    }


def score_vectorised(config, batch, token_attention, counts) -> float:
    started = time.perf_counter()
    words = pool_word_attention(token_attention, batch.word_of_token, config.pool_from)
    predictions = predict_heads(words, batch.num_words)
    pairs = collect_pairs(batch.sentences, config.relations)
    counts.update(predictions, pairs, [s.index for s in batch.sentences], batch.num_words.tolist())
    return time.perf_counter() - started


def peak_memory(model: str, treebank: Path, repeats: int) -> dict:
    """(4) Peak RSS of ``probing score`` on the treebank and on it repeated 4 times (fresh processes)."""
    folder = Path(tempfile.mkdtemp(prefix="probing-bench-"))
    try:
        fourfold = folder / f"{treebank.stem}-x4.conllu"
        text = treebank.read_text(encoding="utf-8")
        fourfold.write_text("".join([text if text.endswith("\n\n") else text.rstrip("\n") + "\n\n"] * 4),
                            encoding="utf-8")
        result = {}
        for name, path in (("1x", treebank), ("4x", fourfold)):
            result[name] = [child_peak(model, path, folder / f"{name}.json") for _ in range(repeats)]
            result[f"live_{name}"] = child_live_memory(model, path)
        return result
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def child_peak(model: str, treebank: Path, output: Path) -> dict:
    """Run ``probing score`` in a child process; its own peak RSS (ru_maxrss, KiB on Linux) and wall time."""
    command = [sys.executable, "-m", "probing", "score", "--quiet", "--model", model, "--treebank", str(treebank),
               "--output", str(output)]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if process.returncode != 0:
        raise SystemExit(f"probing score failed on {treebank}:\n{stderr[-2000:]}")
    return {"peak_mib": usage.ru_maxrss / 1024, "seconds": seconds}


def child_live_memory(model: str, treebank: Path) -> dict | None:
    """Live memory of a run in a child process: RSS after glibc has released its free heap pages."""
    command = [sys.executable, __file__, "--live-memory-child", model, str(treebank)]
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode != 0:
        raise SystemExit(f"live-memory child failed:\n{finished.stderr[-2000:]}")
    line = finished.stdout.strip().splitlines()[-1]
    return None if line == "unavailable" else dict(zip(("before_mib", "after_mib", "peak_mib"), map(float, line.split())))


def live_memory_child(model: str, treebank: str) -> int:
    """(child) Score ``treebank`` and print RSS before scoring, RSS after scoring once free heap
    pages are returned (malloc_trim), and the peak: what the run holds vs what the allocator keeps."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        trim = libc.malloc_trim
    except (OSError, AttributeError, TypeError):
        print("unavailable")  # not glibc: no way to ask the allocator to let go
        return 0
    config, _, loaded = prepare(ScoreConfig(model=model, treebank=treebank))
    trim(0)
    before = _status_mib("VmRSS")
    build_result(run_probe(config, loaded=loaded))
    trim(0)
    print(before, _status_mib("VmRSS"), _status_mib("VmHWM"))
    return 0


def _status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cli_wall_time(model: str, treebank: Path) -> float:
    """The whole command as a user types it: interpreter start, imports, model load, run, result file."""
    with tempfile.TemporaryDirectory() as folder:
        return child_peak(model, treebank, Path(folder) / "r.json")["seconds"]


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "unknown"
    try:
        kib = int(next(line for line in Path("/proc/meminfo").read_text().splitlines()
                       if line.startswith("MemTotal")).split()[1])
        memory = f"{kib / 1024 ** 2:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    versions = {name: _version(name) for name in ("probing", "torch", "transformers", "tokenizers", "numpy", "conllu")}
    return {"cpu": cpu, "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(), "memory": memory,
            "python": platform.python_version(), "platform": platform.platform(), "versions": versions,
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


def render(args, model, treebank, n_batches, timings: Timings, agreement, memory, cli_seconds, loads, profile) -> str:
    """The RESULTS.md text (measurements only; the analysis section is kept from the previous file)."""
    m = machine()
    t = timings
    bare, full, full_nb = t.median("bare"), t.median("full"), t.median("full_no_bootstrap")
    vec, loop = t.median("pool_score_vectorised"), t.median("pool_score_plain_loop")
    vec_boot = t.median("pool_score_vectorised_bootstrap")
    peak1 = statistics.median(run["peak_mib"] for run in memory["1x"])
    peak4 = statistics.median(run["peak_mib"] for run in memory["4x"])
    time1 = statistics.median(run["seconds"] for run in memory["1x"])
    time4 = statistics.median(run["seconds"] for run in memory["4x"])
    rows = [
        ("full run / bare forward (default: 1000 bootstrap replicates)", full / bare, "<= 1.10",
         full / bare <= TARGETS["full_over_bare"]),
        ("full run / bare forward (--bootstrap 0)", full_nb / bare, "<= 1.10", full_nb / bare <= TARGETS["full_over_bare"]),
        ("plain loop / vectorised pooling + scoring", loop / vec, ">= 50", loop / vec >= TARGETS["loop_over_vectorised"]),
        ("peak memory 4x treebank / 1x", peak4 / peak1, "<= 1.05", peak4 / peak1 <= TARGETS["memory_4x_over_1x"]),
    ]
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `python benchmarks/run.py --repeats {args.repeats} --loop-repeats {args.loop_repeats} "
        f"--memory-repeats {args.memory_repeats}` on {_dt.date.today().isoformat()}.",
        f"Model `{model}`, treebank `{treebank}` ({n_batches} batches of at most 32 sentences).",
        "",
        "## Machine",
        "",
        f"- CPU: {m['cpu']}, {m['cores']} cores, torch threads {m['torch_threads']}; memory {m['memory']}; "
        f"GPU: {m['gpu'] or 'none'}",
        f"- Python {m['python']} on {m['platform']}",
        "- " + ", ".join(f"{name} {version}" for name, version in m["versions"].items()),
        f"- load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in loads[0])}; after: "
        f"{', '.join(f'{x:.2f}' for x in loads[1])} (other jobs share this CPU)",
        "",
        "## Targets",
        "",
        "| measure | value | target | met |",
        "| --- | ---: | ---: | --- |",
        *[f"| {name} | {value:.3f} | {target} | {'yes' if met else 'no'} |" for name, value, target, met in rows],
        "",
        "## Medians (seconds; range over repeats)",
        "",
        "| measurement | median s | range | repeats |",
        "| --- | ---: | ---: | ---: |",
        *[f"| {_LABELS.get(name, name)} | {t.median(name):.3f} | {t.spread(name)} | {len(t.runs[name])} |"
          for name in t.runs],
        f"| whole command, `probing score` in a fresh process (1x, incl. start-up and model load) | "
        f"{statistics.median(cli_seconds):.3f} | {min(cli_seconds):.2f}-{max(cli_seconds):.2f} | {len(cli_seconds)} |",
        "",
        "Ratios: full / bare = {:.3f} (defaults), {:.3f} (--bootstrap 0); plain loop / vectorised = {:.1f}; "
        "vectorised with 1000 bootstrap replicates / without = {:.2f}.".format(full / bare, full_nb / bare, loop / vec,
                                                                           vec_boot / vec),
        "",
        "Counts of the plain loop and the vectorised scorer: totals equal: {total_equal}, baselines equal: "
        "{baselines_equal}; head cells (relation x direction x layer x head) differing: {head_cells_differing} of "
        "{head_cells}, largest difference {largest_difference} pairs of {pairs} (float32 summation order at "
        "near-ties).".format(**agreement),
        "",
        "## Peak resident memory (`probing score` in a fresh process, ru_maxrss)",
        "",
        "| treebank | peak MiB (median) | runs | wall s (median) |",
        "| --- | ---: | --- | ---: |",
        f"| 1x | {peak1:.0f} | {_peaks(memory['1x'])} | {time1:.1f} |",
        f"| 4x (the same file four times) | {peak4:.0f} | {_peaks(memory['4x'])} | {time4:.1f} |",
        "",
        f"Ratio 4x / 1x: {peak4 / peak1:.3f}.",
        "",
        *_live_lines(memory),
        "",
        "## Profile of one full run (cProfile, defaults; the functions with the most time of their own)",
        "",
        "| function | calls | own s | cumulative s |",
        "| --- | ---: | ---: | ---: |",
        *[f"| `{name}` | {calls} | {own:.3f} | {cumulative:.3f} |" for name, calls, own, cumulative in profile],
        "",
    ]
    previous = Path(args.output)
    analysis = ""
    if previous.is_file() and _ANALYSIS in previous.read_text(encoding="utf-8"):
        analysis = previous.read_text(encoding="utf-8").split(_ANALYSIS, 1)[1]
    return "\n".join(lines) + "\n" + _ANALYSIS + (analysis or "\n\n(written by hand after a run)\n")


def _live_lines(memory: dict) -> list[str]:
    live1, live4 = memory.get("live_1x"), memory.get("live_4x")
    if not live1 or not live4:
        return ["Live memory: not measured (needs glibc's malloc_trim)."]
    return [
        "What the run itself holds (one more process each, glibc asked to return its free heap pages with "
        "malloc_trim before and after scoring):",
        "",
        "| treebank | RSS before scoring MiB | RSS after scoring MiB | peak MiB |",
        "| --- | ---: | ---: | ---: |",
        f"| 1x | {live1['before_mib']:.0f} | {live1['after_mib']:.0f} | {live1['peak_mib']:.0f} |",
        f"| 4x | {live4['before_mib']:.0f} | {live4['after_mib']:.0f} | {live4['peak_mib']:.0f} |",
    ]


def _peaks(runs: list[dict]) -> str:
    return ", ".join(f"{run['peak_mib']:.0f}" for run in runs)


_ANALYSIS = "## Analysis"

_LABELS = {
    "bare": "(1) bare forward pass, attentions returned",
    "full": "(2) full run, defaults (bootstrap 1000)",
    "full_no_bootstrap": "(2) full run, --bootstrap 0",
    "stage_validation_pass": "stage: validation pass over the treebank",
    "stage_read_align_pad": "stage: read + align + sort + pad",
    "stage_attention": "stage: forward + stack attention to [batch, layer, head, tok, tok]",
    "stage_pool": "stage: pooling to words",
    "stage_predict": "stage: predictions (argmax, both directions)",
    "stage_pairs": "stage: collect pairs",
    "stage_count": "stage: counts, no bootstrap",
    "stage_count_with_bootstrap": "stage: counts with 1000 bootstrap replicates",
    "pool_score_vectorised": "(3) pooling + scoring, vectorised",
    "pool_score_vectorised_bootstrap": "(3) pooling + scoring, vectorised, with 1000 bootstrap replicates",
    "pool_score_plain_loop": "(3) pooling + scoring, plain per-sentence per-head loop",
}


if __name__ == "__main__":
    sys.exit(main())
