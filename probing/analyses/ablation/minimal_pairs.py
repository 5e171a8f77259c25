"""``--metric minimal-pairs``: BLiMP accuracy under every condition, its units the minimal pairs.

A pair is read and scored as ``probing pairs`` does (probing.data.minimal_pairs, probing.analyses.pairs.scoring:
one context token, the plain text, the float32 sum of token log-probabilities; right when log p(good) >
log p(bad), a tie wrong), every condition's copies of a batch in one forward pass; a batch is consecutive pairs
in reading order, padded as the engine pads (probing.engine.batching), and the accumulator sees it as every
pass's accumulators see theirs (probing.engine.accumulator.BatchView). Each pair's shared token prefix is
computed once per condition, one row per pair holding the prefix and both continuations, as ``probing pairs``
scores them (probing.analyses.pairs.scoring.prefix_shared_log_probs): still one forward pass per stack of
conditions, so the reuse of the intact model's lower layers (probing.model.prefix) applies as it does to any
pass. The pass keeps one bit
per (condition, pair): right or not; the parts and their bootstrap come from those bits
(probing.analyses.ablation.pair_parts).

>>> from probing.data.minimal_pairs import MinimalPair
>>> batch = next(pair_batches(None, [MinimalPair("a", "syntax", "x y", "x")], 8, encoded=[[1, 7, 8], [1, 7]]))
>>> batch.input_ids.tolist(), batch.rows, batch.pairs
([[1, 7, 8], [1, 7, 0]], [0], [([1, 7, 8], [1, 7])])
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

import torch

from probing.analyses.pairs.scoring import (
    context_token,
    encode,
    prefix_shared_log_probs,
    prefix_sharing_fits,
    scored_log_probs,
    visibility_mask,
)
from probing.engine.accumulator import BatchView
from probing.engine.batching import padded_rows
from probing.model.interventions import uniform_heads
from probing.model.tokenizers import plain_tokenizer
from probing.results.pass_statistics import BatchStats

CONTEXT = "bos"
"""What every sentence is scored after here: ``probing pairs``' default context (its ``--context bos``), the
tokenizer's BOS token, else its EOS (probing.analyses.pairs.scoring.CONTEXTS)."""


