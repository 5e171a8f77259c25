"""The importance map's statistics on hand-built arrays (no model): rank correlation against a hand computation
and scipy, permutations that keep every head in its layer, the depth confound they remove, the chosen head's rank
against its band, the harmful direction of a loss and of an accuracy, and the map read from an ablation's state.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from probing.analyses.ablation.scores import scores_only_state
from probing.analyses.importance.maps import each_head_conditions, harm_of, head_map
from probing.analyses.importance.syntax import band_layers, chosen_head, dev_accuracy, rank_among, syntax_against_harm
from probing.errors import ProbingError
from probing.naming import head_name
from probing.stats.ranks import average_ranks, permuted_spearman, spearman, spearman_rows, within_strata

# ---------------------------------------------------------------------------- ranks and rho


def test_rho_is_the_hand_computed_value():
    # no ties: 1 - 6 sum d^2 / (n (n^2 - 1)); d = (-1, 1, -1, 1, 0): 1 - 6 * 4 / 120 = 0.8
    assert spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == pytest.approx(0.8, abs=1e-12)
    # ties: x's ranks (1, 2.5, 2.5, 4), y's (1, 3, 2, 4); centred dot 4.5, norms^2 4.5 and 5
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(4.5 / np.sqrt(4.5 * 5), abs=1e-12)


def test_ranks_and_rho_agree_with_scipy_on_tied_data():
    rng = np.random.default_rng(7)
    for _ in range(20):
        x, y = rng.integers(0, 6, size=40), rng.integers(0, 4, size=40).astype(float)  # many ties on both sides
        assert np.allclose(average_ranks(y), scipy.stats.rankdata(y))
        assert spearman(x, y) == pytest.approx(scipy.stats.spearmanr(x, y).statistic, abs=1e-12)


def test_values_equal_but_for_rounding_share_a_rank_only_within_the_tie():
    values = [0.3, (0.1 + 0.2), 0.5]  # 0.3 and 0.30000000000000004
    assert average_ranks(values).tolist() == [1.0, 2.0, 3.0]
    assert average_ranks(values, tie=1e-9).tolist() == [1.5, 1.5, 3.0]


def test_a_constant_variable_has_no_rho():
    assert np.isnan(spearman([1, 2, 3], [4, 4, 4]))
    assert np.isnan(spearman_rows([2, 2, 2], [[1, 2, 3]])).all()


# ---------------------------------------------------------------------------- permutations within layers


def test_permutations_keep_every_head_in_its_layer():
    strata = np.repeat(np.arange(5), 4)  # 5 layers of 4 heads
    permutations = within_strata(strata, count=500, seed=3)
    assert permutations.shape == (500, 20)
    assert (strata[permutations] == strata).all()                       # every head stays in its layer
    assert (np.sort(permutations, axis=1) == np.arange(20)).all()      # each row is a permutation
    assert len({tuple(row) for row in permutations}) > 450             # and they differ
    moved = (permutations != np.arange(20)).any(axis=0)
    assert moved.all()                                                  # every head moves in some permutation
    assert np.array_equal(permutations, within_strata(strata, count=500, seed=3))  # seeded
    assert not np.array_equal(permutations, within_strata(strata, count=500, seed=4))


def test_strata_need_not_be_in_order():
    strata = np.array([2, 0, 2, 1, 0, 1])
    assert (strata[within_strata(strata, count=50, seed=0)] == strata).all()


def test_chunks_give_the_permutations_of_one_draw():
    x, y, strata = np.arange(12.0), np.random.default_rng(1).random((12, 2)), np.repeat(np.arange(3), 4)
    whole = permuted_spearman(x, y, strata, count=30, seed=5, chunk=30)
    assert np.array_equal(whole, permuted_spearman(x, y, strata, count=30, seed=5, chunk=7))
    expected = [[spearman(x[p], y[:, c]) for c in range(2)] for p in within_strata(strata, count=30, seed=5)]
    assert np.allclose(whole, expected)


def _tests(accuracy, harm, replicates=None, permutations=2000, seed=0):
    harm = np.asarray(harm, dtype=float)[None]
    replicates = np.repeat(harm[None], 3, axis=0) if replicates is None else replicates
    return syntax_against_harm(accuracy, harm, replicates, permutations=permutations, seed=seed)[0]


def test_depth_alone_cannot_make_rho_significant():
    """A layer that both tracks the relation and matters: accuracy and harm both rise with depth, so rho is large,
    but within each layer harm is the same for every head, so every within-layer permutation gives that rho: p = 1."""
    layers = np.arange(4)[:, None] * np.ones((1, 5))
    accuracy = 0.1 * layers + np.random.default_rng(0).random((4, 5)) * 0.05
    test = _tests(accuracy, layers * 0.02)
    assert test["rho"] > 0.8 and test["p_value"] == 1.0


def test_a_within_layer_match_is_found_whatever_depth_does():
    """Within every layer the more accurate head is the more harmful one, while depth runs the other way (deeper
    layers track more and matter less): rho over all heads is negative, yet no within-layer permutation matches
    the heads as well (the rearrangement inequality, layer by layer), so p is the least the permutations allow."""
    rng = np.random.default_rng(2)
    layers = np.arange(4)[:, None]
    accuracy = rng.random((4, 6)) + layers
    harm = accuracy - 3 * layers  # harm in accuracy's order inside each layer, lower in deeper layers
    test = _tests(accuracy, harm, permutations=999)
    assert test["rho"] < 0 and test["p_value"] == pytest.approx(1 / 1000)


def test_p_counts_the_permutations_at_least_as_large_one_sided():
    rng = np.random.default_rng(11)
    accuracy, harm = rng.random((3, 4)), rng.random((3, 4))
    test = _tests(accuracy, harm, permutations=300, seed=9)
    strata = np.repeat(np.arange(3), 4)
    observed = spearman(accuracy.ravel(), harm.ravel())
    permuted = np.array([spearman(accuracy.ravel()[p], harm.ravel()) for p in within_strata(strata, count=300, seed=9)])
    assert test["rho"] == pytest.approx(observed)
    assert test["p_value"] == pytest.approx((1 + np.sum(permuted >= observed - 1e-9)) / 301)
    flipped = _tests(accuracy, -harm, permutations=300, seed=9)  # the other side: syntactic heads matter less
    assert flipped["rho"] == pytest.approx(-observed)
    assert flipped["p_value"] == pytest.approx((1 + np.sum(-permuted >= -observed - 1e-9)) / 301)


def test_the_interval_is_rho_of_each_replicate_the_accuracies_fixed():
    rng = np.random.default_rng(4)
    accuracy, harm = rng.random((2, 5)), rng.random((2, 5))
    replicates = np.stack([harm, harm[::-1], harm ** 2, np.full_like(harm, np.nan), np.ones_like(harm)])[:, None]
    test = _tests(accuracy, harm, replicates)
    kept = [spearman(accuracy.ravel(), r.ravel()) for r in (harm, harm[::-1], harm ** 2)]
    assert test["replicates"] == 3  # the replicate without units and the one of equal harms are left out
    assert test["interval"] == pytest.approx(list(np.percentile(kept, [2.5, 97.5])))


def test_undefined_rho_has_no_p_and_no_interval():
    test = _tests(np.random.default_rng(0).random((2, 3)), np.zeros((2, 3)))
    assert test == {"rho": None, "interval": None, "p_value": None, "replicates": 0}


# ---------------------------------------------------------------------------- the chosen head and its band


def test_the_band_is_the_layer_and_its_neighbours():
    assert [band_layers(layer, 4) for layer in range(4)] == [range(0, 2), range(0, 3), range(1, 4), range(2, 4)]


def test_rank_against_the_band_and_the_model():
    harm = np.array([[9.0, 0.0], [1.0, 2.0], [3.0, 0.5], [8.0, 7.0]])  # [layer, head]; a loss: effect = harm
    band = rank_among(harm, 1, 1, layers=band_layers(1, 4), higher_is_better=False)
    assert band == {"layers": [0, 2], "heads": 6, "rank": 3, "ties": 0, "p_value": 3 / 6}  # 9 and 3 hurt more
    model = rank_among(harm, 1, 1, layers=range(4), higher_is_better=False)
    assert model["heads"] == 8 and model["rank"] == 5 and model["p_value"] == 5 / 8      # and 8 and 7


def test_a_tie_counts_in_p_not_in_the_rank():
    effect = np.array([[-0.1, -0.3], [-0.3, 0.0]])  # an accuracy: two heads cost 0.3 each
    found = rank_among(effect, 0, 1, layers=range(2), higher_is_better=True)
    assert found["rank"] == 1 and found["ties"] == 1 and found["p_value"] == 2 / 4


def test_the_harmful_direction_of_a_loss_and_of_an_accuracy():
    effect = np.array([[0.2, -0.1]])
    assert harm_of(effect, higher_is_better=False).tolist() == [[0.2, -0.1]]   # a loss rising hurts
    assert harm_of(effect, higher_is_better=True).tolist() == [[-0.2, 0.1]]    # an accuracy falling hurts
    assert rank_among(effect, 0, 0, layers=range(1), higher_is_better=False)["rank"] == 1
    assert rank_among(effect, 0, 0, layers=range(1), higher_is_better=True)["rank"] == 2


def test_the_chosen_head_is_ablate_chosens_with_its_tie_rule():
    scored = {"total": 10, "heads": {"dep_to_head": [[2, 7], [7, 1]], "head_to_dep": [[7, 0], [3, 3]]},
              "causal": {"heads": [[0, 0], [0, 9]]}}
    assert chosen_head(scored) == {"layer": 1, "head": 1, "direction": "causal", "accuracy": 0.9}
    del scored["causal"]  # three heads tie at 7: the lower layer, then the lower head, then dep_to_head
    assert chosen_head(scored) == {"layer": 0, "head": 0, "direction": "head_to_dep", "accuracy": 0.7}
    accuracy, direction = dev_accuracy(scored)
    assert accuracy.tolist() == [[0.7, 0.7], [0.7, 0.3]]
    assert direction.tolist() == [["head_to_dep", "dep_to_head"], ["dep_to_head", "head_to_dep"]]


# ---------------------------------------------------------------------------- the map from an ablation


def _ablation(order, values, replicates, num_layers=2, num_heads=2, higher_is_better=False):
    """An ablate --each-head result's fields the map reads; ``order`` lists the (layer, head) of conditions 1..n."""
    conditions = [{"label": "none", "heads": []}] + [{"label": head_name(layer, head), "heads": [[layer, head]]}
                                                     for layer, head in order]
    return {"model": {"num_layers": num_layers, "num_heads": num_heads}, "config": {"metric": "lm", "shard": None},
            "conditions": conditions, "state": scores_only_state(values, replicates),
            "metric": {"name": "loss", "description": "a loss", "higher_is_better": higher_is_better,
                       "parts": ["loss"]}}


