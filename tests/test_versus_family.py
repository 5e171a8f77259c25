"""The causal board's rules on hand-built cells (no model): the declared family, Tarone's m', Holm's order, the
threshold's rank, the labels of an interval and of a spread, band-matched draws and their exact enumeration, and
the draws a family needs."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest

from probing.analyses.ablation.family import (
    BAND,
    ENOUGH,
    EXPLORATORY,
    LAYER,
    NEVER,
    TESTED,
    UNTESTABLE,
    FamilyCell,
    Spaces,
    declare,
    is_primary,
    sizing,
)
from probing.analyses.ablation.versus import (
    band_pool,
    matched_draw,
    permutation_p,
    short_of,
    space_size,
    threshold_effect,
    versus_sets,
)
from probing.stats.multiplicity import holm, reaches, tarone


def brute_tarone(draws: list[int]) -> int:
    """Tarone's m' by its definition, over every m' from 1 (the reference the rule is checked against)."""
    floors = [1 / (1 + n) for n in draws]
    return next(m for m in range(1, len(draws) + 1) if sum(floor <= 0.05 / m + 1e-15 for floor in floors) <= m)


@pytest.mark.parametrize("draws", [
    [1200, 924] + [100] * 6 + [81] * 6 + [8] * 6 + [3] * 6 + [11] * 2,   # today's board: only MiniLM's two reach
    [279] * 14 + [8] * 6 + [3] * 6 + [11] * 2,                          # sized: the k = 4 cells, 279 draws each
    [19, 19, 39, 59, 1000, 5],
    [8, 3, 11],                                                         # k = 1 alone: nothing reaches 0.05
])
def test_tarones_m_prime_is_the_least_m_such_that_at_most_m_cells_can_reach_level_over_m(draws):
    m_prime = tarone(draws)
    assert m_prime == brute_tarone(draws)
    assert sum(reaches(n, m_prime) for n in draws) <= m_prime
    assert m_prime == 1 or sum(reaches(n, m_prime - 1) for n in draws) > m_prime - 1


def test_todays_board_leaves_out_every_cell_but_minilms_k4_and_tests_those_two_alone():
    draws = [1200, 924] + [100] * 6 + [81] * 6 + [8] * 6 + [3] * 6 + [11] * 2
    cells = [FamilyCell(f"cell {i}", p=1 / (1 + n), draws=n) for i, n in enumerate(draws)]
    family = declare(cells)
    assert (family.m_prime, family.m) == (6, 2)
    assert [cell.status for cell in cells[:2]] == [TESTED, TESTED] and {c.status for c in cells[2:]} == {UNTESTABLE}
    # the two tested cells are adjusted for each other only, Holm over m = 2 (not the 28 cells with a p): 2 x 1/1201,
    # then max(that, 1 x 1/925)
    assert [cell.adjusted for cell in cells[:2]] == pytest.approx([2 / 1201, 2 / 1201])
    # 100 draws (least p 0.0099) miss 0.05 / 6 = 0.0083, though they would reach 0.05 / 5: with three of them fewer
    # (one relation's rows of SmolLM2), m' would be 5 and they would be in
    assert not reaches(100, 6) and reaches(100, 5)
    assert tarone([1200, 924] + [100] * 3 + [8] * 6) == 5


def test_holm_runs_over_the_tested_cells_in_order_of_their_p_and_leaves_the_others_unadjusted():
    cells = [FamilyCell("a", 0.004, 1000), FamilyCell("b", 0.001, 1000), FamilyCell("c", 0.03, 1000),
             FamilyCell("d", 0.002, 1000, primary=False), FamilyCell("e", 0.5, 5), FamilyCell("f", None, 1000)]
    family = declare(cells)
    assert family.m == 3 and [cell.status for cell in cells] == [TESTED, TESTED, TESTED, EXPLORATORY, UNTESTABLE,
                                                                 "no test"]
    # sorted 0.001, 0.004, 0.03: 3 x 0.001, then max(0.003, 2 x 0.004), then max(0.008, 1 x 0.03)
    assert [cells[1].adjusted, cells[0].adjusted, cells[2].adjusted] == pytest.approx([0.003, 0.008, 0.03])
    assert [cell.adjusted for cell in cells[:3]] == pytest.approx(holm([0.004, 0.001, 0.03]))
    assert cells[3].adjusted is cells[4].adjusted is cells[5].adjusted is None
    # an exploratory cell's small p changes no tested cell's adjustment
    again = declare([FamilyCell("a", 0.004, 1000), FamilyCell("b", 0.001, 1000), FamilyCell("c", 0.03, 1000)])
    assert [cell.adjusted for cell in again.cells] == [cell.adjusted for cell in cells[:3]]


