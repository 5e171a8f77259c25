"""Single-head tree counts: planted heads with known answers, baselines, skips, merge, and a plain reference."""

from __future__ import annotations

import itertools

import pytest
import torch
from trees_reference import reference_mst

from probing.analyses.trees.counts import TreeCounts
from probing.data.treebank import Sentence, read_treebank
from probing.stats.bootstrap import BootstrapSpec, poisson_weights
from probing.testing import sample_path

# "The old dog barked at cats ." (heads 0-based, ROOT -1); the period is PUNCT, the root is not scored.
SENTENCE = Sentence(
    words=("The", "old", "dog", "barked", "at", "cats", "."),
    heads=(2, 2, 3, -1, 5, 3, 3),
    labels=("det", "amod", "nsubj", "root", "case", "obl", "punct"),
    upos=("DET", "ADJ", "NOUN", "VERB", "ADP", "NOUN", "PUNCT"),
    index=0,
)
SCORED = 5  # all but the root ("barked") and the period


def planted(sentence: Sentence, layers=2, heads=3, plant=(1, 2)) -> torch.Tensor:
    """[1, layer, head, word, word] uniform attention, except one head where each word attends to its gold head
    (the root to itself)."""
    n = len(sentence)
    attention = torch.full((1, layers, heads, n, n), 1.0 / n)
    exact = torch.zeros(n, n)
    for word, head in enumerate(sentence.heads):
        exact[word, head if head >= 0 else word] = 1.0
    attention[0, plant[0], plant[1]] = exact
    return attention


def test_a_head_that_attends_to_each_gold_head_scores_everything():
    counts = TreeCounts(num_layers=2, num_heads=3)
    counts.update(planted(SENTENCE), [SENTENCE], [len(SENTENCE)])
    result = counts.result()
    assert result["words"] == SCORED
    for decoding in ("max", "mst"):
        for metric in ("uas", "uuas"):
            assert result["decodings"][decoding][metric]["dep_to_head"][1][2] == SCORED
            best = result["decodings"][decoding][f"best_{metric}"]
            assert (best["layer"], best["head"], best["direction"], best["correct"]) == (1, 2, "dep_to_head", SCORED)


def test_uniform_attention_follows_the_tie_rule():
    """Uniform attention: every word's best head is word 0, the lowest index (word 0's own is word 1,
    its diagonal being zeroed); the tree rooted at "barked" (3) is [3, 0, 0, -, 0, 0, 0]."""
    n = len(SENTENCE)
    counts = TreeCounts(num_layers=1, num_heads=1)
    counts.update(torch.full((1, 1, 1, n, n), 1.0 / n), [SENTENCE], [n])
    decodings = counts.result()["decodings"]
    # gold of the scored words: The->dog, old->dog, dog->barked, at->cats, cats->barked: no head is word 0,
    # but "dog" is predicted to hang from "The", which is The's gold edge turned round.
    assert decodings["max"]["uas"]["dep_to_head"] == [[0]]
    assert decodings["max"]["uuas"]["dep_to_head"] == [[1]]
    assert decodings["mst"]["uas"]["dep_to_head"] == [[0]]
    assert decodings["mst"]["uuas"]["dep_to_head"] == [[1]]


def test_next_word_attention_scores_exactly_the_right_branching_baseline():
    """A head attending to the next word (the last word to the one before it) under ``max`` is the
    right-branching baseline; one attending to the previous word is the left-branching one."""
    sentences = [s for s in read_treebank(sample_path())][:20]
    counts = TreeCounts(num_layers=1, num_heads=2)
    for sentence in sentences:
        n = len(sentence)
        attention = torch.zeros(1, 1, 2, n, n)
        for i in range(n):
            if n > 1:
                attention[0, 0, 0, i, i + 1 if i + 1 < n else i - 1] = 1.0
                attention[0, 0, 1, i, i - 1 if i > 0 else i + 1] = 1.0
        counts.update(attention, [sentence], [n])
    result = counts.result()
    for metric in ("uas", "uuas"):
        assert result["decodings"]["max"][metric]["dep_to_head"][0][0] == result["baselines"]["right_branching"][metric]
        assert result["decodings"]["max"][metric]["dep_to_head"][0][1] == result["baselines"]["left_branching"][metric]
    assert 0 < result["baselines"]["right_branching"]["uas"] < result["words"]


def test_undirected_counts_an_edge_found_the_wrong_way_round():
    """dog attends to The (dog -> The predicted): The's gold edge {The, dog} is there undirected only."""
    sentence = Sentence(words=("The", "dog", "ran"), heads=(1, 2, -1), labels=("det", "nsubj", "root"),
                        upos=("DET", "NOUN", "VERB"))
    attention = torch.tensor([[0.0, 0.1, 0.9], [0.9, 0.0, 0.1], [0.5, 0.5, 0.0]])  # The->ran, dog->The
    counts = TreeCounts(num_layers=1, num_heads=1)
    counts.update(attention[None, None, None], [sentence], [3])
    result = counts.result()["decodings"]["max"]
    assert result["uas"]["dep_to_head"] == [[0]]
    assert result["uuas"]["dep_to_head"] == [[1]]  # The (edge reversed); dog's edge {dog, ran} is missing


