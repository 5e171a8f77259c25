"""The compiled Poisson draws are numpy's own, bit for bit (probing.stats.poisson_draws)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from probing.stats.bootstrap import poisson_weights
from probing.stats.poisson_draws import WORD, poisson_draws


def numpy_draws(indices, replicates: int, seed: int) -> np.ndarray:
    return np.stack([np.random.default_rng([seed, int(index)]).poisson(1.0, replicates) for index in indices], axis=1)


def test_the_draws_of_thousands_of_sentences_are_numpy_s():
    indices = list(range(4000))
    draws = poisson_draws(indices, replicates=1000, seed=0)
    assert draws.dtype == np.int64 and draws.shape == (1000, 4000) and draws.flags.c_contiguous
    assert np.array_equal(draws, numpy_draws(indices, 1000, 0))


@pytest.mark.parametrize("seed", [1, 13, 2024, 65_537, WORD - 1])
def test_every_seed_and_index_of_one_word_draws_numpy_s(seed):
    generator = np.random.default_rng(seed)
    indices = [0, 1, WORD - 1, 2**31, *generator.integers(0, WORD, size=60).tolist()]
    assert np.array_equal(poisson_draws(indices, replicates=300, seed=seed), numpy_draws(indices, 300, seed))


def test_a_sentence_s_draws_do_not_depend_on_its_batch():
    together = poisson_draws([5, 9, 2], replicates=50, seed=3)
    assert np.array_equal(together[:, 1], poisson_draws([9], replicates=50, seed=3)[:, 0])


def test_what_is_not_one_word_is_left_to_numpy_and_the_weights_stay_numpy_s():
    assert poisson_draws([0, WORD], replicates=4, seed=0) is None
    assert poisson_draws([3], replicates=4, seed=WORD) is None
    assert poisson_draws([-1], replicates=4, seed=0) is None
    for indices, seed in (([0, WORD, 7], 0), ([3, 4], WORD + 5)):
        weights = poisson_weights(indices, replicates=20, seed=seed)
        assert torch.equal(weights, torch.from_numpy(numpy_draws(indices, 20, seed).astype(np.float64)))
    compact = poisson_weights([11, 12], replicates=20, seed=1, compact=True)
    assert compact.dtype == torch.uint8 and torch.equal(compact.long(), torch.from_numpy(numpy_draws([11, 12], 20, 1)))
