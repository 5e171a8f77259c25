"""Tree decoding against independent plain decoders: brute force over all trees, and a recursive CLE."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from trees_reference import all_trees, brute_force_best, is_arborescence, reference_mst, tree_score

from probing.analyses.trees.decode import max_heads, mst_heads
from probing.engine.predictions import predict_heads

IMPLEMENTATIONS = ("vectorised", "compiled")


def random_scores(kind: str, count: int, n: int, generator: torch.Generator) -> torch.Tensor:
    """float64 [count, n, n] in one of the shapes attention takes: continuous, tied, causal, peaked."""
    if kind == "uniform":
        return torch.rand(count, n, n, generator=generator, dtype=torch.float64)
    if kind == "ties":  # few distinct values: exact ties everywhere
        return torch.randint(0, 3, (count, n, n), generator=generator).double()
    if kind == "causal":  # zero above the diagonal, as a causal model's dep_to_head scores
        return torch.tril(torch.randint(0, 4, (count, n, n), generator=generator)).double() / 4
    if kind == "causal_transposed":  # head_to_dep of a causal model
        return torch.triu(torch.randint(0, 4, (count, n, n), generator=generator)).double() / 4
    if kind == "zeros":
        return torch.zeros(count, n, n, dtype=torch.float64)
    raise ValueError(kind)


KINDS = ("uniform", "ties", "causal", "causal_transposed", "zeros")


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_mst_is_a_maximum_tree_by_brute_force(kind, implementation):
    """Every small matrix (n <= 6, 600 per kind): a valid tree rooted at the root, of the best total score."""
    generator = torch.Generator().manual_seed(hash(kind) % 1000)
    count, n = 600, 6
    scores = random_scores(kind, count, n, generator)
    num_words = torch.randint(1, n + 1, (count,), generator=generator)
    roots = (torch.rand(count, generator=generator) * num_words).long()
    heads = mst_heads(scores, roots, num_words, implementation=implementation)
    for m in range(count):
        k, root = int(num_words[m]), int(roots[m])
        matrix = scores[m, :k, :k].numpy()
        found = heads[m, :k].tolist()
        assert is_arborescence(found, root), (matrix, root, found)
        assert tree_score(matrix, found) == brute_force_best(matrix, root)  # exact: sums of quarters
        assert heads[m, k:].eq(-1).all()


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_mst_equals_recursive_reference_on_continuous_scores(implementation):
    """Continuous random scores have one best tree: the same tree as the plain recursive CLE, up to 25 words."""
    generator = torch.Generator().manual_seed(7)
    for n in (2, 3, 5, 8, 13, 25):
        scores = torch.rand(40, n, n, generator=generator, dtype=torch.float64)
        roots = torch.randint(0, n, (40,), generator=generator)
        heads = mst_heads(scores, roots, n, implementation=implementation)
        for m in range(40):
            assert heads[m].tolist() == reference_mst(scores[m].tolist(), int(roots[m]))


@pytest.mark.parametrize("kind", ("ties", "causal", "uniform"))
def test_mst_scores_equal_reference_on_longer_sentences(kind):
    """Up to 30 words, where brute force is out of reach: the same total as the recursive CLE."""
    generator = torch.Generator().manual_seed(3)
    scores = random_scores(kind, 60, 30, generator)
    num_words = torch.randint(7, 31, (60,), generator=generator)
    roots = (torch.rand(60, generator=generator) * num_words).long()
    heads = mst_heads(scores, roots, num_words)
    for m in range(60):
        k, root = int(num_words[m]), int(roots[m])
        matrix = scores[m, :k, :k].tolist()
        assert is_arborescence(heads[m, :k].tolist(), root)
        assert tree_score(matrix, heads[m, :k].tolist()) == pytest.approx(tree_score(matrix, reference_mst(matrix, root)), abs=1e-9)


@pytest.mark.parametrize("kind", KINDS)
def test_vectorised_and_compiled_give_the_same_trees(kind):
    """Same algorithm, same arithmetic, same tie rules: identical trees even among equal-scoring ones."""
    generator = torch.Generator().manual_seed(11)
    scores = random_scores(kind, 300, 20, generator).float()
    num_words = torch.randint(1, 21, (300,), generator=generator)
    roots = (torch.rand(300, generator=generator) * num_words).long()
    vectorised = mst_heads(scores, roots, num_words, implementation="vectorised")
    compiled = mst_heads(scores, roots, num_words, implementation="compiled")
    assert torch.equal(vectorised, compiled)


def test_mst_leading_axes_and_per_sentence_root():
    """[batch, layer, head, direction, dep, head] in one call; root and length given per sentence."""
    generator = torch.Generator().manual_seed(0)
    scores = torch.rand(3, 2, 4, 2, 7, 7, generator=generator)
    roots, num_words = torch.tensor([0, 4, 2]), torch.tensor([7, 5, 3])
    heads = mst_heads(scores, roots, num_words)
    assert heads.shape == (3, 2, 4, 2, 7)
    for b in range(3):
        one = mst_heads(scores[b, :, :, :, : num_words[b], : num_words[b]], int(roots[b]), int(num_words[b]))
        assert torch.equal(heads[b, ..., : num_words[b]], one)  # padding never changes a tree
        assert heads[b, ..., int(roots[b])].eq(-1).all()
        assert heads[b, ..., int(num_words[b]) :].eq(-1).all()


def test_mst_breaks_the_cheapest_cycle_edge():
    """Hand-made: words 1 and 2 prefer each other; the root is 0. Entering the cycle at 2 costs
    0.9 - 0.3 = 0.6, at 1 costs 0.8 - 0.5 = 0.3, so 0 -> 1 -> 2."""
    scores = torch.tensor([[0.0, 0.0, 0.0], [0.5, 0.0, 0.8], [0.3, 0.9, 0.0]])  # [dep, head]
    for implementation in IMPLEMENTATIONS:
        assert mst_heads(scores, 0, 3, implementation=implementation).tolist() == [-1, 0, 1]


def test_mst_tie_rule_takes_the_lowest_head():
    """All scores equal: every word takes the lowest-index head it may, so all hang from word 0 or
    the root; a deterministic choice among the n^(n-2) equal trees."""
    assert mst_heads(torch.ones(5, 5), 3, 5).tolist() == [3, 0, 0, -1, 0]


def test_mst_is_deterministic_and_leaves_its_input_alone():
    generator = torch.Generator().manual_seed(5)
    scores = torch.randint(0, 2, (50, 9, 9), generator=generator).float()
    before = scores.clone()
    first = mst_heads(scores, 0, 9, implementation="vectorised")
    assert torch.equal(first, mst_heads(scores, 0, 9, implementation="vectorised"))
    assert torch.equal(scores, before)


def test_mst_float64_and_float16_inputs():
    generator = torch.Generator().manual_seed(2)
    scores = torch.rand(20, 6, 6, generator=generator, dtype=torch.float64)
    assert torch.equal(mst_heads(scores, 1, 6), mst_heads(scores, 1, 6, implementation="vectorised"))
    half = scores.half()
    assert torch.equal(mst_heads(half, 1, 6), mst_heads(half.float(), 1, 6))


def test_mst_rejects_a_root_outside_the_sentence():
    with pytest.raises(ValueError, match="root"):
        mst_heads(torch.zeros(2, 4, 4), torch.tensor([0, 3]), torch.tensor([4, 2]))


def test_one_word_and_empty_sentences():
    assert mst_heads(torch.zeros(1, 1), 0, 1).tolist() == [-1]
    assert mst_heads(torch.zeros(2, 3, 3), torch.tensor([0, 0]), torch.tensor([0, 1])).tolist() == [[-1] * 3] * 2


def test_max_heads_is_the_probes_rule():
    """Identical to the probe's predictions in both directions, padding included."""
    generator = torch.Generator().manual_seed(4)
    attention = torch.softmax(torch.randn(4, 2, 3, 9, 9, generator=generator), dim=-1)
    attention[:, :, :, :, 5] = attention[:, :, :, :, 2]  # exact ties between two columns
    num_words = torch.tensor([9, 6, 3, 1])
    expected = predict_heads(attention, num_words)  # [batch, direction, layer, head, word]
    dep_to_head = max_heads(attention, num_words)
    head_to_dep = max_heads(attention.transpose(-1, -2), num_words)
    for b, n in enumerate(num_words.tolist()):
        assert torch.equal(dep_to_head[b, ..., :n], expected[b, 0, ..., :n])
        assert torch.equal(head_to_dep[b, ..., :n], expected[b, 1, ..., :n])
        assert dep_to_head[b, ..., n:].eq(-1).all()


def test_max_heads_diagonal_option_for_signed_scores():
    scores = torch.tensor([[5.0, -1.0, -2.0], [-3.0, 1.0, -3.0], [0.0, 0.0, 0.0]])
    assert max_heads(scores, 3).tolist() == [0, 1, 0]  # the probe's rule: the diagonal counts as 0
    assert max_heads(scores, 3, diagonal=float("-inf")).tolist() == [1, 0, 0]


def test_reference_enumerates_every_tree():
    """Sanity of the yardstick: Cayley's formula, n^(n-2) trees rooted at a given word."""
    assert [len(all_trees(n, 0)) for n in range(2, 7)] == [n ** (n - 2) for n in range(2, 7)]
    assert np.all(all_trees(4, 2)[:, 2] == -1)