def test_the_map_puts_each_condition_at_its_head_in_any_order():
    order = [(1, 1), (0, 0), (1, 0), (0, 1)]
    values = np.array([[1.0], [1.4], [1.1], [1.3], [1.2]])            # [condition, part]
    replicates = values[None] + np.array([0.0, 0.1])[:, None, None]   # [replicate, condition, part]
    replicates[1, 2] += 0.5                                           # head 0-0 costs more on replicate 1
    found = head_map(_ablation(order, values, replicates))
    assert np.allclose(found.effect[0], [[0.1, 0.2], [0.3, 0.4]])
    assert np.allclose(found.replicates[:, 0, 0, 0], [0.1, 0.6])      # paired: minus the same replicate's intact
    assert np.allclose(found.harm, found.effect)                      # a loss: harm is the effect
    low, high = found.intervals()
    assert low[0, 0, 0] == pytest.approx(np.percentile([0.1, 0.6], 2.5))
    assert high[0, 0, 0] == pytest.approx(np.percentile([0.1, 0.6], 97.5))


def test_only_an_each_head_result_is_read():
    values, replicates = np.zeros((3, 1)), np.zeros((2, 3, 1))
    with pytest.raises(ProbingError, match="not a result of ablate --each-head"):
        head_map(_ablation([(0, 0), (0, 1)], values, replicates))     # two of four heads
    result = _ablation([(0, 0), (0, 1), (1, 0), (1, 1)], np.zeros((5, 1)), np.zeros((2, 5, 1)))
    result["conditions"][4]["heads"] = [[0, 0]]
    with pytest.raises(ProbingError, match="twice"):
        each_head_conditions(result)
    result["conditions"][4]["heads"] = [[1, 1], [1, 0]]             # a set of two heads
    with pytest.raises(ProbingError, match="not a result of ablate --each-head"):
        each_head_conditions(result)


