"""How fast is probing, against the forward pass it cannot avoid? Every figure of benchmarks/RESULTS.md comes from here.

Quick (the default; a few minutes, it says how long before it starts)::

    python benchmarks/run.py                    # MiniLM on 300 en_ewt dev sentences (or the sample treebank)
    python benchmarks/run.py --output quick.md  # the same, written to a file instead of the terminal

Full (tens of minutes on two cores; regenerates the report, every number in it measured by this run)::

    python benchmarks/run.py --full --output benchmarks/RESULTS.md

Checkpoints come from ``$PROBING_MODELS/<folder>`` (all-MiniLM-L6-v2, all-mpnet-base-v2,
SmolLM2-135M-Instruct; the packaged all-MiniLM-L6-v2 when that is unset) and treebanks from
``$PROBING_TREEBANKS`` or the cache (``probing data fetch en_ewt``). ``--device cuda`` measures on a GPU.

Measurements (each timing is a median over repeats that alternate between the things compared, so that a
change in the machine's load hits both alike):

1. ratio: the whole run (``probing.analyses.probe.api.run_probe``: reading, validation, tokenisation, batching, forward,
   pooling, predictions, counts, 1000 bootstrap replicates, the result object) over the bare forward pass
   with attentions returned, on the same batches; also without the bootstrap, and over the forward pass as
   a run makes it (stopped after the last layer's attention);
2. pooling and scoring on precomputed attention, vectorised, against the reference code's plain loop
   (benchmarks/plain_loop.py), with a check that both give the same counts;
3. peak memory of ``probing score`` on a treebank and on the same treebank four times over, with the time of the
   whole command against a bare forward pass's, each in a fresh process (benchmarks/memory.py);
4. tree decoding (every head, both directions, max and mst) against the forward pass it reads;
5. norm-based attention: the whole run under ``--attention norms`` over the run under raw weights, paired;
6. ablation: ``--metric lm`` conditions spread over every layer as ``--each-head``'s are, run as ``probing
   ablate`` runs them (stacked, the intact model's lower layers reused) against one whole forward pass per
   condition (SmolLM2, on a few sentences);
7. the bootstrap's weighting: all-MiniLM-L6-v2's per-sentence counts (5 relations x (1 + 144 head-directions
   + 6 offsets)) of as many sentences as en_ewt dev, 1000 replicates, weighted a batch of 32 at a time against
   a chunk of 512 at a time (probing's ``ReplicateSums``), with a check that both give the same sums;
8. result arrays: every array of the committed leaderboard results (leaderboards/*/results), written in byte planes
   as probing writes them against zlib over numpy's byte layout (as files before byte planes held them): bytes
   and seconds, with a check that both decode to the same numbers;
9. the compiled loops (probing.compiling) against the code they replace, with a check that both give the same
   numbers: head predictions of all-MiniLM-L6-v2's pooled word attention on en_ewt dev (the tensor code's
   masking pass and two reductions), and the bootstrap's Poisson weights of as many sentences (numpy, one
   generator per sentence); wall and CPU seconds, since the tensor code runs on every core and the loops on one.
"""

from __future__ import annotations

import sys

if __name__ == "__main__" and not __package__:
    # ``python benchmarks/run.py`` (the command the docs give): this folder is loaded as the package it is, by its
    # own location, and this file runs as its module ``benchmarks.run``, as ``python -m benchmarks.run`` runs it
    import importlib.util
    import runpy
    from pathlib import Path

    _folder = Path(__file__).resolve().parent
    _spec = importlib.util.spec_from_file_location("benchmarks", _folder / "__init__.py",
                                                   submodule_search_locations=[str(_folder)])
    sys.modules["benchmarks"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["benchmarks"])
    runpy.run_module("benchmarks.run", run_name="__main__", alter_sys=True)

import argparse
import datetime as _dt
import os
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.common import FOLDERS, Timings, ewt_dev, machine, machine_line, model_folder, the_batches, verdict
from benchmarks.gpu_check import DEVICE_CHECK_LIMIT, device_check
from benchmarks.memory import memory_and_time, memory_report
from benchmarks.plain_loop import plain_counts
from probing.analyses.probe.api import run_probe
from probing.analyses.probe.config import ScoreConfig
from probing.analyses.probe.counts import ProbeCounts
from probing.analyses.probe.pairs import collect_pairs
from probing.data.inputs import InputSource, sample_treebank_path
from probing.data.relations import relation_pairs
from probing.engine.pooling import pool_word_attention
from probing.engine.predictions import predict_heads
from probing.model.extraction import attention
from probing.model.loading import load_model

