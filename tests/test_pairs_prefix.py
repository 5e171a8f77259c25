"""A pair's shared token prefix computed once (probing.model.pair_rows.prefix_shared_log_probs): the same
log-probabilities as each sentence scored whole, for ``probing pairs`` and under disabled heads."""

from __future__ import annotations

import os

import pytest
import torch
from helpers import HAND_PAIRS, tiny_gemma, tiny_model
from transformers import AutoModelForCausalLM, AutoTokenizer

from probing.analyses.pairs.scoring import pair_log_probs, sentence_log_probs
from probing.model.pair_rows import prefix_shared_log_probs, prefix_sharing_agrees, prefix_sharing_fits, shared_length
from probing.model.token_scores import RowScorer, encode, exact_head

SENTENCES = HAND_PAIRS["sentences"]  # hand-written pairs: good, bad, good, bad, ...

TOLERANCE = 1e-4
"""Nats: the shared prefix against the whole sentence, float rounding of other shapes (measured: 8e-6)."""

DECODERS = {
    "llama": lambda: tiny_model("llama"),  # grouped-query attention: 2 key-value heads for 4 query heads
    "gemma": lambda: tiny_gemma(),  # a sliding-window and a full layer, one key-value head
    "gemma, soft-capped": lambda: tiny_gemma(softcap=30.0),  # logits beyond the LM head: scored from the logits
}


def loaded(name: str):
    path = DECODERS[name]()
    return AutoModelForCausalLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


def decisions(scores: list[float]) -> list[bool]:
    return [good > bad for good, bad in zip(scores[0::2], scores[1::2])]


@pytest.mark.parametrize("name", list(DECODERS))
def test_shared_prefixes_give_the_whole_sentences_log_probs_and_decisions(name):
    model, tokenizer = loaded(name)
    split = exact_head(model)
    assert split == (name != "gemma, soft-capped")  # both ways of reading the scores are exercised
    pairs = list(zip(*[iter(encode(tokenizer, SENTENCES))] * 2))
    assert prefix_sharing_agrees(model, split, "cpu") and prefix_sharing_fits(model, pairs)  # not scored whole
    assert max(shared_length(*pair) for pair in pairs) > 1  # prefixes longer than the context token
    whole = sentence_log_probs(model, tokenizer, SENTENCES, batch_size=64)
    for batch_size in (2, 6, 64):
        shared = pair_log_probs(model, tokenizer, SENTENCES, batch_size=batch_size)
        assert max(abs(a - b) for a, b in zip(shared, whole)) < TOLERANCE, batch_size
        assert decisions(shared) == decisions(whole), batch_size


@pytest.mark.parametrize("name", ["llama", "gemma"])
def test_unequal_prefixes_padded_in_one_batch_give_the_whole_sentences_log_probs(name):
    """Prefixes of other lengths side by side, two stacked copies: each bad continuation's positions go on from
    its own prefix, and it sees neither the good continuation beside it nor any padding."""
    model, tokenizer = loaded(name)
    pairs = list(zip(*[iter(encode(tokenizer, SENTENCES))] * 2))
    assert len({shared_length(*pair) for pair in pairs}) > 1
    with torch.inference_mode():
        shared = prefix_shared_log_probs(RowScorer(model, exact_head(model), "cpu"), pairs, copies=2)
    whole = torch.tensor(sentence_log_probs(model, tokenizer, SENTENCES, batch_size=1))
    assert shared.shape == (2, len(SENTENCES))
    torch.testing.assert_close(shared, whole.expand(2, -1), rtol=0, atol=TOLERANCE)


def test_a_batch_beyond_the_sliding_window_is_scored_whole():
    """A window shorter than the pairs: sharing would hide keys the whole sentence sees, so the batch is scored
    whole, and the numbers are still the whole sentences'."""
    path = tiny_gemma(sliding_window=6)
    model, tokenizer = AutoModelForCausalLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
    pairs = list(zip(*[iter(encode(tokenizer, SENTENCES))] * 2))
    assert not prefix_sharing_fits(model, pairs)
    with torch.inference_mode():
        forced = prefix_shared_log_probs(RowScorer(model, True, "cpu"), pairs)[0]
    whole = sentence_log_probs(model, tokenizer, SENTENCES, batch_size=64)
    assert float((forced - torch.tensor(whole)).abs().max()) > 1e-2  # why the guard is there
    shared = pair_log_probs(model, tokenizer, SENTENCES, batch_size=64)
    assert max(abs(a - b) for a, b in zip(shared, whole)) < TOLERANCE


@pytest.mark.parametrize("context", ["eos", "none"])
def test_every_context_gives_the_whole_sentences_log_probs(context):
    """After nothing, a pair whose first tokens differ shares no prefix and is scored whole beside the others."""
    model, tokenizer = loaded("llama")
    shared = pair_log_probs(model, tokenizer, SENTENCES, batch_size=64, context=context)
    whole = sentence_log_probs(model, tokenizer, SENTENCES, batch_size=64, context=context)
    assert max(abs(a - b) for a, b in zip(shared, whole)) < TOLERANCE
    assert decisions(shared) == decisions(whole)


def test_a_pair_that_is_a_prefix_of_the_other_keeps_a_token_to_score():
    model, tokenizer = loaded("llama")
    sentences = ["the cat sat", "the cat sat on the mat", "the cat", "the cat"]
    shared = pair_log_probs(model, tokenizer, sentences, batch_size=4)
    whole = sentence_log_probs(model, tokenizer, sentences, batch_size=4)
    assert max(abs(a - b) for a, b in zip(shared, whole)) < TOLERANCE
    assert shared[2] == shared[3]  # the same sentence twice: a tie, so wrong


@pytest.mark.slow  # two real checkpoints
@pytest.mark.real_data
@pytest.mark.parametrize("short", ["smollm2", "gemma3"])
def test_real_decoders_on_blimp_pairs_give_the_whole_sentences_log_probs(short):
    from conftest import real_model

    from probing.data.minimal_pairs import read_pairs

    blimp = os.environ.get("PROBING_BLIMP")
    if not blimp:
        pytest.skip("real data: BLiMP is not available (set PROBING_BLIMP)")
    path = real_model(short)
    model, tokenizer = AutoModelForCausalLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
    pairs, _ = read_pairs(["anaphor_gender_agreement", "wh_island", "determiner_noun_agreement_2"], blimp, 8)
    sentences = [text for pair in pairs for text in (pair.good, pair.bad)]
    shared = pair_log_probs(model, tokenizer, sentences, batch_size=16)
    whole = sentence_log_probs(model, tokenizer, sentences, batch_size=16)
    assert max(abs(a - b) for a, b in zip(shared, whole)) < TOLERANCE
    assert decisions(shared) == decisions(whole)
