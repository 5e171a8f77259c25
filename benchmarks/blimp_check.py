"""BLiMP decisions with each pair's shared prefix computed once, against the whole sentences (issue 55).

Two checks, each a model at a time:

    python -m benchmarks.blimp_check --sample 20
        the first 20 pairs of each of the 67 paradigms, for SmolLM2-135M-Instruct and gemma-3-270m, scored here
        both ways (probing.analyses.pairs.scoring: pair_log_probs, as ``probing pairs`` scores now, and
        sentence_log_probs, every sentence whole): decisions equal, the largest |difference| of log p, and the
        CPU seconds of each (one torch thread).

    python -m benchmarks.blimp_check --committed leaderboards/blimp/results/*.json --state check.json
        all pairs of every paradigm of each committed result (67 x 1,000), scored as ``probing pairs`` scores now
        after the result's own context, against the result's per-pair decisions (``pairs.paradigms[UID].right``)
        and log-probabilities. Hours on a CPU: the state file keeps every paradigm checked (written after each),
        so a stopped run started again with the same --state goes on where it stopped; the summary is printed at
        the end (and alone with --summary).

    python -m benchmarks.blimp_check --ablate 10
        ``ablate --metric minimal-pairs`` on SmolLM2 (10 pairs of each of four paradigms, five conditions), the
        prefix shared and not: CPU seconds and whether every condition's right/wrong bits are the same.

Checkpoints come from ``$PROBING_MODELS`` (the folder named as the result's model), BLiMP from ``$PROBING_BLIMP``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from benchmarks.common import Clock, model_folder, one_thread

SAMPLE_MODELS = ("smollm2", "gemma3")


def _load(folder: str):
    from probing.model.loading import load_model
    from probing.model.tokenizers import plain_tokenizer

    loaded = load_model(folder, head="causal_lm")
    return loaded, plain_tokenizer(loaded)


def _all_paradigms() -> list[str]:
    from probing.data.minimal_pairs import PARADIGMS

    return list(PARADIGMS)


def sample(limit: int, models=SAMPLE_MODELS, batch_size: int = 32) -> list[dict]:
    """Both ways on the first ``limit`` pairs of every paradigm, per model at hand."""
    from probing.analyses.pairs.scoring import pair_log_probs, sentence_log_probs
    from probing.data.minimal_pairs import read_pairs

    pairs, _ = read_pairs(_all_paradigms(), None, limit)
    sentences = [text for pair in pairs for text in (pair.good, pair.bad)]
    entries = []
    for short in models:
        folder = model_folder(short)
        if folder is None:
            print(f"{short}: not in $PROBING_MODELS, skipped", file=sys.stderr)
            continue
        loaded, tokenizer = _load(folder)
        scores, seconds = {}, {}
        with one_thread():
            for name, scorer in (("shared", pair_log_probs), ("whole", sentence_log_probs)):
                with Clock() as clock:
                    scores[name] = scorer(loaded.model, tokenizer, sentences, batch_size=batch_size)
                seconds[name] = (clock.cpu, clock.wall)
                print(f"{loaded.name}: {name} {clock.cpu:.1f} s CPU ({clock.wall:.1f} s wall)", file=sys.stderr)
        shared, whole = scores["shared"], scores["whole"]
        same = sum((g1 > b1) == (g2 > b2) for g1, b1, g2, b2 in zip(shared[0::2], shared[1::2], whole[0::2], whole[1::2]))
        entries.append({"model": loaded.name, "pairs": len(pairs), "same": same,
                        "largest": max(abs(a - b) for a, b in zip(shared, whole)), "seconds": seconds})
    return entries


def render_sample(entries: list[dict], limit: int) -> str:
    lines = ["| model | pairs | decisions the same | largest \\|Δ log p\\| | shared prefix | whole sentences | "
             "whole / shared |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for entry in entries:
        (shared, shared_wall), (whole, whole_wall) = entry["seconds"]["shared"], entry["seconds"]["whole"]
        lines.append(f"| {entry['model']} | {entry['pairs']} (67 x {limit}) | {entry['same']} of {entry['pairs']} | "
                     f"{entry['largest']:.2e} nats | {shared:.1f} s ({shared_wall:.1f} s wall) | {whole:.1f} s "
                     f"({whole_wall:.1f} s wall) | {whole / shared:.2f} |")
    return "\n".join(lines)


def ablation(limit: int, repeats: int = 2) -> dict | None:
    """``ablate --metric minimal-pairs`` on SmolLM2, the first ``limit`` pairs of the minicons benchmark's four
    paradigms, the intact model and one head disabled in each of layers 1, 11, 21 and 30 (the lower layers reused
    from the intact pass, as the run reuses them), with the prefix shared and without, alternately."""
    import torch

    import probing.analyses.ablation.accumulator as accumulator_module
    from benchmarks.pairs import PairsSpec
    from probing.analyses.ablation.conditions import INTACT, Condition
    from probing.analyses.ablation.metrics import MinimalPairAccuracy
    from probing.analyses.ablation.minimal_pairs import encoded_pairs
    from probing.data.minimal_pairs import read_pairs
    from probing.engine.pair_passes import run_pair_pass
    from probing.model.loading import load_model
    from probing.model.pair_rows import PairScoring

    folder = model_folder("smollm2")
    if folder is None:
        return None
    loaded = load_model(folder, head="causal_lm")
    pairs, _ = read_pairs(PairsSpec().paradigms, None, limit)
    conditions = [INTACT] + [Condition(f"{layer + 1}-1", ((layer, 0),)) for layer in (0, 10, 20, 29)]
    seconds: dict[bool, list[float]] = {True: [], False: []}
    right = {}
    with one_thread():
        for _ in range(repeats):
            for share in (True, False):
                metric = MinimalPairAccuracy.of_pairs(pairs)
                metric.setup(loaded)
                metric.scoring = PairScoring(split=True, share=share, cells=metric.scoring.cells)
                accumulator = accumulator_module.AblationAccumulator(metric, conditions, loaded.num_layers,
                                                                     loaded.num_heads, bootstrap=10, causal=True)
                with Clock() as clock:
                    run_pair_pass(loaded, encoded_pairs(loaded, pairs), [accumulator], pairs_per_batch=16,
                                  by_length=False)
                seconds[share].append(clock.cpu)
                right[share] = accumulator.state_tensors["right"]
    return {"model": loaded.name, "pairs": len(pairs), "conditions": len(conditions),
            "shared": min(seconds[True]), "whole": min(seconds[False]), "same": torch.equal(right[True], right[False])}


def committed(results: list[str], state_path: str, batch_size: int = 32) -> dict:
    """Every paradigm of every result not yet in the state file, scored now and compared; the state."""
    from probing.analyses.pairs.scoring import pair_log_probs
    from probing.atomic import write_text_atomic
    from probing.data.minimal_pairs import read_pairs

    state_file = Path(state_path)
    state = json.loads(state_file.read_text(encoding="utf-8")) if state_file.is_file() else {}
    for path in results:
        result = json.loads(Path(path).read_text(encoding="utf-8"))
        key = Path(path).name
        done = state.setdefault(key, {})
        todo = [uid for uid in result["pairs"]["paradigms"] if uid not in done]
        if not todo:
            continue
        folder = Path(os.environ.get("PROBING_MODELS", "")) / result["model"]["name"]
        if not (folder / "config.json").is_file():
            print(f"{key}: {folder} is not a checkpoint folder, skipped", file=sys.stderr)
            continue
        loaded, tokenizer = _load(str(folder))
        limit, context = result["config"]["limit"], result["config"]["context"]
        for uid in todo:
            entry = result["pairs"]["paradigms"][uid]
            pairs, _ = read_pairs([uid], None, limit)
            begun = time.perf_counter()
            scores = pair_log_probs(loaded.model, tokenizer, [t for pair in pairs for t in (pair.good, pair.bad)],
                                    batch_size=batch_size, device=loaded.device, context=context)
            right = [good > bad for good, bad in zip(scores[0::2], scores[1::2])]
            recorded = [*entry["log_p_good"], *entry["log_p_bad"]]
            done[uid] = {"pairs": len(pairs), "differing": [i for i, (a, b) in enumerate(zip(right, entry["right"]))
                                                              if a != b],
                         "largest": max(abs(a - b) for a, b in zip([*scores[0::2], *scores[1::2]], recorded)),
                         "seconds": round(time.perf_counter() - begun, 2)}
            write_text_atomic(json.dumps(state, indent=1) + "\n", state_file)
            print(f"{key} {uid}: {len(pairs) - len(done[uid]['differing'])} of {len(pairs)} the same, largest "
                  f"|Δ log p| {done[uid]['largest']:.2e}", file=sys.stderr, flush=True)
    return state


def render_state(state: dict) -> str:
    lines = ["| result | paradigms checked | pairs | decisions that differ | largest \\|Δ log p\\| | seconds |",
             "| --- | --- | --- | --- | --- | --- |"]
    for key, done in state.items():
        if not done:
            continue
        differing = [f"{uid}:{i}" for uid, entry in done.items() for i in entry["differing"]]
        lines.append(f"| {key} | {len(done)} | {sum(e['pairs'] for e in done.values())} | "
                     f"{len(differing)}{' (' + ', '.join(differing[:10]) + ')' if differing else ''} | "
                     f"{max(e['largest'] for e in done.values()):.2e} nats | "
                     f"{sum(e['seconds'] for e in done.values()):.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--sample", type=int, metavar="N", help="the first N pairs of each paradigm, both ways")
    mode.add_argument("--committed", nargs="+", metavar="RESULT", help="committed `probing pairs` results")
    mode.add_argument("--ablate", type=int, metavar="N", help="ablate --metric minimal-pairs on N pairs of each "
                      "of four paradigms, shared and whole")
    parser.add_argument("--state", help="with --committed: the file that keeps the paradigms checked")
    parser.add_argument("--summary", action="store_true", help="with --state: print what it holds, score nothing")
    args = parser.parse_args(argv)
    if args.committed:
        if not args.state:
            parser.error("--committed needs --state FILE (where the paradigms checked are kept)")
        if args.summary:
            state = json.loads(Path(args.state).read_text(encoding="utf-8")) if Path(args.state).is_file() else {}
        else:
            state = committed(args.committed, args.state)
        print(render_state(state))
        return 0
    if args.ablate:
        entry = ablation(args.ablate)
        if entry is None:
            print("SmolLM2 is not in $PROBING_MODELS", file=sys.stderr)
            return 1
        print(f"{entry['model']}, {entry['pairs']} pairs x {entry['conditions']} conditions: shared {entry['shared']:.2f} "
              f"s, whole {entry['whole']:.2f} s CPU (the lower of 2), whole / shared {entry['whole'] / entry['shared']:.2f}; "
              f"every condition's bits the same: {entry['same']}")
        return 0
    print(render_sample(sample(args.sample), args.sample))
    return 0


if __name__ == "__main__":
    sys.exit(main())