REPOSITORY = Path(__file__).resolve().parent.parent

TARGETS = {
    "all-MiniLM-L6-v2": 1.10,  # whole run at most 1.10 x the bare forward pass
    "all-mpnet-base-v2": 1.03,
    "SmolLM2-135M-Instruct": 1.03,
}
LOOP_TARGET = 50.0  # pooling + scoring at least 50 x faster than the plain loop
TREES_TARGET = 1.0  # tree decoding costs no more than the forward pass it reads
NORMS_TARGET = 1.20  # norms add at most 20% to a probe run


# ---------------------------------------------------------------------------- what is measured


def bare_forward(loaded, batches) -> float:
    """The model's forward pass with attentions returned; nothing else."""
    started = time.perf_counter()
    with torch.inference_mode():
        for batch in batches:
            output = loaded.base(input_ids=batch.input_ids.to(loaded.device),
                                 attention_mask=batch.attention_mask.to(loaded.device), output_attentions=True)
            del output
    if loaded.device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - started


def attention_forward(loaded, batches) -> float:
    """The forward pass as a run makes it: stopped after the last layer's attention, the weights stacked."""
    started = time.perf_counter()
    for batch in batches:
        weights = attention(loaded, batch.input_ids, batch.attention_mask)  # [batch, layer, head, query, key]
        del weights
    return time.perf_counter() - started


def whole_run(config: ScoreConfig, loaded, parts: Timings | None = None) -> float:
    """What ``probing score`` does once the model is loaded: the run and its result object. ``parts``: where
    to add how the run's time divided (the result's own ``timing`` block, and the time after the pass)."""
    started = time.perf_counter()
    result = run_probe(config, loaded=loaded)
    seconds = time.perf_counter() - started
    if parts is not None:
        timing = result["timing"]
        parts.add("waiting", timing["seconds_waiting_for_input"])
        parts.add("model", timing["seconds_model"])
        parts.add("counting", timing["seconds_total"] - timing["seconds_model"] - timing["seconds_waiting_for_input"])
        parts.add("result", seconds - timing["seconds_total"])
    return seconds


def ratios(loaded, treebank: str, limit: int | None, repeats: int, *, attention_reading: str = "weights",
           variants: bool = True) -> dict:
    """(1) and (5): the whole run over the bare forward pass, paired repeats."""
    source = InputSource.treebank(treebank, limit=limit)
    batches = the_batches(loaded, source)
    config = ScoreConfig.from_fields(model=loaded.name_or_path, treebank=treebank, limit=limit, device=loaded.device,
                         attention=attention_reading)
    timings, parts = Timings(), Timings()
    bare_forward(loaded, batches[:4])  # warm-up: first calls allocate and pick kernels
    whole_run(config.replace(limit=32), loaded)
    for repeat in range(repeats):
        timings.add("bare", bare_forward(loaded, batches))
        timings.add("whole", whole_run(config, loaded, parts))
        if attention_reading != "weights":  # the same run under raw weights, paired with this reading's
            timings.add("whole_weights", whole_run(config.replace(attention="weights"), loaded))
        if variants:
            timings.add("to_attention", attention_forward(loaded, batches))
        if variants:
            timings.add("no_bootstrap", whole_run(config.replace(bootstrap=0), loaded))
        print(f"  repeat {repeat + 1}/{repeats}: bare {timings.runs['bare'][-1]:.2f} s, whole "
              f"{timings.runs['whole'][-1]:.2f} s", file=sys.stderr)
    return {"batches": len(batches), "units": sum(len(b) for b in batches), "timings": timings, "parts": parts,
            "ratio": timings.ratio("whole", "bare"),
            "ratio_no_bootstrap": timings.ratio("no_bootstrap", "bare") if variants else None,
            "ratio_to_attention": timings.ratio("whole", "to_attention") if variants else None}


