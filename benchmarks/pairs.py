"""Minimal pairs against minicons: the same decisions, and at least its throughput, on the same model and pairs.

minicons (Misra 2022, on PyPI) is a well-known scorer written apart from probing: its ``IncrementalLMScorer``
with ``bos_token=True`` and a summed reduction gives log p(sentence) after the BOS token, the rule
``probing pairs`` follows (docs/minimal-pairs.md). Both score every sentence of the same pairs with the
same checkpoint, each loaded as its user would load it, 32 sentences a batch; a pair is right when
log p(good) > log p(bad). Compared: the decisions (ties aside: a pair either scorer ties is not compared) and
pairs per second of each (median of paired repeats, CPU seconds on one thread, wall seconds beside them).

    pip install -e '.[bench]'                    # minicons, a benchmark-only extra
    python -m benchmarks.heavy --only pairs

minicons is installed without its own pins of torch and transformers (the extra names only it and the one
package it imports beyond probing's own: ``pip install --no-deps minicons wonderwords`` does the same).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from benchmarks.common import Clock, Timings, model_folder, one_thread, version

PAIRS_TARGET = 1.5
"""probing's pairs per second at least 1.5 times minicons' (issue 55: 1.0 in issue 43, 1.30 measured then; each
pair's shared prefix now computed once)."""


@dataclass(frozen=True)
class PairsSpec:
    model: str = "smollm2"
    paradigms: tuple[str, ...] = ("determiner_noun_agreement_1", "regular_plural_subject_verb_agreement_1",
                                  "anaphor_gender_agreement", "distractor_agreement_relational_noun")
    limit: int = 50  # pairs of each paradigm
    batch_size: int = 32  # sentences per forward pass, both scorers


def ours(loaded, tokenizer, sentences: list[str], batch_size: int) -> list[float]:
    """log p(sentence) as ``probing pairs`` scores it (each pair's shared prefix once)."""
    from probing.analyses.pairs.scoring import pair_log_probs

    return pair_log_probs(loaded.model, tokenizer, sentences, batch_size=batch_size, device=loaded.device)


def theirs(scorer, sentences: list[str], batch_size: int) -> list[float]:
    """log p(sentence) as minicons scores it: after the BOS token, the tokens' log-probabilities summed."""
    scores: list[float] = []
    for start in range(0, len(sentences), batch_size):
        scores += scorer.sequence_score(sentences[start : start + batch_size], bos_token=True,
                                        reduction=lambda values: values.sum(0).item())
    return scores


def decisions(scores: list[float]) -> list[bool | None]:
    """Per pair (good, bad, good, bad, ... scores): right, wrong, or None for a tie."""
    return [None if good == bad else good > bad for good, bad in zip(scores[0::2], scores[1::2])]


def measure_pairs(spec: PairsSpec, repeats: int, device: str = "cpu") -> dict | None:
    """Both scorers, ``repeats`` paired times; None when minicons, the checkpoint or BLiMP is not at hand."""
    try:
        from minicons import scorer as minicons_scorer
    except ImportError:
        return None
    from probing.data.minimal_pairs import read_pairs
    from probing.errors import ProbingError
    from probing.model.loading import load_model
    from probing.model.token_scores import encode
    from probing.model.tokenizers import plain_tokenizer

    folder = model_folder(spec.model)
    if folder is None:
        return None
    try:
        pairs, _ = read_pairs(spec.paradigms, None, spec.limit)
    except ProbingError:  # BLiMP is neither in $PROBING_BLIMP nor in the cache
        return None
    sentences = [text for pair in pairs for text in (pair.good, pair.bad)]
    loaded = load_model(folder, device=device, head="causal_lm")
    tokenizer = plain_tokenizer(loaded)
    scorer = minicons_scorer.IncrementalLMScorer(folder, device=device)
    same_ids = sum(mine == [i for i, keep in zip(ids, kept) if keep]
                   for mine, ids, kept in zip(encode(tokenizer, sentences),
                                              *_minicons_ids(scorer, sentences)))
    wall, cpu, scores = Timings(), Timings(), {}
    with one_thread(device):
        ours(loaded, tokenizer, sentences[:64], spec.batch_size)  # warm-up: first calls allocate
        theirs(scorer, sentences[:64], spec.batch_size)
        for repeat in range(repeats):
            for name, run in (("probing", lambda: ours(loaded, tokenizer, sentences, spec.batch_size)),
                              ("minicons", lambda: theirs(scorer, sentences, spec.batch_size))):
                with Clock(device) as clock:
                    scores[name] = run()
                wall.add(name, clock.wall)
                cpu.add(name, clock.cpu)
            print(f"  pairs repeat {repeat + 1}/{repeats}: probing {cpu.runs['probing'][-1]:.2f} s, minicons "
                  f"{cpu.runs['minicons'][-1]:.2f} s (CPU)", file=sys.stderr, flush=True)
    mine, yours = decisions(scores["probing"]), decisions(scores["minicons"])
    compared = [(a, b) for a, b in zip(mine, yours) if a is not None and b is not None]
    largest = max(abs(a - b) for a, b in zip(scores["probing"], scores["minicons"]))
    return {"spec": spec, "name": loaded.name, "pairs": len(pairs), "sentences": len(sentences),
            "same_ids": same_ids, "compared": len(compared), "agree": sum(a == b for a, b in compared),
            "ties": len(pairs) - len(compared), "largest_difference": largest,
            "accuracy": {"probing": sum(1 for d in mine if d) / len(pairs),
                         "minicons": sum(1 for d in yours if d) / len(pairs)},
            "wall": wall, "cpu": cpu, "minicons_version": version("minicons"),
            "speed": {name: len(pairs) / cpu.median(name) for name in ("probing", "minicons")},
            "ratio": cpu.ratio("minicons", "probing")}


def _minicons_ids(scorer, sentences: list[str]) -> tuple[list[list[int]], list[list[int]]]:
    """The ids minicons reads for each sentence (with ``bos_token=True``) and which are real tokens."""
    encoded = scorer.encode(sentences, bos_token=True)
    return encoded["input_ids"].tolist(), encoded["attention_mask"].tolist()
