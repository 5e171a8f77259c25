"""Holm's step-down adjustment of a board's p-values, against cases worked by hand."""

import pytest

from probing.stats.multiplicity import holm, significant


def test_a_case_worked_by_hand():
    # m = 5. Sorted: 0.005 (a), 0.01 (b), 0.012 (c), 0.04 (d), 0.3 (e).
    # a: 5 x 0.005 = 0.025; b: max(0.025, 4 x 0.01 = 0.04) = 0.04; c: max(0.04, 3 x 0.012 = 0.036) = 0.04;
    # d: max(0.04, 2 x 0.04 = 0.08) = 0.08; e: max(0.08, 1 x 0.3) = 0.3
    raw = [0.04, 0.005, 0.3, 0.012, 0.01]           # d, a, e, c, b
    assert holm(raw) == pytest.approx([0.08, 0.025, 0.3, 0.04, 0.04])
    assert [significant(p) for p in holm(raw)] == [False, True, False, True, True]
    assert [significant(p) for p in raw] == [True, True, False, True, True]  # d: significant raw, not adjusted


def test_ties_clipping_and_rows_without_data():
    # m = 3 (the None row tests nothing): 3 x 0.2 = 0.6, then max(0.6, 2 x 0.2) = 0.6, then min(1, 1 x 0.9)
    assert holm([0.2, None, 0.9, 0.2]) == pytest.approx([0.6, None, 0.9, 0.6])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])       # 2 x 0.5 and 2 x 0.6 clip at 1
    assert holm([]) == [] and holm([None]) == [None]


def test_the_adjusted_value_lies_between_the_raw_and_bonferroni():
    raw = [0.0099, 0.0099, 0.0297, 0.05, 0.2, 0.7, 1.0]
    for p, adjusted in zip(raw, holm(raw)):
        assert p <= adjusted <= min(1.0, len(raw) * p)