def test_primary_cells_are_the_loss_minimal_pairs_overall_and_the_probe_on_the_rows_relation():
    assert is_primary("loss", "loss", "det") and is_primary("accuracy", "overall", "nsubj")
    assert is_primary("probe", "nsubj", "nsubj") and not is_primary("probe", "all", "nsubj")
    assert not is_primary("probe", "det", "nsubj")
    assert not is_primary("accuracy", "phenomenon:subject_verb_agreement", "nsubj")
    assert not is_primary("accuracy", "field:morphology", "det")


@pytest.mark.parametrize("draws, m", [(100, 1), (100, 2), (1200, 2), (924, 2), (279, 14), (1200, 14), (399, 1)])
@pytest.mark.parametrize("higher_is_better", [True, False])
def test_the_threshold_is_the_rules_rank_and_what_it_lets_pass(draws, m, higher_is_better):
    rng = np.random.default_rng(draws + m)
    randoms = rng.normal(size=draws)
    threshold = threshold_effect(randoms, higher_is_better, m)
    # the rule as written: the random effect at rank ceil((1 + draws) x 0.05 / m) from the harmful end
    x = round((1 + draws) * 0.05 / m, 9)
    ordered = np.sort(randoms) if higher_is_better else np.sort(randoms)[::-1]
    assert threshold == ordered[math.ceil(x) - 1]
    harm = -1 if higher_is_better else 1  # the harmful direction
    beyond = threshold + harm * 1e-6
    p_beyond = permutation_p(beyond, randoms, higher_is_better)
    assert p_beyond == math.ceil(x) / (1 + draws)       # ceil(x) - 1 draws are still as harmful
    assert permutation_p(threshold, randoms, higher_is_better) > p_beyond
    # where x is whole, beyond the threshold passes Holm's 0.05 exactly; where it is not, the rule is one rank
    # lenient (p x m just above 0.05), and beyond the floor(x)-th effect would pass
    assert (m * p_beyond <= 0.05 + 1e-12) is x.is_integer()
    strict = ordered[math.floor(x) - 1] + harm * 1e-6
    assert m * permutation_p(strict, randoms, higher_is_better) <= 0.05 + 1e-12


def test_a_threshold_no_draw_can_reach_is_unreachable():
    assert threshold_effect(np.zeros(8), True, m=1) is None            # 1 / 9 > 0.05
    assert threshold_effect(np.zeros(100), True, m=6) is None          # 6 / 101 > 0.05
    assert threshold_effect(np.zeros(100), True, m=5) == 0.0


def test_an_interval_and_a_spread_read_differently():
    from probing.analyses.ablation.board import chosen_cell, random_cell
    from probing.report.board import cell_text

    entry = {"chosen": {"effect": -0.132, "interval": [-0.175, -0.082], "se": 0.024}, "p_value": 0.0008,
             "random": {"mean": -0.015, "percentiles": [-0.078, 0.005], "draws": 1200}, "space": 5445,
             "exact": False, "short_sets": 0}
    chosen, random = cell_text(chosen_cell(entry, "points")), cell_text(random_cell(entry, "points", "band"))
    assert chosen == "-13.2 [-17.5, -8.2]"
    assert random == "-1.5 draws 2.5-97.5%: -7.8 to +0.5 1,200 draws, band-matched (space 5,445)"
    exact = {**entry, "exact": True, "random": {**entry["random"], "draws": 81}, "space": 81, "short_sets": 2}
    assert cell_text(random_cell(exact, "points", "layer")).endswith("all 81 sets of the layer-matched space, 2 short")