# ---------------------------------------------------------------------------- the result, validated

DEV = "leaderboards/versus/results/all-MiniLM-L6-v2-dev.json"
"""A committed DEV probe result (all-MiniLM-L6-v2 on en_ewt dev): its model block is a whole one, its counts real."""


@pytest.fixture(scope="module")
def dev() -> dict:
    from conftest import REPO

    from probing.results.io import read_result

    return read_result(REPO / DEV, analysis="probe")


def _each_head_result(dev: dict, higher_is_better: bool = True, seed: int = 0) -> dict:
    """An ablate --each-head result of DEV's model on other units, its scores drawn at random (an accuracy)."""
    layers, heads = dev["model"]["num_layers"], dev["model"]["num_heads"]
    order = [(layer, head) for layer in range(layers) for head in range(heads)]
    rng = np.random.default_rng(seed)
    values = 0.5 + 0.1 * rng.random((1 + len(order), 2))
    replicates = values[None] + 0.01 * rng.standard_normal((20, 1 + len(order), 2))
    result = _ablation(order, values, replicates, layers, heads, higher_is_better)
    result["metric"].update({"name": "probe", "parts": ["det", "all"]})
    result.update({"model": dev["model"], "created": "2026-12-07T00:00:00+00:00",
                   "input": {"path": "en_ewt:test", "sha256": "e" * 64, "kind": "treebank", "units_total": 2077,
                             "units_used": 300, "skipped": {"too_long": 0}}})
    result["config"].update({"metric": "probe", "attention": "weights", "pooling": dev["config"]["pooling"],
                             "bootstrap": {"replicates": 20, "seed": 0}, "limit": 300})
    return result


