"""``--metric minimal-pairs``: BLiMP accuracy under every condition, its units the minimal pairs.

A pair is read and scored as ``probing pairs`` does (probing.data.minimal_pairs, probing.analyses.pairs.scoring:
one context token, the plain text, the float32 sum of token log-probabilities; right when log p(good) >
log p(bad), a tie wrong), every condition's copies of a batch in one forward pass; a batch is consecutive pairs
in reading order, padded as the engine pads (probing.engine.batching), and the accumulator sees it as every
pass's accumulators see theirs (probing.engine.accumulator.BatchView). The pass keeps one bit
per (condition, pair): right or not; the parts and their bootstrap come from those bits
(probing.analyses.ablation.pair_parts).

>>> from probing.data.minimal_pairs import MinimalPair
>>> batch = next(pair_batches(None, [MinimalPair("a", "syntax", "x y", "x")], 8, encoded=[[1, 7, 8], [1, 7]]))
>>> batch.input_ids.tolist(), batch.rows
([[1, 7, 8], [1, 7, 0]], [0])
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from probing.analyses.pairs.scoring import encode, scored_log_probs
from probing.engine.accumulator import BatchView
from probing.engine.batching import padded_rows
from probing.model.tokenizers import plain_tokenizer


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


def pair_batches(tokenizer, pairs, batch_size: int, encoded=None):
    """``batch_size`` pairs at a time (2 x batch_size sentences), in reading order; ``encoded``: the sentences'
    ids (good, bad, good, ...) when already tokenized."""
    encoded = encoded or encode(tokenizer, [text for pair in pairs for text in (pair.good, pair.bad)])
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        ids, mask = padded_rows(encoded[2 * start : 2 * (start + len(chunk))])
        yield PairBatch(ids, mask, list(range(start, start + len(chunk))))


def sentence_scores(loaded, batch: PairBatch, copies: int, logit_cells: int) -> torch.Tensor:
    """log p(sentence) [copy, sentence] of ``copies`` stacked copies of ``batch`` (heads disabled by the caller).

    The LM head runs on the last hidden state at the positions that predict a real token, a chunk of
    ``logit_cells`` (positions x vocabulary) at a time, as ``probing pairs`` scores (scored_log_probs).
    """
    ids = batch.input_ids.repeat(copies, 1).to(loaded.device)  # [copies * sentence, token], copy-major
    mask = batch.attention_mask.repeat(copies, 1).to(loaded.device)
    hidden = loaded.base(input_ids=ids, attention_mask=mask).last_hidden_state  # [rows, token, hidden]
    scores = scored_log_probs(loaded.model.get_output_embeddings(), hidden, ids, mask, logit_cells)
    return scores.view(copies, len(batch)).cpu()


def pairs_pass(accumulator, loaded, pairs, batch_size: int):
    """Every pair under every condition of ``accumulator`` (stacked copies per forward pass); its statistics."""
    from probing.results.pass_statistics import PassStats

    started = time.perf_counter()
    tokenizer = plain_tokenizer(loaded)
    stats = PassStats(units_total=len(pairs), units_in_part=len(pairs), units_used=len(pairs))
    with torch.inference_mode():
        for batch in pair_batches(tokenizer, pairs, batch_size):
            accumulator.update(BatchView(batch, None, loaded))
            stats.batches += 1
            stats.max_length = max(stats.max_length, batch.input_ids.shape[1])
    stats.seconds_total = stats.seconds_model = time.perf_counter() - started
    return stats


def pairs_input_block(pairs, described: dict) -> dict:
    """The result's ``input``: BLiMP at its pinned commit (as ``probing pairs`` records it)."""
    return {**described, "units_total": len(pairs), "units_used": len(pairs), "skipped": {}}