def test_sentences_without_one_root_are_skipped_and_counted():
    no_root = Sentence(words=("a", "b"), heads=(1, 0), labels=("x", "y"), upos=("X", "X"))
    two_roots = Sentence(words=("a", "b"), heads=(-1, -1), labels=("root", "root"), upos=("X", "X"))
    good = Sentence(words=("a", "b"), heads=(-1, 0), labels=("root", "x"), upos=("X", "X"))
    counts = TreeCounts(num_layers=1, num_heads=1)
    attention = torch.rand(3, 1, 1, 2, 2)
    counts.update(attention, [no_root, good, two_roots], [2, 2, 2])
    result = counts.result()
    assert result["sentences"] == {"scored": 1, "skipped": {"no_root": 1, "several_roots": 1}}
    assert result["words"] == 1


def test_lengths_must_match_the_sentences():
    with pytest.raises(ValueError, match="num_words"):
        TreeCounts(1, 1).update(torch.rand(1, 1, 1, 7, 7), [SENTENCE], [6])


def sample_batches(count=40, layers=2, heads=2, seed=0):
    """Sentences of the sample treebank with random (continuous) attention, in batches of 8."""
    generator = torch.Generator().manual_seed(seed)
    sentences = list(read_treebank(sample_path()))[:count]
    batches = []
    for start in range(0, len(sentences), 8):
        group = sentences[start : start + 8]
        words = max(len(s) for s in group)
        attention = torch.softmax(torch.randn(len(group), layers, heads, words, words, generator=generator), dim=-1)
        batches.append((attention, group, [len(s) for s in group]))
    return batches


def test_counts_equal_a_plain_per_head_loop():
    """Every layer, head, direction and decoding against plain Python: argmax with the zeroed diagonal,
    the recursive reference CLE, and UAS/UUAS counted word by word."""
    counts = TreeCounts(num_layers=2, num_heads=2)
    expected = torch.zeros_like(counts.heads)
    baselines = torch.zeros_like(counts.baselines)
    for attention, group, lengths in sample_batches():
        counts.update(attention, group, lengths)
        for b, sentence in enumerate(group):
            n, root = len(sentence), sentence.heads.index(-1)
            scored = [i for i in range(n) if sentence.heads[i] != -1 and sentence.upos[i] != "PUNCT"]
            right = [i + 1 if i + 1 < n else i - 1 for i in range(n)]
            left = [i - 1 if i > 0 else i + 1 for i in range(n)]
            for k, predicted in enumerate((right, left)):
                baselines[:, k] += torch.tensor(_plain_counts(predicted, sentence, scored))
            for layer, head, direction in itertools.product(range(2), range(2), range(2)):
                W = attention[b, layer, head, :n, :n]
                scores = (W if direction == 0 else W.T).tolist()  # [dep][head]
                zeroed = [[0.0 if i == j else scores[i][j] for j in range(n)] for i in range(n)]
                best = [max(range(n), key=lambda j, row=row: (row[j], -j)) for row in zeroed]
                tree = reference_mst(scores, root)
                for d, predicted in enumerate((best, tree)):
                    expected[:, d, direction, layer, head] += torch.tensor(_plain_counts(predicted, sentence, scored))
    assert torch.equal(counts.heads, expected)
    assert torch.equal(counts.baselines, baselines)


def _plain_counts(predicted, sentence, scored):
    uas = sum(predicted[i] == sentence.heads[i] for i in scored)
    uuas = sum(predicted[i] == sentence.heads[i] or predicted[sentence.heads[i]] == i for i in scored)
    return [uas, uuas]


def test_merge_of_two_halves_equals_the_whole_and_state_round_trips():
    spec = BootstrapSpec(replicates=25, seed=3)
    whole, first, second = (TreeCounts(2, 2, bootstrap=spec) for _ in range(3))
    batches = sample_batches()
    for index, batch in enumerate(batches):
        whole.update(*batch)
        (first if index < len(batches) // 2 else second).update(*batch)
    merged = first.merge(second)
    assert merged.result() == whole.result()
    restored = TreeCounts(2, 2, bootstrap=spec)
    restored.load_state(whole.state())
    assert restored.result() == whole.result()
    with pytest.raises(ValueError):
        TreeCounts(2, 2).merge(whole)


def test_bootstrap_replicates_weight_each_sentence():
    spec = BootstrapSpec(replicates=7, seed=1)
    counts = TreeCounts(2, 2, bootstrap=spec)
    expected_total = torch.zeros(7, dtype=torch.long)
    for attention, group, lengths in sample_batches(count=16):
        counts.update(attention, group, lengths)
        weights = poisson_weights([s.index for s in group], replicates=7, seed=1)
        scored = torch.tensor([sum(h != -1 and u != "PUNCT" for h, u in zip(s.heads, s.upos)) for s in group])
        expected_total += (weights * scored[None, :].double()).sum(1).round().long()
    assert torch.equal(counts.boot_total, expected_total)
    # a replicate with every weight 1 would be the plain count: the replicates scatter around it
    assert counts.boot_heads.shape == (7, 2, 2, 2, 2, 2)
    assert counts.boot_heads.float().mean(0).sub(counts.heads.float()).abs().max() < counts.total
