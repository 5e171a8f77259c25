"""The vectorised scorer against a plain per-sentence, per-head loop on random attention."""

from __future__ import annotations

import itertools
import random

import numpy as np
import torch

from probing.analyses.probe.counts import OFFSETS, ProbeCounts
from probing.analyses.probe.pairs import collect_pairs
from probing.data.relations import DEFAULT_RELATIONS, relation_pairs
from probing.data.treebank import read_treebank
from probing.engine.pooling import pool_word_attention
from probing.engine.predictions import predict_heads
from probing.testing import sample_path

LAYERS, HEADS = 3, 4


def plain_word_attention(token_attention: np.ndarray, word_of_token: list[int], n_words: int) -> np.ndarray:
    """Spec section 2 written out: sum over attended pieces, mean over attending pieces."""
    W = np.zeros((n_words, n_words))
    for i in range(n_words):
        rows = [t for t, w in enumerate(word_of_token) if w == i]
        for j in range(n_words):
            columns = [t for t, w in enumerate(word_of_token) if w == j]
            W[i, j] = np.mean([sum(token_attention[r, c] for c in columns) for r in rows])
    return W


def plain_counts(sentences, attentions, words_of_tokens):
    total = {r: 0 for r in DEFAULT_RELATIONS}
    correct = {r: np.zeros((2, LAYERS, HEADS), dtype=int) for r in DEFAULT_RELATIONS}
    baselines = {r: np.zeros(len(OFFSETS), dtype=int) for r in DEFAULT_RELATIONS}
    for sentence, attention, word_of_token in zip(sentences, attentions, words_of_tokens):
        n = len(sentence)
        for layer, head in itertools.product(range(LAYERS), range(HEADS)):
            W = plain_word_attention(attention[layer, head], word_of_token, n)
            np.fill_diagonal(W, 0)
            dep_to_head = [int(np.argmax(W[i])) for i in range(n)]
            head_to_dep = [int(np.argmax(W[:, i])) for i in range(n)]
            for name in DEFAULT_RELATIONS:
                for query, target in relation_pairs(name, sentence):
                    correct[name][0, layer, head] += dep_to_head[query] == target
                    correct[name][1, layer, head] += head_to_dep[query] == target
        for name in DEFAULT_RELATIONS:
            for query, target in relation_pairs(name, sentence):
                total[name] += 1
                for o, offset in enumerate(OFFSETS):
                    baselines[name][o] += target >= 0 and query + offset == target
    return total, correct, baselines


def random_batch(sentences, rng: random.Random):
    """Random piece splits (1-3 pieces a word) with [CLS]/[SEP], random row-stochastic attention."""
    words_of_tokens = []
    for sentence in sentences:
        pieces = [w for w in range(len(sentence)) for _ in range(rng.randint(1, 3))]
        words_of_tokens.append([-1] + pieces + [-1])
    longest = max(map(len, words_of_tokens))
    word_of_token = torch.full((len(sentences), longest), -1)
    mask = torch.zeros((len(sentences), longest), dtype=torch.bool)
    for row, wot in enumerate(words_of_tokens):
        word_of_token[row, : len(wot)] = torch.tensor(wot)
        mask[row, : len(wot)] = True
    generator = torch.Generator().manual_seed(rng.randint(0, 10**6))
    logits = torch.randn(len(sentences), LAYERS, HEADS, longest, longest, generator=generator) * 3
    logits = logits.masked_fill(~mask[:, None, None, None, :], float("-inf"))
    attention = logits.softmax(-1) * mask[:, None, None, :, None]  # [batch, layer, head, query, key]
    return attention, word_of_token, words_of_tokens


def test_vectorised_scorer_matches_plain_loop():
    rng = random.Random(7)
    sentences = list(itertools.islice(read_treebank(sample_path()), 24))
    counts = ProbeCounts(DEFAULT_RELATIONS, LAYERS, HEADS)
    attentions, all_words = [], []
    for start in range(0, len(sentences), 8):
        batch = sentences[start : start + 8]
        attention, word_of_token, words_of_tokens = random_batch(batch, rng)
        word_attention = pool_word_attention(attention, word_of_token)
        predictions = predict_heads(word_attention, torch.tensor([len(s) for s in batch]))
        counts.update(predictions, collect_pairs(batch, DEFAULT_RELATIONS), [s.index for s in batch], [len(s) for s in batch])
        attentions += [a[:, :, : len(w), : len(w)].double().numpy() for a, w in zip(attention, words_of_tokens)]
        all_words += words_of_tokens

    total, correct, baselines = plain_counts(sentences, attentions, all_words)
    for r, name in enumerate(DEFAULT_RELATIONS):
        assert counts.total[r] == total[name] > 0
        np.testing.assert_array_equal(counts.heads[r].numpy(), correct[name])
        np.testing.assert_array_equal(counts.baselines[r].numpy(), baselines[name])
    # the heads are not all right or all wrong: the comparison has something to compare
    assert 0 < counts.heads.sum() < counts.total.sum() * 2 * LAYERS * HEADS


def test_merge_of_two_halves_equals_one_pass():
    rng = random.Random(3)
    sentences = list(itertools.islice(read_treebank(sample_path()), 12))
    whole = ProbeCounts(DEFAULT_RELATIONS, LAYERS, HEADS)
    halves = [ProbeCounts(DEFAULT_RELATIONS, LAYERS, HEADS) for _ in range(2)]
    for part, batch in enumerate((sentences[:6], sentences[6:])):
        attention, word_of_token, _ = random_batch(batch, rng)
        predictions = predict_heads(pool_word_attention(attention, word_of_token), torch.tensor([len(s) for s in batch]))
        pairs = collect_pairs(batch, DEFAULT_RELATIONS)
        indices, lengths = [s.index for s in batch], [len(s) for s in batch]
        whole.update(predictions, pairs, indices, lengths)
        halves[part].update(predictions, pairs, indices, lengths)
    merged = halves[0].merge(halves[1])
    for name in whole.tensor_names():
        assert torch.equal(getattr(merged, name), getattr(whole, name))
    assert (merged.sentences, merged.words) == (whole.sentences, whole.words)