def pooling_against_loop(loaded, treebank: str, limit: int) -> dict:
    """(2) Pooling + scoring on precomputed attention: vectorised vs the plain loop, same counts."""
    relations = ("dobj", "det", "pobj", "poss", "all")
    batches = the_batches(loaded, InputSource.treebank(treebank, limit=limit))
    vectorised = ProbeCounts(relations, loaded.num_layers, loaded.num_heads)
    plain = {"total": np.zeros(len(relations), dtype=np.int64),
             "heads": np.zeros(tuple(vectorised.heads.shape), dtype=np.int64),
             "baselines": np.zeros(tuple(vectorised.baselines.shape), dtype=np.int64)}

    def pairs_of(sentence):
        return [(r, q, t) for r, name in enumerate(relations) for q, t in relation_pairs(name, sentence)]

    vector_seconds = loop_seconds = 0.0
    for batch in batches:
        token_attention = attention(loaded, batch.input_ids, batch.attention_mask)  # not timed
        started = time.perf_counter()
        words = pool_word_attention(token_attention, batch.word_of_token)
        predictions = predict_heads(words, batch.num_words)
        vectorised.update(predictions, collect_pairs(batch.sentences, relations), batch.indices,
                          batch.num_words.tolist())
        vector_seconds += time.perf_counter() - started
        started = time.perf_counter()
        plain_counts(token_attention.numpy(), batch.word_of_token.numpy(), batch.attention_mask.sum(dim=1).tolist(),
                     batch.sentences, pairs_of, (-3, -2, -1, 1, 2, 3), plain)
        loop_seconds += time.perf_counter() - started
    differing = int((vectorised.heads.numpy() != plain["heads"]).sum())
    return {"units": sum(len(b) for b in batches), "vectorised": vector_seconds, "loop": loop_seconds,
            "speedup": loop_seconds / vector_seconds, "cells": int(vectorised.heads.numel()), "differing": differing,
            "totals_equal": bool((vectorised.total.numpy() == plain["total"]).all())}


def tree_decoding(loaded, treebank: str, limit: int | None) -> dict:
    """(4) Every head's max and mst trees over a pass, against that pass's forward time."""
    from probing.analyses.trees.counts import TreeCounts

    batches = the_batches(loaded, InputSource.treebank(treebank, limit=limit))
    counts = TreeCounts(loaded.num_layers, loaded.num_heads)
    forward = decode = 0.0
    first = batches[0]
    counts.update(pool_word_attention(attention(loaded, first.input_ids, first.attention_mask), first.word_of_token),
                  first.sentences, first.num_words)  # compiles the decoder once, outside the timing
    counts = TreeCounts(loaded.num_layers, loaded.num_heads)
    for batch in batches:
        started = time.perf_counter()
        maps = attention(loaded, batch.input_ids, batch.attention_mask)
        forward += time.perf_counter() - started
        words = pool_word_attention(maps, batch.word_of_token)
        started = time.perf_counter()
        counts.update(words, batch.sentences, batch.num_words)
        decode += time.perf_counter() - started
    return {"units": sum(len(b) for b in batches), "forward": forward, "decode": decode, "ratio": decode / forward}


def ablation_sharing(model: str, treebank: str, limit: int, heads_per_layer: int) -> dict:
    """(6) ``--metric lm`` on ``heads_per_layer`` heads of every layer (``--each-head`` in miniature: its
    conditions spread over the layers alike): as ``probing ablate`` runs them (conditions stacked, the layers
    below each one's first disabled layer reused from the intact pass) against one whole forward pass each."""
    from probing.analyses.ablation import accumulator as ablation
    from probing.analyses.ablation.accumulator import AblationAccumulator
    from probing.analyses.ablation.conditions import INTACT, Condition
    from probing.analyses.ablation.metrics import METRICS
    from probing.engine.passes import run_pass
    from probing.naming import head_name

    loaded = load_model(model, head="causal_lm")
    metric = METRICS["lm"]()
    metric.setup(loaded)
    conditions = [INTACT] + [Condition(head_name(layer, head), ((layer, head),))
                                      for layer in range(loaded.num_layers) for head in range(heads_per_layer)]
    seconds, states = {}, {}
    defaults = ablation.CONDITION_CELLS, ablation.SHARE_PREFIX
    try:
        for name, cells, share in (("probing", defaults[0], True), ("one whole pass each", 1, False)):
            ablation.CONDITION_CELLS, ablation.SHARE_PREFIX = cells, share
            accumulator = AblationAccumulator(metric, conditions, loaded.num_layers, loaded.num_heads, bootstrap=100)
            started = time.perf_counter()
            run_pass(loaded, InputSource.treebank(treebank, limit=limit), [accumulator])
            seconds[name] = time.perf_counter() - started
            states[name] = accumulator.state_tensors["numerator"].clone()
    finally:
        ablation.CONDITION_CELLS, ablation.SHARE_PREFIX = defaults
    reference = states["one whole pass each"]
    largest = float((states["probing"] - reference).abs().max() / reference.abs().max())
    return {"conditions": len(conditions) - 1, "layers": loaded.num_layers, "units": limit, "seconds": seconds,
            "speedup": seconds["one whole pass each"] / seconds["probing"], "largest_relative_difference": largest}


