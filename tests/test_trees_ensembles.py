"""Greedy head ensembles on constructed attention where the right ensemble is known."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from probing.analyses.trees.ensembles import EnsembleCollector, EnsembleCounts, candidate_heads, rank_heads
from probing.data.treebank import Sentence
from probing.engine.predictions import predict_heads
from probing.stats.bootstrap import BootstrapSpec
from probing.stats.selection import select_head

# Six words: word 0 is a determiner of word 1 (the root); words 2-5 hang from word 1.
WORDS = 6


def sentence(index: int) -> Sentence:
    return Sentence(
        words=tuple(f"w{i}" for i in range(WORDS)),
        heads=(1, -1, 1, 1, 1, 1),
        labels=("det", "root", "dep", "dep", "dep", "dep"),
        upos=("DET", "NOUN", "X", "X", "X", "X"),
        index=index,
    )


RIGHT, WEAK, STRONG = (0.5, 0.1), (0.35, 0.6), (0.0, 0.9)  # (mass on the gold head, on the head's own decoy)


def attention_for(plan: dict[tuple[int, int], list[tuple[float, float]]], groups: int) -> torch.Tensor:
    """[sentence, layer=2, head=2, word, word]: every word attends to word 1, except the determiner's
    row, which per planned head puts its (gold, decoy) masses on word 1 and on a decoy word of its own
    (word 2, 3 or 4); an unplanned head's determiner row looks at word 5."""
    attention = torch.zeros(groups, 2, 2, WORDS, WORDS)
    attention[:, :, :, :, 1] = 1.0
    attention[:, :, :, 0, :] = 0.0
    attention[:, :, :, 0, 5] = 1.0
    for decoy, (head, masses) in enumerate(plan.items(), start=2):
        for group, (gold, wrong) in enumerate(masses):
            attention[group, head[0], head[1], 0, :] = 0.0
            attention[group, head[0], head[1], 0, 1] = gold
            attention[group, head[0], head[1], 0, decoy] = wrong
    return attention


def probe_counts(attention: torch.Tensor) -> np.ndarray:
    """The probe's correct counts of the det pairs [direction, layer, head], by its own predictions."""
    predictions = predict_heads(attention, torch.full((attention.shape[0],), WORDS))  # [s, direction, l, h, word]
    return (predictions[:, :, :, :, 0] == 1).sum(0).numpy()


def collect(attention, candidates):
    collector = EnsembleCollector(candidates)
    sentences = [sentence(i) for i in range(attention.shape[0])]
    for start in range(0, len(sentences), 4):  # several batches
        collector.update(attention[start : start + 4], sentences[start : start + 4], [WORDS] * len(sentences[start : start + 4]))
    return collector, sentences


def test_greedy_search_then_a_swap_finds_the_complementary_pair():
    """Ten groups of pairs. X (layer 1, head 1) is the best single head (7/10); Y (0, 1) and Z (1, 0)
    get 6/10 each, but every group has one of them right and the other only weakly wrong, so
    together they get 10/10. Greedy from X adds Y (X+Y and X+Z tie at 8/10: the lower layer wins),
    the ensemble is full at 2, and swapping X for Z reaches 10/10."""
    X, Y, Z = (1, 1), (0, 1), (1, 0)
    plan = {
        X: [RIGHT] * 7 + [STRONG, STRONG, WEAK],
        Y: [WEAK] * 4 + [RIGHT] * 6,
        Z: [RIGHT] * 6 + [WEAK] * 4,
    }
    attention = attention_for(plan, 10)
    counts = probe_counts(attention)
    assert counts[0].tolist() == [[0, 6], [6, 7]]  # dep_to_head [layer][head]
    candidates = candidate_heads({"det": counts}, limit=25)
    assert candidates[("det", "dep_to_head")] == [X, Y, Z, (0, 0)]
    collector, sentences = collect(attention, candidates)
    # the collector's own single-head counts are the probe's
    key = ("det", "dep_to_head")
    assert collector.correct(key, torch.tensor([[0], [1], [2], [3]])).tolist() == [7, 6, 6, 0]
    assert collector.correct(key, torch.tensor([[0, 1], [0, 2], [1, 2]])).tolist() == [8, 8, 10]
    (ensemble, _) = collector.search(size=2)
    assert (ensemble.relation, ensemble.direction) == ("det", "dep_to_head")
    assert sorted(ensemble.members) == [Y, Z]
    assert (ensemble.correct, ensemble.single, ensemble.single_correct, ensemble.total) == (10, X, 7, 10)

    # held out on the same sentences: the ensemble's count beside its single head's, and perfect trees
    held = EnsembleCounts(collector.search(size=2))
    for start in range(0, 10, 4):
        held.update(attention[start : start + 4], sentences[start : start + 4], [WORDS] * len(sentences[start : start + 4]))
    result = held.result()
    det = result["ensembles"][0]
    assert det["heldout"] == {"total": 10, "correct": 10, "single_correct": 7}
    assert result["trees"]["words"] == 10 * 5  # every word but the root
    assert result["trees"]["uas"] == result["trees"]["words"]


