"""``--metric minimal-pairs``: BLiMP accuracy under every condition, its units the minimal pairs.

A pair is read and scored as ``probing pairs`` does (probing.data.minimal_pairs; one context token, the plain text,
the float32 sum of token log-probabilities, probing.model.token_scores; right when log p(good) > log p(bad), a tie
wrong), on the same pass over pairs (probing.engine.pair_passes, its batches consecutive pairs in reading order) and
by the same scorer of a batch (probing.model.pair_rows.batch_log_probs: each pair's shared token prefix computed
once), every condition's copies of a batch in one forward pass, each copy with its own heads disabled
(:func:`disabled_heads`); the reuse of the intact model's lower layers (probing.model.prefix) applies as it does to
any pass. The pass keeps one bit per (condition, pair): right or not; the parts and their bootstrap come from those
bits (probing.analyses.ablation.pair_parts).

>>> pairs_input_block(["pair 1", "pair 2"], {"kind": "minimal_pairs"})
{'kind': 'minimal_pairs', 'units_total': 2, 'units_used': 2, 'skipped': {}}
"""

from __future__ import annotations

import contextlib

import torch

from probing.model.interventions import uniform_heads
from probing.model.token_scores import context_token, encode
from probing.model.tokenizers import plain_tokenizer

CONTEXT = "bos"
"""What every sentence is scored after here: ``probing pairs``' default context (its ``--context bos``), the
tokenizer's BOS token, else its EOS (probing.model.token_scores.CONTEXTS)."""


def encoded_pairs(loaded, pairs) -> list:
    """Each pair's (good, bad) ids after :data:`CONTEXT`, as the pass over pairs reads them."""
    encoded = encode(plain_tokenizer(loaded), [text for pair in pairs for text in (pair.good, pair.bad)], CONTEXT)
    return list(zip(encoded[0::2], encoded[1::2]))


def disabled_heads(loaded, heads: torch.Tensor):
    """What a forward pass of stacked conditions runs in (probing.model.token_scores.RowScorer's ``around``): for
    the rows of sentences ``rows``, the heads ``heads[rows]`` [row, layer, head] made uniform
    (probing.model.interventions.uniform_heads), checked to have been reached once the pass is over."""

    @contextlib.contextmanager
    def around(rows: torch.Tensor):
        with uniform_heads(loaded.model, heads[rows]) as intervention:
            yield
        intervention.verify()

    return around


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