def bootstrap_weighting(sentences: int = 2001, batch: int = 32, replicates: int = 1000, repeats: int = 3) -> dict:
    """(7) Replicate sums of MiniLM-shaped per-sentence counts, weighted per batch against per chunk."""
    from probing.stats.bootstrap import CHUNK_SENTENCES, ReplicateSums

    width = 5 * (1 + 2 * 6 * 12 + 6)  # relations x (total, head-directions, offsets)
    generator = torch.Generator().manual_seed(0)
    counts = torch.randint(0, 3, (sentences, width), generator=generator).float()

    def weigh(chunk: int) -> tuple[float, torch.Tensor]:
        sums = ReplicateSums(replicates, 0, {"counts": (width,)}, chunk=chunk)
        started = time.perf_counter()
        for start in range(0, sentences, batch):
            sums.add(range(start, min(start + batch, sentences)), {"counts": counts[start : start + batch]})
        result = sums["counts"]
        return time.perf_counter() - started, result

    timings = Timings()
    results = {}
    for _ in range(repeats):
        for name, chunk in (("per batch", batch), ("per chunk", CHUNK_SENTENCES)):
            seconds, results[name] = weigh(chunk)
            timings.add(name, seconds)
    return {"sentences": sentences, "batch": batch, "chunk": CHUNK_SENTENCES, "replicates": replicates,
            "width": width, "timings": timings, "equal": bool(torch.equal(results["per batch"], results["per chunk"]))}


def compiled_kernels(loaded, treebank: str, repeats: int) -> dict:
    """(9) The compiled loops against the tensor and numpy code they replace: wall and CPU seconds, same numbers."""
    from probing.engine.pooling import WordPooling
    from probing.engine.predictions import HeadPrediction
    from probing.stats.poisson_draws import poisson_draws

    layers = []  # (prediction, pooled word attention [batch, 1, head, word, word]) per batch and layer
    batches = the_batches(loaded, InputSource.treebank(treebank))
    for batch in batches:
        pooling, prediction = WordPooling(batch.word_of_token), HeadPrediction(batch.num_words)
        token_attention = attention(loaded, batch.input_ids, batch.attention_mask)  # [batch, layer, head, q, k]
        layers += [(prediction, pooling(token_attention[:, layer : layer + 1])) for layer in range(loaded.num_layers)]
    sentences = sum(len(batch) for batch in batches)

    def timed(work) -> tuple[float, float, object]:
        wall, cpu = time.perf_counter(), time.process_time()
        made = work()
        return time.perf_counter() - wall, time.process_time() - cpu, made

    def numpy_weights():
        return np.stack([np.random.default_rng([0, index]).poisson(1.0, 1000) for index in range(sentences)], axis=1)

    work = {
        "predictions, tensor code": lambda: [prediction.vectorised(words) for prediction, words in layers],
        "predictions, compiled": lambda: [prediction.compiled(words) for prediction, words in layers],
        "weights, numpy": numpy_weights,
        "weights, compiled": lambda: poisson_draws(range(sentences), replicates=1000, seed=0),
    }
    work["predictions, compiled"]()  # compiled (or read from numba's cache) before anything is timed
    work["weights, compiled"]()
    wall, cpu, made = Timings(), Timings(), {}
    for _ in range(repeats):
        for name, run in work.items():
            seconds, processor, made[name] = timed(run)
            wall.add(name, seconds)
            cpu.add(name, processor)
    same_predictions = all(torch.equal(a, b) for a, b in zip(made["predictions, tensor code"],
                                                             made["predictions, compiled"]))
    return {"matrices": sum(words.shape[0] * words.shape[2] for _, words in layers), "sentences": sentences,
            "wall": wall, "cpu": cpu, "same_predictions": same_predictions,
            "same_weights": bool(np.array_equal(made["weights, numpy"], made["weights, compiled"]))}