def test_search_stops_when_nothing_helps_and_breaks_ties_by_layer_then_head():
    """Three heads right on two thirds each, each wrong (weakly) on a different third: any two are
    perfect. All tie as single heads, so the search starts from the lowest (0, 1) and adds the lowest
    of the two equal gains, (1, 0); a third head cannot help, so it stops at two of size 4."""
    A, B, C = (1, 1), (0, 1), (1, 0)
    plan = {
        A: [RIGHT] * 6 + [WEAK] * 3,
        B: [WEAK] * 3 + [RIGHT] * 6,
        C: [RIGHT] * 3 + [WEAK] * 3 + [RIGHT] * 3,
    }
    attention = attention_for(plan, 9)
    candidates = candidate_heads({"det": probe_counts(attention)})
    assert candidates[("det", "dep_to_head")][:3] == [B, C, A]
    collector, _ = collect(attention, candidates)
    ensemble = collector.search()[0]
    assert ensemble.members == (B, C)
    assert (ensemble.correct, ensemble.single, ensemble.single_correct) == (9, B, 6)


def test_rank_heads_agrees_with_the_selection_rule():
    generator = np.random.default_rng(0)
    for _ in range(50):
        counts = generator.integers(0, 4, size=(2, 3, 4))  # [direction, layer, head], many ties
        choice = select_head(counts[:1], total=10)
        assert rank_heads(counts[0], limit=1) == [(choice.layer, choice.head)]
        ranked = rank_heads(counts[0], limit=12)
        assert [counts[0][layer, h] for layer, h in ranked] == sorted(counts[0].ravel(), reverse=True)


def test_collector_memory_is_reported_and_scales_with_candidates_only():
    attention = attention_for({(1, 1): [RIGHT] * 4}, 4)
    few, _ = collect(attention, {("det", "dep_to_head"): [(1, 1)]})
    many, _ = collect(attention, {("det", "dep_to_head"): [(1, 1), (0, 0), (0, 1)]})
    assert few.nbytes() == 4 * 1 * WORDS * 4  # pairs x candidates x words x float32
    assert many.nbytes() == 3 * few.nbytes()


def test_heldout_merge_equals_whole_with_bootstrap():
    X, Y = (1, 1), (0, 1)
    plan = {X: [RIGHT] * 5 + [WEAK] * 3, Y: [WEAK] * 3 + [RIGHT] * 5}
    attention = attention_for(plan, 8)
    collector, sentences = collect(attention, candidate_heads({"det": probe_counts(attention)}, limit=3))
    ensembles = collector.search()
    spec = BootstrapSpec(replicates=9, seed=2)
    whole, first, second = (EnsembleCounts(ensembles, bootstrap=spec) for _ in range(3))
    for start in range(0, 8, 2):
        batch = (attention[start : start + 2], sentences[start : start + 2], [WORDS, WORDS])
        whole.update(*batch)
        (first if start < 4 else second).update(*batch)
    assert first.merge(second).result() == whole.result()
    with pytest.raises(ValueError):
        EnsembleCounts(ensembles[:1]).merge(whole)