def test_a_band_draw_excludes_the_chosen_heads_and_stays_in_their_bands():
    chosen = [(0, 2, "dep_to_head"), (3, 1, "causal"), (8, 1, "head_to_dep"), (11, 0, "causal")]  # gemma's det top 4
    bands = {0, 1, 2, 3, 4, 7, 8, 9, 10, 11, 12}
    pool = band_pool(chosen, num_layers=18, num_heads=4)
    assert {layer for layer, _ in pool} == bands and len(pool) == 4 * len(bands) - 4
    assert not {(0, 2), (3, 1), (8, 1), (11, 0)} & set(pool)
    draws = [matched_draw(chosen, 18, 4, seed=0, index=i, match="band") for i in range(200)]
    assert draws == [matched_draw(chosen, 18, 4, seed=0, index=i, match="band") for i in range(200)]  # seeded
    for draw in draws:
        assert len(set(draw.heads)) == 4 and draw.short == 0 and set(draw.heads) <= set(pool)
    assert {layer for draw in draws for layer, _ in draw.heads} == bands  # every band layer is reachable
    assert len({draw.heads for draw in draws}) > 190
    assert space_size(chosen, 4, "band", 18) == math.comb(40, 4) == 91390
    assert space_size(chosen, 4) == 3 ** 4  # layer-matched: 3 other heads in each of 4 layers
    # the model's first and last layers clip the band
    assert {layer for layer, _ in band_pool([(0, 0), (17, 3)], num_layers=18, num_heads=4)} == {0, 1, 16, 17}


def test_a_small_band_space_is_enumerated_exactly_once_each():
    chosen = [(0, 0, "dep_to_head"), (1, 1, "dep_to_head")]
    pool = band_pool(chosen, num_layers=3, num_heads=2)     # layers 0-2, 6 heads, less the 2 chosen
    space = math.comb(len(pool), 2)
    assert space == space_size(chosen, 2, "band", 3) == 6
    sets = versus_sets({"det@2": chosen}, num_layers=3, num_heads=2, draws=space, seed=0, match="band")
    randoms = [entry for entry in sets if entry["role"] == "random"]
    assert all(entry["exact"] for entry in randoms) and sets[0]["space"] == space
    assert [entry["heads"] for entry in randoms] == list(combinations(pool, 2))
    drawn = versus_sets({"det@2": chosen}, num_layers=3, num_heads=2, draws=space - 1, seed=0, match="band")
    assert not any(entry["exact"] for entry in drawn[1:])
    assert all(set(entry["heads"]) <= set(pool) for entry in drawn[1:])


def test_a_band_smaller_than_the_chosen_set_gives_short_sets_and_says_so():
    chosen = [(0, 0), (0, 1), (0, 2)]
    draw = matched_draw(chosen, num_layers=1, num_heads=4, seed=0, index=0, match="band")
    assert draw.heads == ((0, 3),) and draw.short == 2
    assert short_of(chosen, draw.heads, "band") == 2 and short_of(chosen, draw.heads, "layer") == 2
    assert short_of([(0, 0), (5, 1)], [(1, 1), (4, 1)], "band") == 0
    assert short_of([(0, 0), (5, 1)], [(1, 1), (4, 1)], "layer") == 2  # none in layer 0 or 5


def test_an_unknown_matching_is_refused_by_its_option():
    from probing.errors import ProbingError

    with pytest.raises(ProbingError, match="--match: must be one of layer, band"):
        space_size([(0, 0)], 4, "depth", 2)


def test_sizing_gives_every_cell_that_can_be_tested_the_draws_its_family_needs():
    k4 = ([Spaces(f"gemma {m} {r}@4", 81, 81, 91390) for m in ("lm", "pairs", "probe") for r in ("det", "nsubj")]
          + [Spaces(f"smol {m} {r}@4", 100, 4096, 3183545) for m in ("lm", "pairs", "probe") for r in ("det", "nsubj")]
          + [Spaces("minilm det@4", 1200, 5445, 367290), Spaces("minilm nsubj@4", 924, 924, 135751)])
    k1 = [Spaces(f"k1 {i}", 8, 8, 26) for i in range(6)] + [Spaces(f"gemma k1 {i}", 3, 3, 11) for i in range(6)]
    plan = sizing(k4 + k1)
    assert (plan.m, plan.draws) == (14, 279)                        # 1 + 279 = 20 x 14
    assert [cell.plan for cell in k4] == [BAND] * 6 + [LAYER] * 6 + [ENOUGH] * 2
    assert {cell.plan for cell in k1} == {NEVER}
    # every cell the plan keeps can then reach 0.05 after Holm over the plan's m, and the family it makes is that m
    assert tarone([plan.draws] * 12 + [1200, 924] + [8] * 6 + [3] * 6) == plan.m
    assert all(reaches(max(cell.draws, plan.draws), plan.m) for cell in k4)
    # a layer-matched space of exactly the draws needed is enough for layer matching (enumerated whole)
    assert sizing([Spaces("a", 5, 19, 100)]).cells[0].plan == LAYER
    assert sizing([Spaces("a", 5, 18, 100)]).cells[0].plan == BAND
    assert sizing([Spaces("a", 5, 18, 18)]).cells[0].plan == NEVER