def result_arrays(repeats: int) -> dict:
    """(8) The committed results' arrays: byte planes (``encode_array``) against numpy's byte layout."""
    import json

    from probing.results.schema.arrays import decode_array, encode_array

    def arrays_of(value):
        if isinstance(value, dict):
            if isinstance(value.get("data"), str) and "shape" in value:
                yield decode_array(value)
            else:
                for item in value.values():
                    yield from arrays_of(item)
        elif isinstance(value, list):
            for item in value:
                yield from arrays_of(item)

    files = sorted((REPOSITORY / "leaderboards").glob("*/results/*.json"))
    arrays = [array for path in files for array in arrays_of(json.loads(path.read_text(encoding="utf-8")))]

    timings, sizes = Timings(), {}
    for _ in range(repeats):
        for name, layout in (("byte planes", "byte-planes"), ("numpy layout", "bytes")):
            started = time.perf_counter()
            sizes[name] = sum(len(encode_array(array, layout)["data"]) for array in arrays)
            timings.add(name, time.perf_counter() - started)
    same = all(np.array_equal(decode_array(encode_array(array, layout)), array) for array in arrays
               for layout in ("byte-planes", "bytes"))
    return {"files": len(files), "arrays": len(arrays), "raw": sum(array.nbytes for array in arrays), "sizes": sizes,
            "timings": timings, "same": same}


# ---------------------------------------------------------------------------- where things are


# ---------------------------------------------------------------------------- the report


