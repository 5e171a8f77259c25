"""``--metric minimal-pairs``: BLiMP accuracy under every condition, its units the minimal pairs.

A pair is read and scored as ``probing pairs`` does (probing.data.minimal_pairs, probing.analyses.pairs.scoring:
one context token, the plain text, the float32 sum of token log-probabilities; right when log p(good) >
log p(bad), a tie wrong). The pass keeps one bit per (condition, pair): right or not. From those bits come
the parts: ``overall`` (the mean of the paradigm accuracies, BLiMP's convention), ``field:NAME`` (the share
of a field's pairs right) and ``phenomenon:NAME`` (the same over BLiMP's ``linguistics_term``: the
phenomenon a relation's heads may serve, such as subject_verb_agreement). The bootstrap resamples pairs
within each paradigm with the draws of ``probing pairs`` (seeded by (seed, paradigm index)), and every
condition is counted on the same draws: a condition's change from the intact model has a paired interval.

>>> from probing.data.minimal_pairs import MinimalPair
>>> pairs = [MinimalPair("a", "syntax", "", "", "island_effects")] * 2 + [MinimalPair("b", "morphology", "", "", "x")]
>>> layout = layout_of(pairs)
>>> part_names(layout)
['overall', 'field:syntax', 'field:morphology', 'phenomenon:island_effects', 'phenomenon:x']
>>> values, _ = pair_scores(np.array([[1, 0, 1]]), layout, bootstrap=0, seed=0)
>>> values[0].tolist()
[0.75, 0.5, 1.0, 0.5, 1.0]
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from probing.analyses.pairs.scoring import encode, padded, paradigm_draws, plain_tokenizer, row_log_probs


def layout_of(pairs) -> list[dict]:
    """The paradigms in reading order, each {uid, field, term, pairs}: its pairs are consecutive rows."""
    layout: list[dict] = []
    for pair in pairs:
        if not layout or layout[-1]["uid"] != pair.uid:
            layout.append({"uid": pair.uid, "field": pair.field, "term": pair.term, "pairs": 0})
        layout[-1]["pairs"] += 1
    return layout


def part_names(layout: list[dict]) -> list[str]:
    """overall, then each field, then each phenomenon, in order of first appearance."""
    fields = dict.fromkeys(entry["field"] for entry in layout)
    terms = dict.fromkeys(entry["term"] for entry in layout)
    return ["overall"] + [f"field:{name}" for name in fields] + [f"phenomenon:{name}" for name in terms]


def _multiplicities(size: int, bootstrap: int, seed: int, index: int) -> np.ndarray:
    """How often each pair of a paradigm is drawn in each replicate: [replicate, pair]."""
    draws = paradigm_draws(size, bootstrap, seed, index)  # [replicate, size] rows drawn
    counts = np.zeros((bootstrap, size))
    np.add.at(counts, (np.arange(bootstrap)[:, None], draws), 1)
    return counts


def pair_scores(right, layout: list[dict], *, bootstrap: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """values [condition, part] and replicates [replicate, condition, part] from ``right`` [condition, pair].

    The intact row equals ``probing pairs``'s figures on the same pairs: the same draws and the same sums.
    """
    right = np.asarray(right, dtype=np.float64)
    conditions, names = right.shape[0], part_names(layout)
    correct = np.zeros((len(layout), conditions))                # [paradigm, condition]
    boot_correct = np.zeros((len(layout), bootstrap, conditions))  # [paradigm, replicate, condition]
    start = 0
    for index, entry in enumerate(layout):
        rows = right[:, start : start + entry["pairs"]]          # [condition, pair]
        correct[index] = rows.sum(axis=1)
        if bootstrap:
            boot_correct[index] = _multiplicities(entry["pairs"], bootstrap, seed, index) @ rows.T
        start += entry["pairs"]
    sizes = np.array([entry["pairs"] for entry in layout], dtype=np.float64)  # [paradigm]
    values = np.zeros((conditions, len(names)))
    replicates = np.zeros((bootstrap, conditions, len(names)))
    values[:, 0] = (correct / sizes[:, None]).mean(axis=0)
    replicates[:, :, 0] = (boot_correct / sizes[:, None, None]).mean(axis=0)
    for p, name in enumerate(names[1:], start=1):
        kind, _, label = name.partition(":")
        members = [i for i, entry in enumerate(layout) if entry["field" if kind == "field" else "term"] == label]
        total = sizes[members].sum()
        values[:, p] = correct[members].sum(axis=0) / total
        replicates[:, :, p] = boot_correct[members].sum(axis=0) / total
    return values, replicates


@dataclass
class PairBatch:
    """Sentences of consecutive pairs (good, bad, good, bad, ...) as the stacked conditions need them.

    ``input_ids``, ``attention_mask`` [sentence, token], right-padded; ``rows``: the pairs' numbers.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    rows: list[int]

    def __len__(self) -> int:
        return len(self.input_ids)


def pair_batches(tokenizer, pairs, batch_size: int):
    """``batch_size`` pairs at a time (2 x batch_size sentences), in reading order."""
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        ids, mask = padded(encode(tokenizer, [text for pair in chunk for text in (pair.good, pair.bad)]))
        yield PairBatch(ids, mask, list(range(start, start + len(chunk))))


def sentence_scores(loaded, batch: PairBatch, copies: int, logits_of, logit_cells: int) -> torch.Tensor:
    """log p(sentence) [copy, sentence] of ``copies`` stacked copies of ``batch`` (heads disabled by the caller).

    The LM head runs on row chunks of the last hidden state, so that the vocabulary never multiplies the
    whole stacked batch (``logit_cells``: rows x tokens x vocabulary per chunk).
    """
    ids = batch.input_ids.repeat(copies, 1).to(loaded.device)  # [copies * sentence, token], copy-major
    mask = batch.attention_mask.repeat(copies, 1).to(loaded.device)
    hidden = loaded.base(input_ids=ids, attention_mask=mask).last_hidden_state  # [rows, token, hidden]
    vocabulary = loaded.model.get_output_embeddings().weight.shape[0]
    chunk = max(1, logit_cells // max(1, hidden.shape[1] * vocabulary))
    scores = [row_log_probs(logits_of(loaded, hidden[start : start + chunk]), ids[start : start + chunk],
                            mask[start : start + chunk]) for start in range(0, hidden.shape[0], chunk)]
    return torch.cat(scores).view(copies, len(batch)).cpu()


def pairs_pass(accumulator, loaded, pairs, batch_size: int):
    """Every pair under every condition of ``accumulator`` (stacked copies per forward pass); its statistics."""
    from types import SimpleNamespace

    from probing.engine.passes import PassStats

    started = time.perf_counter()
    tokenizer = plain_tokenizer(loaded)
    stats = PassStats(units_total=len(pairs), units_in_part=len(pairs), units_used=len(pairs))
    with torch.inference_mode():
        for batch in pair_batches(tokenizer, pairs, batch_size):
            accumulator.update(SimpleNamespace(loaded=loaded, batch=batch))
            stats.batches += 1
            stats.max_length = max(stats.max_length, batch.input_ids.shape[1])
    stats.seconds_total = stats.seconds_model = time.perf_counter() - started
    return stats


def pairs_input_block(pairs, described: dict) -> dict:
    """The result's ``input``: BLiMP at its pinned commit (as ``probing pairs`` records it)."""
    return {**described, "units_total": len(pairs), "units_used": len(pairs), "skipped": {}}