def _importance(ablation, dev, **options):
    from probing.analyses.importance.build import importance_result

    sources = {"ablation": {"path": "a.json", "sha256": "a" * 64}, "dev": {"path": "d.json", "sha256": "d" * 64}}
    return importance_result(ablation, dev, sources=sources, **{"relations": ["det", "all"], "permutations": 200,
                                                                 **options})


def test_the_result_validates_and_holds_what_its_parts_give(dev):
    from probing.results.schema.validation import validate

    ablation = _each_head_result(dev)
    result = validate(_importance(ablation, dev), source="made")
    found = head_map(ablation)
    accuracy, _ = dev_accuracy(dev["relations"]["det"])
    assert np.allclose(np.array(result["map"]["det"]["harm"]), -found.effect[0])
    assert result["accuracy"]["det"]["accuracy"] == accuracy.tolist()
    assert result["syntax"]["det"]["det"]["rho"] == pytest.approx(spearman(accuracy.ravel(), -found.effect[0].ravel()))
    head = result["chosen"]["det"]["head"]
    assert (head["layer"], head["head"]) == (dev["relations"]["det"]["best"]["layer"],
                                             dev["relations"]["det"]["best"]["head"])  # DEV's own best, same rule
    band = result["chosen"]["det"]["parts"]["det"]["band"]
    rows = range(max(0, head["layer"] - 1), min(6, head["layer"] + 2))
    harms = -found.effect[0]
    mine = harms[head["layer"], head["head"]]
    assert band["heads"] == 12 * len(rows) and band["rank"] == 1 + int(np.sum(harms[list(rows)] > mine + 1e-9))


@pytest.mark.parametrize("edit, field", [
    (lambda r: r["map"]["det"]["harm"][0].__setitem__(0, 0.5), "map.det.harm[0][0]"),
    (lambda r: r["chosen"]["det"]["parts"]["all"]["band"].__setitem__("p_value", 0.001), "band.p_value"),
    (lambda r: r["chosen"]["det"]["parts"]["all"]["model"].__setitem__("layers", [1, 5]), "parts.all.model"),
    (lambda r: r["syntax"]["det"].pop("all"), "syntax.det"),
    (lambda r: r["map"].pop("all"), "map"),
])
def test_an_edited_result_is_refused_in_one_line(dev, edit, field):
    from probing.results.schema.validation import validate

    result = _importance(_each_head_result(dev), dev)
    edit(result)
    with pytest.raises(ProbingError, match=f"^edited: [^\\n]*{field.replace('[', '.').replace(']', '.')}"):
        validate(result, source="edited")


def test_dev_must_be_other_sentences_of_the_same_model(dev):
    ablation = _each_head_result(dev)
    same = {**ablation, "input": {**ablation["input"], "sha256": dev["input"]["sha256"]}}
    with pytest.raises(ProbingError, match="holds the very sentences"):
        _importance(same, dev)
    other = {**ablation, "model": {**ablation["model"], "fingerprint": "sha256:other"}}
    with pytest.raises(ProbingError, match="not of the same model"):
        _importance(other, dev)
    with pytest.raises(ProbingError, match="lacks relations"):
        _importance(ablation, dev, relations=["nmod"])


def test_the_board_says_why_a_row_has_no_rho(dev):
    from probing.analyses.importance.board import NO_RHO, leaderboard_tables
    from probing.report.board import cell_text

    flat = {**dev, "relations": {**dev["relations"], "det": {**dev["relations"]["det"], "heads": {
        direction: [[5] * 12 for _ in range(6)] for direction in ("dep_to_head", "head_to_dep")}}}}  # all heads equal
    result = _importance(_each_head_result(dev), flat)
    assert result["syntax"]["det"]["det"]["rho"] is None and result["syntax"]["all"]["all"]["rho"] is not None
    (table,) = leaderboard_tables([result])
    cells = {row.model.split(", ")[1]: row.cells["probe: own relation: rho"] for row in table.rows}
    assert cell_text(cells["det"]) == NO_RHO and cell_text(cells["all"]).startswith(("+", "-"))
    assert "m = 1 tests" in table.notes[-1]  # a row without rho tests nothing
