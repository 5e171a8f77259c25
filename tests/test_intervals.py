"""Bootstrap intervals: coverage on simulated data, reproducibility, and exact merging of shards."""

from __future__ import annotations

import numpy as np
import pytest

from probing.analyses.probe.accumulator import counts_from_result
from probing.analyses.probe.api import score
from probing.analyses.probe.heldout_block import in_sample_reports
from probing.stats.bootstrap import poisson_weights
from probing.stats.intervals import (
    accuracy_interval,
    bootstrap_arrays,
    head_vs_baseline,
    paired_difference,
    percentile_interval,
    replicate_accuracies,
)
from probing.testing import sample_path, tiny_bert

SIMULATIONS = 400
SENTENCES = 250
REPLICATES = 400


def simulated_corpus(rng):
    """Per-sentence pair counts and correct counts of a head and a baseline.

    Sentences differ in difficulty (p_i ~ Beta(7, 3), mean 0.7), so pairs of one
    sentence are correlated: resampling pairs instead of sentences would give
    too-narrow intervals. True head accuracy 0.7; the baseline is right with
    probability 0.7 * p_i, so the true difference is 0.3 * 0.7 = 0.21.
    """
    pairs = rng.integers(1, 8, size=SENTENCES)
    p = rng.beta(7, 3, size=SENTENCES)
    head = rng.binomial(pairs, p)
    baseline = rng.binomial(pairs, 0.7 * p)
    return pairs, head, baseline


def test_intervals_cover_the_true_accuracy_about_95_percent_of_the_time():
    rng = np.random.default_rng(12345)
    covered_head = covered_difference = 0
    for simulation in range(SIMULATIONS):
        pairs, head, baseline = simulated_corpus(rng)
        # the real weights: Poisson(1) per (seed, sentence index), as the scorer draws them
        weights = poisson_weights(range(SENTENCES), replicates=REPLICATES, seed=simulation).numpy()  # [B, sentence]
        total, head_b, baseline_b = weights @ pairs, weights @ head, weights @ baseline
        low, high = accuracy_interval(head_b, total)
        covered_head += low <= 0.7 <= high
        low, high = paired_difference(head_b, baseline_b, total)["interval"]
        covered_difference += low <= 0.21 <= high
    # binomial sd of a 95% rate over 400 runs is 1.1 points; allow about 3.5 sd each way
    assert 0.91 <= covered_head / SIMULATIONS <= 0.99
    assert 0.91 <= covered_difference / SIMULATIONS <= 0.99


def test_interval_narrows_with_more_sentences():
    rng = np.random.default_rng(0)
    widths = []
    for sentences in (50, 800):
        pairs = rng.integers(1, 8, size=sentences)
        correct = rng.binomial(pairs, 0.6)
        weights = poisson_weights(range(sentences), replicates=300, seed=0).numpy()
        low, high = accuracy_interval(weights @ correct, weights @ pairs)
        widths.append(high - low)
    assert widths[1] < widths[0] / 2.5  # about sqrt(16) = 4 times narrower


def test_paired_difference_and_p_not_better():
    total = np.array([10, 10, 10, 10, 0])  # the last replicate drew no pair: dropped
    head = np.array([8, 6, 9, 5, 0])
    baseline = np.array([5, 6, 4, 7, 0])
    result = paired_difference(head, baseline, total)
    assert result["replicates"] == 4
    assert result["p_not_better"] == 0.5  # differences 0.3, 0.0, 0.5, -0.2: two are <= 0
    assert replicate_accuracies(head, total).tolist() == [0.8, 0.6, 0.9, 0.5]
    assert percentile_interval([]) is None
    assert accuracy_interval([0, 0], [0, 0]) is None
    with pytest.raises(ValueError):
        percentile_interval([1.0, 2.0], level=1.5)


def tiny(**options):
    return score(model=tiny_bert(), treebank=str(sample_path()), relations=("det", "pobj", "all"), **options)


def test_same_seed_same_intervals_other_seed_other_replicates():
    first, second, other = tiny(bootstrap=30, seed=3), tiny(bootstrap=30, seed=3), tiny(bootstrap=30, seed=4)
    assert first["bootstrap"] == second["bootstrap"]
    assert in_sample_reports(first) == in_sample_reports(second)
    assert first["relations"] == other["relations"]  # the seed moves only the replicates
    assert first["state"]["boot_total"] != other["state"]["boot_total"]


def test_merged_shards_equal_one_run_and_give_the_same_intervals():
    whole = tiny(bootstrap=25, seed=7)
    parts = [tiny(bootstrap=25, seed=7, shard=(index, 2)) for index in range(2)]
    assert 0 < parts[0]["treebank"]["sentences_scored"] < whole["treebank"]["sentences_scored"]
    merged = counts_from_result(parts[0]).merge(counts_from_result(parts[1]))
    expected = counts_from_result(whole)
    for name in expected.tensor_names():
        assert getattr(merged, name).equal(getattr(expected, name)), name
    assert merged.sentences == expected.sentences
    arrays = bootstrap_arrays(whole)
    for name, array in arrays.items():
        assert np.array_equal(array, getattr(merged, name).numpy()), name
    choice, offset = (1, 0, 2), 3
    from_merged = head_vs_baseline(merged.boot_total.numpy(), merged.boot_heads.numpy(), merged.boot_baselines.numpy(),
                                   1, choice, offset)
    from_whole = head_vs_baseline(arrays["boot_total"], arrays["boot_heads"], arrays["boot_baselines"], 1, choice, offset)
    assert from_merged == from_whole


def test_numpy_decoding_matches_the_result_reader():
    result = tiny(bootstrap=10, seed=1, limit=12)
    arrays, counts = bootstrap_arrays(result), counts_from_result(result)
    for name, array in arrays.items():
        assert np.array_equal(array, getattr(counts, name).numpy())
    assert bootstrap_arrays(tiny(bootstrap=0, limit=3)) is None


@pytest.mark.parametrize("chunk", [1, 3, 1000])
def test_replicate_sums_do_not_depend_on_the_chunking(chunk):
    """Weighting a chunk of sentences at a time gives the one product of every sentence's weights and counts,
    in float32 while exact and in float64 beyond (counts near 2**24 below)."""
    import torch

    from probing.stats.bootstrap import ReplicateSums

    rng = np.random.default_rng(5)
    small = rng.integers(0, 9, size=(10, 2, 3))
    large = rng.integers(2**24, 2**25, size=(10, 1))  # beyond float32's whole numbers: given and kept as float64
    sums = ReplicateSums(replicates=40, seed=2, shapes={"small": (2, 3), "large": (1,), "none": (0,)}, chunk=chunk)
    indices = list(range(100, 110))
    for start in range(0, 10, 4):  # batches of 4, 4 and 2 sentences
        rows = slice(start, start + 4)
        sums.add(indices[rows], {"small": torch.tensor(small[rows], dtype=torch.float32),
                                 "large": torch.tensor(large[rows], dtype=torch.float64),
                                 "none": torch.zeros(len(indices[rows]), 0)})
    weights = poisson_weights(indices, replicates=40, seed=2).numpy().astype(np.int64)  # [replicate, sentence]
    assert np.array_equal(sums["small"].numpy(), np.einsum("bs,sij->bij", weights, small))
    assert np.array_equal(sums["large"].numpy(), weights @ large)
    assert sums["none"].shape == (40, 0)