def breakdown(ratios: dict) -> list[str]:
    """The section that divides each whole run's time: what it waited for, what the model took, the rest."""
    lines = ["## Where the whole run's time goes", "",
             "| model | forward to the last attention, alone | whole run | waiting for the input | the model, in the run "
             "| pooling, predictions, counts | building the result |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, entry in ratios.items():
        t, parts = entry["timings"], entry["parts"]
        if "to_attention" not in t.runs:
            continue
        whole = t.median("whole")
        shares = " | ".join(f"{parts.median(part):.2f} s ({parts.median(part) / whole:.0%})"
                            for part in ("waiting", "model", "counting", "result"))
        lines.append(f"| {name} | {t.median('to_attention'):.2f} s | {whole:.2f} s | {shares} |")
    return lines + [
        "", "Medians over the repeats above, from each whole run's own `timing` block: the time its model waited for "
        "the next batch (`seconds_waiting_for_input`: the first chunk's reading, tokenising and batching, and any "
        "later wait), the model's forward passes (`seconds_model`), the rest of the pass (pooling, predictions and "
        "counting, between the layers and batches) and the time after the pass (the result's summaries and "
        "arrays). The model in the run against the model alone is what the batching thread beside it costs the "
        "model on the same cores.", ""]


def render(measured: dict, context: dict, command: str) -> str:
    lines = [
        "# Benchmarks",
        "",
        f"Made by `{command}` on {context['date']}; every number below comes from that run.",
        "",
        f"Machine: {machine_line(context['machine'])}. Load average "
        f"(1, 5, 15 min) before: {', '.join(f'{v:.2f}' for v in context['load_before'])}; after: "
        f"{', '.join(f'{v:.2f}' for v in context['load_after'])}. Device: {context['device']}.",
        "",
    ]
    if measured.get("ratios"):
        lines += ["## The whole run against the bare forward pass", "",
                  "| model | treebank | units | repeats | bare forward | whole run | whole / bare | without bootstrap |"
                  " target | whole / forward to the last attention |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for name, entry in measured["ratios"].items():
            t = entry["timings"]
            nb = f"{entry['ratio_no_bootstrap']:.3f}" if entry["ratio_no_bootstrap"] else "-"
            lines.append(f"| {name} | {entry['treebank']} | {entry['units']} | {len(t.runs['bare'])} | "
                         f"{t.median('bare'):.2f} s ({t.spread('bare')}) | {t.median('whole'):.2f} s "
                         f"({t.spread('whole')}) | {entry['ratio']:.3f} | {nb} | "
                         f"{verdict(entry['ratio'], TARGETS.get(name, 1.10))} | "
                         + (f"{entry['ratio_to_attention']:.3f} |" if entry.get("ratio_to_attention") else "- |"))
        lines += ["", "Whole / bare is the median of the per-repeat ratios (the runs of a repeat are back to "
                      "back). The bare forward pass is the whole model with `output_attentions=True`, as one's own "
                      "loop would run it. The whole run reads and validates the treebank, tokenises, batches (ahead "
                      "of the model, in a thread), runs the model up to the last layer's attention (its feed-forward "
                      "block and what follows are never needed, so they are not computed), pools, predicts, counts "
                      "with 1000 bootstrap replicates and builds the result. The last column divides the whole run "
                      "by that shortened forward pass alone: what everything but the model costs.", ""]
        lines += breakdown(measured["ratios"])
    if measured.get("loop"):
        entry = measured["loop"]
        lines += ["## Pooling and scoring against the plain loop", "",
                  f"On {entry['units']} sentences' precomputed attention, the vectorised pooling and scoring took "
                  f"{entry['vectorised']:.2f} s and the reference code's plain loop {entry['loop']:.2f} s: "
                  f"{entry['speedup']:.0f} times faster, {verdict(entry['speedup'], LOOP_TARGET, at_most=False)}. "
                  f"The two agree on the pair totals ({'equal' if entry['totals_equal'] else 'DIFFERENT'}) and on "
                  f"{entry['cells'] - entry['differing']} of {entry['cells']} head cells.", ""]
    if measured.get("memory"):
        lines += ["## Memory flat over a long treebank, time kept", "", memory_report(measured["memory"]), ""]
    if measured.get("trees"):
        entry = measured["trees"]
        lines += ["## Tree decoding against the forward pass", "",
                  f"Every head and direction of all-MiniLM-L6-v2, max and mst trees, on {entry['units']} sentences: "
                  f"decoding {entry['decode']:.2f} s, the forward pass it reads {entry['forward']:.2f} s "
                  f"({entry['ratio']:.2f} times), {verdict(entry['ratio'], TREES_TARGET)}.", ""]
    if measured.get("norms"):
        t = measured["norms"]["timings"]
        extra = t.ratio("whole", "whole_weights")
        lines += ["## Norm-based attention", "",
                  f"The whole run under `--attention norms` took {t.median('whole'):.2f} s against "
                  f"{t.median('whole_weights'):.2f} s under raw weights in the same repeats ({extra:.3f} times, the "
                  f"median of the paired ratios), {verdict(extra, NORMS_TARGET)}.", ""]
    if measured.get("ablation"):
        entry = measured["ablation"]
        lines += ["## Ablation: conditions that share the intact model's lower layers", "",
                  f"SmolLM2-135M-Instruct, `--metric lm`, {entry['conditions']} single-head conditions (the same "
                  f"number of heads in each of its {entry['layers']} layers, as `--each-head` has) and the intact "
                  f"model on {entry['units']} sentences: {entry['seconds']['probing']:.1f} s as `probing ablate` "
                  f"runs them, {entry['seconds']['one whole pass each']:.1f} s with one whole forward pass per "
                  f"condition: {entry['speedup']:.2f} times as fast. The losses agree to "
                  f"{entry['largest_relative_difference']:.1e} (relative). The gain is the layers below each "
                  "condition's disabled head, taken from the intact model's pass instead of recomputed (on a CPU "
                  "conditions are stacked only to 2^16 attention cells a pass: bigger stacks cost time there, "
                  "\"Affordable heavy runs\" below).", ""]
    if measured.get("weighting"):
        entry = measured["weighting"]
        t = entry["timings"]
        lines += ["## The bootstrap's weighting", "",
                  f"Per-sentence counts of all-MiniLM-L6-v2's shape ({entry['width']} per sentence) for "
                  f"{entry['sentences']} sentences, weighted into {entry['replicates']} replicate sums: "
                  f"{t.median('per batch'):.2f} s a batch of {entry['batch']} at a time, "
                  f"{t.median('per chunk'):.2f} s a chunk of {entry['chunk']} at a time, as probing does "
                  f"({t.median('per batch') / t.median('per chunk'):.1f} times as fast; medians of "
                  f"{len(t.runs['per chunk'])}). The sums are "
                  f"{'identical' if entry['equal'] else 'DIFFERENT'}.", ""]
    if measured.get("arrays"):
        entry = measured["arrays"]
        t, planes, plain = entry["timings"], entry["sizes"]["byte planes"], entry["sizes"]["numpy layout"]
        lines += ["## Result arrays", "",
                  f"The {entry['arrays']} arrays of the {entry['files']} committed leaderboard results "
                  f"({entry['raw'] / 1e6:.0f} MB of numbers), encoded as probing writes them (byte planes, zlib level "
                  f"6, base64): {planes / 1e6:.1f} MB in {t.median('byte planes'):.2f} s; zlib level 6 over numpy's "
                  f"byte layout, as files before byte planes held them: {plain / 1e6:.1f} MB in "
                  f"{t.median('numpy layout'):.2f} s ({planes / plain:.2f} of the size, "
                  f"{t.median('numpy layout') / t.median('byte planes'):.1f} times as fast; medians of "
                  f"{len(t.runs['byte planes'])}). Both decode to the same numbers: "
                  f"{'yes' if entry['same'] else 'NO'}.", ""]
    if measured.get("kernels"):
        entry = measured["kernels"]
        wall, cpu = entry["wall"], entry["cpu"]

        def pair(name: str) -> str:
            return f"{wall.median(name):.3f} s ({cpu.median(name):.3f} s of CPU)"

        lines += ["## Predictions and bootstrap weights compiled", "",
                  f"Head predictions of all-MiniLM-L6-v2 on en_ewt dev ({entry['matrices']} head matrices of pooled "
                  f"word attention, both directions): the tensor code {pair('predictions, tensor code')}, the "
                  f"compiled pass {pair('predictions, compiled')}; the predictions are "
                  f"{'identical' if entry['same_predictions'] else 'DIFFERENT'}. The bootstrap's Poisson weights of "
                  f"{entry['sentences']} sentences, 1000 replicates: numpy, one generator per sentence, "
                  f"{pair('weights, numpy')}; compiled, {pair('weights, compiled')}; the draws are "
                  f"{'identical' if entry['same_weights'] else 'DIFFERENT'}. Medians of {len(wall.runs['weights, numpy'])}; "
                  "the tensor code runs on every core, the compiled loops on one (the other stays free for the "
                  "thread that reads the input).", ""]
    lines += ["## Not measured here", ""]
    missing = context["missing"] or ["nothing"]
    lines += [f"- {item}" for item in missing] + [""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="every measurement on every checkpoint present")
    parser.add_argument("--output", help="write the report here (default: print it)")
    parser.add_argument("--repeats", type=int, help="paired repeats (default: 3 quick, 5 full)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    parser.add_argument("--quick", action="store_true",
                        help="the device check instead (benchmarks/gpu_check.py): counts against the CPU's, whole run / "
                             "forward, sentences/s, peak memory, float32 and bfloat16, under 8 minutes on one GPU")
    parser.add_argument("--model", action="append", help="with --quick: a checkpoint folder to check (repeatable; "
                                                         "default: the four of $PROBING_MODELS)")
    parser.add_argument("--limit", type=int, default=DEVICE_CHECK_LIMIT,
                        help=f"with --quick: sentences per run (default: {DEVICE_CHECK_LIMIT})")
    parser.add_argument("--memory", action="store_true",
                        help="section 3 alone: peak memory of probing score on en_ewt dev and on it four times over "
                             "(all-MiniLM-L6-v2), with the time of the whole run against a bare forward pass of the "
                             "same sentences (all-MiniLM-L6-v2 fourfold, all-mpnet-base-v2 once), fresh processes "
                             "(benchmarks/memory.py; about 15 minutes on two cores)")
    parser.add_argument("--settings", action="store_true",
                        help="with --memory: also rows for fixed mmap thresholds (128 KiB, 4 MiB, 64 MiB), the table "
                             "the shipped allocator setting was chosen from (about 35 minutes more)")
    args = parser.parse_args(argv)
    if args.quick:
        return device_check(args)
    if args.memory:
        treebank, model = ewt_dev(), model_folder("minilm")
        if treebank is None or model is None:
            raise SystemExit("benchmarks: --memory needs en_ewt dev and all-MiniLM-L6-v2 (PROBING_TREEBANKS, "
                             "PROBING_MODELS)")
        context = {"machine": machine(), "load_before": os.getloadavg()}
        report = memory_report(memory_and_time(model, model_folder("mpnet"), Path(treebank), args.repeats or 3,
                                               settings=args.settings, log=lambda line: print(line, file=sys.stderr)))
        print(f"Made by `python benchmarks/run.py --memory{' --settings' if args.settings else ''}` on "
              f"{_dt.date.today().isoformat()}; {machine_line(context['machine'])}; load average before "
              f"{context['load_before'][0]:.2f}, after {os.getloadavg()[0]:.2f}.\n\n{report}")
        return 0
    repeats = args.repeats or (5 if args.full else 3)
    treebank = ewt_dev()
    missing = []
    if treebank is None:
        missing.append("en_ewt dev is not available (set PROBING_TREEBANKS or run probing data fetch en_ewt): "
                       "the quick run used the sample treebank")
    models = {short: model_folder(short) for short in FOLDERS}
    if not models["minilm"]:
        from probing.model.loading import default_model_path

        models["minilm"] = default_model_path()
    for short, folder in models.items():
        if folder is None:
            missing.append(f"{FOLDERS[short]}: not in $PROBING_MODELS")
    limit = None if args.full else 300
    quick_treebank = treebank or str(sample_treebank_path())
    estimate = "about 3 minutes" if not args.full else "about 40 minutes on two CPU cores"
    print(f"benchmarks: {'full' if args.full else 'quick'} run, {estimate}", file=sys.stderr)
    context = {"date": _dt.date.today().isoformat(), "machine": machine(), "load_before": os.getloadavg(),
               "device": args.device, "missing": missing}
    measured: dict = {"ratios": {}}
    for short in (("minilm", "mpnet", "smollm2") if args.full else ("minilm",)):
        if not models[short]:
            continue
        print(f"ratio: {FOLDERS[short]}", file=sys.stderr)
        loaded = load_model(models[short], device=args.device)
        entry = ratios(loaded, quick_treebank if not args.full else treebank, limit, repeats)
        entry["treebank"] = "en_ewt dev" if treebank else "sample"
        if limit:
            entry["treebank"] += f" (first {limit})"
        measured["ratios"][FOLDERS[short]] = entry
        if short == "minilm" and args.full:
            print("norms", file=sys.stderr)
            measured["norms"] = ratios(loaded, treebank, limit, repeats, attention_reading="norms", variants=False)
            print("pooling vs loop", file=sys.stderr)
            measured["loop"] = pooling_against_loop(loaded, treebank, 500)
            print("trees", file=sys.stderr)
            measured["trees"] = tree_decoding(loaded, treebank, None)
            print("memory", file=sys.stderr)
            measured["memory"] = memory_and_time(models[short], models["mpnet"], Path(treebank), repeats,
                                                 log=lambda line: print(line, file=sys.stderr))
            print("bootstrap weighting", file=sys.stderr)
            measured["weighting"] = bootstrap_weighting(repeats=repeats)
            print("  (8) result arrays", file=sys.stderr)
            measured["arrays"] = result_arrays(repeats)
            print("  (9) compiled predictions and weights", file=sys.stderr)
            measured["kernels"] = compiled_kernels(loaded, treebank, repeats)
    if args.full and models["smollm2"]:
        print("ablation", file=sys.stderr)
        measured["ablation"] = ablation_sharing(models["smollm2"], treebank, 16, 2)
    if not args.full:
        missing.append("the full measurements (benchmarks/run.py --full)")
    if args.device == "cpu":
        missing.append("a GPU: no GPU was used; run with --device cuda on a machine that has one")
    context["load_after"] = os.getloadavg()
    command = "python benchmarks/run.py" + (" --full" if args.full else "") + (
        f" --repeats {args.repeats}" if args.repeats else "") + (
        f" --device {args.device}" if args.device != "cpu" else "")
    report = render(measured, context, command)
    if args.output:
        from benchmarks.heavy import replace_section, section_of
        from probing.atomic import write_text_atomic

        before = Path(args.output).read_text(encoding="utf-8") if Path(args.output).is_file() else ""
        if section_of(before):  # the heavy runs' section, made by its own command (benchmarks/heavy.py), is kept
            report = replace_section(report, section_of(before))

        print(f"wrote {write_text_atomic(report, args.output)}", file=sys.stderr)
    else:
        print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
