"""Many tests on one board: Holm's step-down adjustment of their p-values, and Tarone's rule for the tests that
cannot reach significance at all.

A board that tests m rows calls a row significant only when its adjusted p-value is at most the level
(0.05): the chance that any of the m rows is called significant by luck alone stays below the level, whatever
the rows' dependence. Holm (1979): sort the p-values p(1) <= ... <= p(m); the adjusted p(i) is the maximum over
j <= i of min(1, (m - j + 1) p(j)). It is never smaller than the raw p, and never larger than Bonferroni's m p.

Pure Python (no torch, no numpy): it runs on result files.

>>> holm([0.01, 0.04, 0.03, 0.5])          # m = 4: 4 x 0.01, then max(0.04, 3 x 0.03), then 2 x 0.04, then 0.5
[0.04, 0.09, 0.09, 0.5]
>>> holm([0.02, None, 0.03])               # a row without a p-value tests nothing: m = 2
[0.04, None, 0.04]
"""

from __future__ import annotations

import math

LEVEL = 0.05
"""The level at which a row is called significant, by its adjusted p-value only."""


def holm(p_values) -> list[float | None]:
    """Holm's adjusted p-values of ``p_values``, in their order; None (a row with no data) stays None and is not
    counted in m. Ties keep their order (their adjusted values come out equal)."""
    tested = [(p, index) for index, p in enumerate(p_values) if p is not None]
    m = len(tested)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, index) in enumerate(sorted(tested, key=lambda item: item[0])):
        running = max(running, min(1.0, (m - rank) * p))  # rank from 0: (m - j + 1) for j = rank + 1
        adjusted[index] = running
    return adjusted


def significant(adjusted: float | None, level: float = LEVEL) -> bool:
    """Whether a row is called significant: its adjusted p-value is at most ``level`` (never the raw one).

    >>> significant(0.04), significant(0.09), significant(None)
    (True, False, False)
    """
    return adjusted is not None and adjusted <= level


def draws_needed(m: int, level: float = LEVEL) -> int:
    """The fewest random draws a row needs so that, tested among ``m`` rows, it can be called significant at
    ``level``: its least p, 1 / (1 + draws), times m at most ``level`` (1 + draws >= 20 m at 0.05).

    >>> draws_needed(40), draws_needed(1)
    (799, 19)
    """
    return max(0, math.ceil(round(m / level, 9)) - 1)


def reaches(draws: int, m: int, level: float = LEVEL) -> bool:
    """Whether a permutation test against ``draws`` random draws (or the sets of an exact space) can reach
    ``level`` / ``m``: its least p, 1 / (1 + draws), is at most that (``m`` <= (1 + draws) x ``level``, rounded to
    9 digits so that 1 / 280 reaches 0.05 / 14).

    >>> reaches(279, 14), reaches(278, 14), reaches(8, 1)
    (True, False, False)
    """
    return m <= round((1 + draws) * level, 9)


def tarone(draws, level: float = LEVEL) -> int:
    """Tarone's m' for tests whose least p is 1 / (1 + draws) (one count of draws per test): the smallest m' such
    that at most m' of them can reach ``level`` / m' (:func:`reaches`); 0 for no test. A test that cannot reach
    ``level`` / m' can never be significant, so it is left out of the family, and Holm adjusts the others for
    each other only (Tarone 1990).

    >>> tarone([1200, 924] + [100] * 6 + [8] * 6)   # m' = 6: only the two of 924 and 1,200 reach 0.05 / 6
    6
    >>> tarone([279] * 14 + [8] * 6), tarone([8, 3]), tarone([])
    (14, 1, 0)
    """
    draws = list(draws)
    for m in range(1, len(draws) + 1):
        if sum(reaches(count, m, level) for count in draws) <= m:
            return m
    return 0
