"""Token -> word attention and head predictions (spec sections 2-3, vectors.json)."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import DATA

from probing.engine.pooling import pool_word_attention
from probing.engine.predictions import predict_heads


@pytest.fixture(scope="module")
def vectors():
    return json.loads((DATA / "pooling_cases.json").read_text())["cases"]


def plain_word_attention(attention: list[list[float]], word_of_token: list[int]) -> list[list[float]]:
    """The rule written the slow way: to a word, sum its pieces' columns; from a word, mean its pieces' rows."""
    words = max(word_of_token) + 1
    pieces = [[t for t, w in enumerate(word_of_token) if w == word] for word in range(words)]
    return [[sum(sum(attention[i][j] for j in pieces[b]) for i in pieces[a]) / len(pieces[a]) for b in range(words)]
            for a in range(words)]


def plain_predictions(word_attention: list[list[float]]) -> tuple[list[int], list[int]]:
    """Argmax with the diagonal at 0 and ties to the lowest index, in both directions."""
    n = len(word_attention)
    zeroed = [[0.0 if i == j else word_attention[i][j] for j in range(n)] for i in range(n)]
    first_best = lambda values: max(range(n), key=lambda j: (values[j], -j))  # noqa: E731
    return [first_best(zeroed[i]) for i in range(n)], [first_best([zeroed[j][i] for j in range(n)]) for i in range(n)]


def test_the_worked_cases_hold_by_a_plain_loop(vectors):
    """The expected values of the data file follow from the rule itself, not from the code under test."""
    assert len(vectors) == 6
    for case in vectors:
        words = plain_word_attention(case["token_attention"], case["word_of_token"])
        for got, want in zip(words, case["word_attention"]):
            assert got == pytest.approx(want, abs=2e-6)
        assert plain_predictions(case["word_attention"]) == (case["dep_to_head"], case["head_to_dep"])


def test_worked_cases_word_attention_and_both_directions(vectors):
    assert len(vectors) == 6
    for case in vectors:
        attention = torch.tensor(case["token_attention"], dtype=torch.float64).float()
        word_of_token = torch.tensor([case["word_of_token"]])
        pooled = pool_word_attention(attention[None, None, None], word_of_token)[0, 0, 0]
        expected = torch.tensor(case["word_attention"])
        torch.testing.assert_close(pooled, expected, atol=2e-6, rtol=0)
        predictions = predict_heads(pooled[None, None, None], torch.tensor([len(expected)]))[0, :, 0, 0]
        assert predictions[0].tolist() == case["dep_to_head"]
        assert predictions[1].tolist() == case["head_to_dep"]


def test_pooling_against_a_hand_computation():
    # tokens: [CLS] w0a w0b w1 [SEP]
    A = torch.tensor(
        [
            [0.2, 0.2, 0.2, 0.2, 0.2],
            [0.1, 0.3, 0.2, 0.3, 0.1],
            [0.0, 0.5, 0.1, 0.2, 0.2],
            [0.4, 0.1, 0.1, 0.1, 0.3],
            [0.2, 0.2, 0.2, 0.2, 0.2],
        ]
    )
    word_of_token = torch.tensor([[-1, 0, 0, 1, -1]])
    pooled = pool_word_attention(A[None, None, None], word_of_token)[0, 0, 0]
    # to w0 = sum of columns 1,2; from w0 = mean of rows 1,2; specials dropped, rows not renormalised
    expected = torch.tensor([[(0.5 + 0.6) / 2, (0.3 + 0.2) / 2], [0.2, 0.1]])
    torch.testing.assert_close(pooled, expected)
    first = pool_word_attention(A[None, None, None], word_of_token, "first")[0, 0, 0]
    torch.testing.assert_close(first, torch.tensor([[0.5, 0.3], [0.2, 0.1]]))
    maxed = pool_word_attention(A[None, None, None], word_of_token, "max")[0, 0, 0]
    # max of rows 1,2 over pseudo-words [CLS], w0, w1, [SEP] = (0.1, 0.6, 0.3, 0.2) -> / 1.2
    torch.testing.assert_close(maxed, torch.tensor([[0.6 / 1.2, 0.3 / 1.2], [0.2, 0.1]]))


def test_pooling_does_not_modify_the_callers_tensor():
    A = torch.rand(2, 3, 4, 6, 6).softmax(-1)
    before = A.clone()
    pool_word_attention(A, torch.tensor([[-1, 0, 1, 1, 2, -1], [-1, 0, 0, 1, -1, -1]]))
    assert torch.equal(A, before)


def test_directions_ties_and_padding():
    W = torch.tensor(
        [
            [0.9, 0.3, 0.3, 0.0],  # diagonal ignored; tie between words 1 and 2 -> 1
            [0.2, 0.1, 0.2, 0.6],  # word 3 is padding -> never predicted; tie 0/2 -> 0
            [0.1, 0.8, 0.5, 0.0],
            [0.0, 0.0, 0.0, 0.0],
        ]
    )
    before = W.clone()
    predictions = predict_heads(W[None, None, None], torch.tensor([3]))[0, :, 0, 0]
    assert predictions[0, :3].tolist() == [1, 0, 1]
    # head_to_dep: word i's head is argmax_j W[j, i]
    assert predictions[1, :3].tolist() == [1, 2, 0]
    assert torch.equal(W, before)  # the caller's tensor is not modified


def test_word_never_predicts_itself_when_others_get_attention():
    W = torch.eye(4) + 0.01 * torch.rand(4, 4)
    predictions = predict_heads(W[None, None, None], torch.tensor([4]))[0, :, 0, 0]
    assert all(int(p) != i for row in predictions for i, p in enumerate(row))


@pytest.mark.parametrize("seed", range(6))
def test_compiled_predictions_equal_the_tensor_code(seed):
    """The CPU's compiled pass makes exactly the tensor code's predictions, padding included: on a pooled
    layout (a permuted view, as pooling returns it), with many ties (values on a coarse grid), zeros and
    NaNs, a sentence of no words, one of a single word, float32 and float64."""
    from probing.engine.predictions import HeadPrediction

    generator = torch.Generator().manual_seed(seed)
    batch, layers, heads, words = 5, 2, 3, 7
    grid = torch.randint(0, 4, (batch, words, layers, heads, words), generator=generator).float() / 4
    grid[torch.rand(grid.shape, generator=generator) < 0.03] = float("nan")
    scores = grid.permute(0, 2, 3, 1, 4)  # [batch, layer, head, word, word], not contiguous
    num_words = torch.tensor([7, 0, 1, 4, 6])
    prediction = HeadPrediction(num_words)
    for values in (scores, scores.double(), scores.contiguous()):
        compiled, vectorised = prediction.compiled(values), prediction.vectorised(values)
        assert compiled.dtype == vectorised.dtype == torch.long
        assert torch.equal(compiled, vectorised)
    assert torch.equal(prediction(scores), prediction.vectorised(scores))  # a CPU tensor takes the compiled pass


def test_compiled_predictions_keep_the_first_of_equal_maxima_and_the_first_nan():
    from probing.engine.predictions import HeadPrediction

    nan = float("nan")
    W = torch.tensor([[0.0, 0.5, 0.5, 0.2], [nan, 0.0, 0.3, nan], [0.4, 0.1, 0.0, 0.4], [0.1, 0.1, 0.1, 0.0]])
    predictions = HeadPrediction(torch.tensor([4])).compiled(W[None, None, None])[0, :, 0, 0]
    assert predictions[0].tolist() == [1, 0, 0, 0]  # row 1: its first NaN; row 2: 0.4 at 0 and 3 -> 0
    assert predictions[1].tolist() == [1, 0, 0, 1]  # column 0: the NaN in row 1; column 3: NaN in row 1 first


def test_compiled_predictions_never_read_past_the_matrix():
    """A word count larger than the matrix (no batch makes one) is read as the matrix's width, as the masks do."""
    from probing.engine.predictions import HeadPrediction

    W = torch.rand(1, 1, 2, 4, 4)
    prediction = HeadPrediction(torch.tensor([9]))
    assert torch.equal(prediction.compiled(W), prediction.vectorised(W))