@dataclass
class PairBatch:
    """Sentences of consecutive pairs (good, bad, good, bad, ...) as the stacked conditions need them.

    ``input_ids``, ``attention_mask`` [sentence, token], right-padded; ``rows``: the pairs' numbers; ``pairs``:
    each pair's (good, bad) ids.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    rows: list[int]
    pairs: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.input_ids)


def pair_batches(tokenizer, pairs, batch_size: int, encoded=None, first: int = 0):
    """``batch_size`` pairs at a time (2 x batch_size sentences), in reading order from pair ``first`` on (where a
    resumed pass goes on); ``encoded``: the sentences' ids (good, bad, good, ...) when already tokenized."""
    encoded = encoded or encode(tokenizer, [text for pair in pairs for text in (pair.good, pair.bad)], CONTEXT)
    for start in range(first, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        sentences = encoded[2 * start : 2 * (start + len(chunk))]
        ids, mask = padded_rows(sentences)
        yield PairBatch(ids, mask, list(range(start, start + len(chunk))), list(zip(sentences[0::2], sentences[1::2])))


def sentence_scores(loaded, batch: PairBatch, heads: torch.Tensor, logit_cells: int, share: bool = False) -> torch.Tensor:
    """log p(sentence) [copy, sentence] of stacked copies of ``batch``, the heads ``heads`` [copy * sentence,
    layer, head] disabled (probing.model.interventions.uniform_heads), copy-major.

    The LM head runs on the last hidden state at the positions that predict a real token, a chunk of
    ``logit_cells`` (positions x vocabulary) at a time, as ``probing pairs`` scores (scored_log_probs). With
    ``share`` (the model's scores agree: probing.analyses.pairs.scoring.prefix_sharing_agrees), each pair's shared
    prefix is computed once (prefix_shared_log_probs) where the batch allows it (prefix_sharing_fits).
    """
    copies = len(heads) // len(batch)
    head = loaded.model.get_output_embeddings()

    def score(hidden, ids, mask):
        return scored_log_probs(head, hidden, ids, mask, logit_cells)

    def run(ids, mask, sentences, positions=None):
        if mask.dim() == 3:  # which keys each query sees (probing.analyses.pairs.scoring.pair_rows)
            mask = visibility_mask(mask, next(loaded.model.parameters()).dtype)
        with uniform_heads(loaded.model, heads[sentences]) as intervention:
            hidden = loaded.base(input_ids=ids.to(loaded.device), attention_mask=mask.to(loaded.device),
                                 position_ids=None if positions is None else positions.to(loaded.device))
        intervention.verify()
        return hidden.last_hidden_state  # [rows, token, hidden]

    if share and prefix_sharing_fits(loaded.model, batch.pairs):
        return prefix_shared_log_probs(run, score, batch.pairs, copies).cpu()
    ids, mask = batch.input_ids.repeat(copies, 1), batch.attention_mask.repeat(copies, 1)  # [copies * sentence, token]
    hidden = run(ids, mask, torch.arange(len(ids)))
    scores = score(hidden, ids.to(hidden.device), mask.to(hidden.device))
    return scores.view(copies, len(batch)).cpu()


@dataclass
class PairsRun:
    """A minimal-pairs pass as the checkpoint hooks see a pass (probing.engine.passes.Pass): its accumulators,
    statistics and identity, so that ``--checkpoint``/``--resume`` save and continue it as they do a treebank's.

    ``batching_counted`` stays empty: the pairs are batched as the model goes, and the pass counts them itself.
    """

    loaded: object
    pairs: list
    accumulators: list
    batch_size: int
    stats: object
    batching_counted: BatchStats = field(default_factory=BatchStats)

    def identity(self) -> dict:
        """Everything that decides the bits: the tool, the model, the pairs themselves, the batches they form
        and the accumulator's conditions."""
        from probing.engine.passes import plain_identity
        from probing.results.io import model_identity
        from probing.version import __version__

        digest = hashlib.sha256()
        for pair in self.pairs:
            digest.update(f"{pair.uid}\t{pair.good}\t{pair.bad}\n".encode())
        return plain_identity({"tool": __version__, "model": model_identity(self.loaded),
                       "input": {"sha256": digest.hexdigest(), "kind": "minimal-pairs", "pairs": len(self.pairs)},
                       "options": {"batch_size": self.batch_size},
                       "accumulators": {f"{index}.{accumulator.analysis}": accumulator.identity()
                                        for index, accumulator in enumerate(self.accumulators)}})


def pairs_pass(accumulator, loaded, pairs, batch_size: int, hooks=None):
    """Every pair under every condition of ``accumulator`` (stacked copies per forward pass); its statistics.

    ``hooks`` (a :class:`probing.engine.checkpointing.Checkpointer`, or None) save the bits after a batch now and
    then and, resuming, skip the pairs already scored: batches start at fixed multiples of ``batch_size``, so a
    resumed pass scores exactly the batches the uninterrupted one would have.
    """
    from probing.engine.passes import PassHooks
    from probing.results.pass_statistics import PassStats

    started = time.perf_counter()
    hooks = hooks or PassHooks()
    tokenizer = plain_tokenizer(loaded)
    encoded = encode(tokenizer, [text for pair in pairs for text in (pair.good, pair.bad)], CONTEXT)
    # the longest sentence of all the pairs, resumed or not (a resumed part's own longest would differ)
    stats = PassStats(units_total=len(pairs), max_length=max(map(len, encoded), default=0))
    run = PairsRun(loaded, pairs, [accumulator], batch_size, stats)
    done = hooks.start(run)  # pairs scored before a resumed run stopped (a multiple of batch_size)
    with torch.inference_mode():
        for batch in pair_batches(tokenizer, pairs, batch_size, encoded=encoded, first=done):
            begun = time.perf_counter()
            accumulator.update(BatchView(batch, None, loaded))
            run.stats.seconds_model += time.perf_counter() - begun  # so that a save between batches has it
            run.stats.batches += 1
            run.stats.units_in_part += len(batch.rows)
            run.stats.units_used += len(batch.rows)
            hooks.chunk_done(run, batch.rows)
    run.stats.seconds_total = time.perf_counter() - started
    hooks.finish(run)  # adds the statistics of the part before a resume
    return run.stats


def context_block(loaded) -> dict:
    """What a result's ``metric`` block says every sentence was scored after: the context (:data:`CONTEXT`) and
    its token as the tokenizer writes it (SmolLM2-Instruct's BOS is ``<|im_start|>``, gemma's ``<bos>``), which
    the board names on every row scored on minimal pairs."""
    tokenizer = plain_tokenizer(loaded)
    token = context_token(tokenizer, CONTEXT)
    return {"context": CONTEXT, "context_token": None if token is None else tokenizer.convert_ids_to_tokens(token)}


def pairs_input_block(pairs, described: dict) -> dict:
    """The result's ``input``: BLiMP at its pinned commit (as ``probing pairs`` records it)."""
    return {**described, "units_total": len(pairs), "units_used": len(pairs), "skipped": {}}
