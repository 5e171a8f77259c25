"""Chosen heads against matched random heads: the draws, the chosen set, the permutation p-value."""

from collections import Counter

import numpy as np
import pytest

from probing.analyses.ablation.versus import chosen_set, matched_draw, permutation_p, random_summary
from probing.errors import ProbingError

CHOSEN = [(0, 1, "dep_to_head"), (0, 3, "dep_to_head"), (2, 0, "head_to_dep")]


def scored_dev(model: str, folder) -> tuple[str, str]:
    """A DEV probe result of ``model`` on the sample's dev split (det, nsubj) and the test split it is measured on
    (choosing and measuring on the same sentences is refused)."""
    from probing.cli import main
    from probing.testing import sample_split

    dev, test = sample_split()
    output = folder / "dev.json"
    assert main(["score", "--quiet", "--model", model, "--treebank", dev, "--limit", "20", "--relations", "det",
                 "nsubj", "--bootstrap", "0", "--output", str(output)]) == 0
    return str(output), test


def test_draws_reproduce_from_the_seed_and_match_layers():
    first = [matched_draw(CHOSEN, num_layers=4, num_heads=8, seed=7, index=i) for i in range(20)]
    again = [matched_draw(CHOSEN, num_layers=4, num_heads=8, seed=7, index=i) for i in range(20)]
    assert first == again
    for draw in first:
        assert Counter(layer for layer, _ in draw.heads) == Counter({0: 2, 2: 1})
        assert not {(0, 1), (0, 3), (2, 0)} & set(draw.heads)
        assert len(set(draw.heads)) == 3 and draw.short == 0
    assert len({draw.heads for draw in first}) > 1  # the draw index changes the set
    other = [matched_draw(CHOSEN, num_layers=4, num_heads=8, seed=8, index=i) for i in range(20)]
    assert other != first


def test_a_full_layer_gives_a_smaller_set_and_says_so():
    chosen = [(0, 0, "dep_to_head"), (0, 1, "dep_to_head"), (1, 0, "dep_to_head")]
    draw = matched_draw(chosen, num_layers=2, num_heads=3, seed=0, index=0)
    assert draw.short == 1 and Counter(layer for layer, _ in draw.heads) == Counter({0: 1, 1: 1})


def test_chosen_set_takes_the_better_direction_and_the_tie_rule():
    rng = np.random.default_rng(1)
    heads = rng.integers(0, 5, size=(2, 3, 4))
    chosen = chosen_set(heads, 5)
    best = heads.max(axis=0)
    scores = [best[layer, head] for layer, head, _ in chosen]
    assert scores == sorted(scores, reverse=True)
    assert min(scores) >= np.sort(best.ravel())[::-1][4]
    for layer, head, direction in chosen:
        d = 0 if direction == "dep_to_head" else 1
        assert heads[d, layer, head] == best[layer, head] and (d == 0 or heads[0, layer, head] < best[layer, head])
    for (l1, h1, _), (l2, h2, _) in zip(chosen, chosen[1:]):
        if best[l1, h1] == best[l2, h2]:
            assert (l1, h1) < (l2, h2)


def test_chosen_set_makes_the_choices_of_the_one_tie_rule():
    # tie-heavy counts: the chosen set is ranked_heads' order, and its first head is select_head's choice
    from probing.naming import DIRECTIONS
    from probing.stats.selection import ranked_heads, select_head

    rng = np.random.default_rng(7)
    for _ in range(50):
        heads = rng.integers(0, 3, size=(2, 3, 4))
        for k in (1, 5, 12):
            expected = tuple((layer, head, DIRECTIONS[d]) for d, layer, head in ranked_heads(heads, k))
            assert chosen_set(heads, k) == expected
        choice = select_head(heads, total=1)
        assert chosen_set(heads, 1) == ((choice.layer, choice.head, choice.direction),)


def test_a_decoders_causal_direction_competes_for_the_chosen_set():
    # head 0-1 is the best later-to-earlier head (it reaches pairs on both sides); a classic direction wins a tie
    classic = np.array([[[4, 1]], [[0, 2]]])                 # [direction, layer, head]
    causal = np.array([[[3, 6]]])
    chosen = chosen_set(np.concatenate([classic, causal]), 2, ("dep_to_head", "head_to_dep", "causal"))
    assert chosen == ((0, 1, "causal"), (0, 0, "dep_to_head"))
    tie = np.concatenate([classic, np.array([[[4, 0]]])])
    assert chosen_set(tie, 1, ("dep_to_head", "head_to_dep", "causal")) == ((0, 0, "dep_to_head"),)


def test_k_larger_than_the_heads_is_refused():
    with pytest.raises(ProbingError, match="--k"):
        chosen_set(np.zeros((2, 2, 2)), 5)
    with pytest.raises(ProbingError, match="--k"):
        chosen_set(np.zeros((2, 2, 2)), 0)


def test_p_value_on_planted_effects():
    randoms = np.linspace(-0.01, 0.01, 99)
    assert permutation_p(-0.5, randoms, higher_is_better=True) == pytest.approx(1 / 100)   # far more harmful
    assert permutation_p(+0.5, randoms, higher_is_better=True) == pytest.approx(1.0)       # helps: all as harmful
    assert permutation_p(+0.5, randoms, higher_is_better=False) == pytest.approx(1 / 100)  # a loss that rises
    assert permutation_p(0.0, randoms, higher_is_better=False) == pytest.approx((1 + 50) / 100)
    summary = random_summary(randoms)
    assert summary["draws"] == 99 and summary["mean"] == pytest.approx(0.0, abs=1e-12)
    assert summary["percentiles"][0] < 0 < summary["percentiles"][1]


def test_versus_report_on_planted_scores():
    from probing.analyses.ablation.versus import versus_report, versus_sets
    sets = versus_sets({"det@1": CHOSEN[:1]}, num_layers=4, num_heads=12, draws=9, seed=3)  # 11 sets > 9 draws
    assert [entry["role"] for entry in sets][:1] == ["chosen"] and not any(entry["exact"] for entry in sets)
    values = np.array([[0.8]] + [[0.2]] + [[0.79]] * (len(sets) - 1))    # the chosen set alone hurts
    replicates = np.repeat(values[None], 5, axis=0)
    report = versus_report(values, replicates, sets, part=0, higher_is_better=True)["det@1"]
    assert report["chosen"]["effect"] == pytest.approx(-0.6) and report["p_value"] == pytest.approx(1 / 10)
    assert report["random"]["mean"] == pytest.approx(-0.01) and report["random"]["draws"] == 9
    assert report["exact"] is False and report["space"] == 11


def test_a_space_no_larger_than_the_draws_is_enumerated_exactly():
    """k heads whose layer-matched space holds <= the draws asked: every distinct set once, p exact."""
    from itertools import combinations

    from probing.analyses.ablation.versus import space_size, versus_report, versus_sets

    assert space_size(CHOSEN, num_heads=8) == 15 * 7          # C(6, 2) in layer 0, C(7, 1) in layer 2
    sets = versus_sets({"k3": CHOSEN}, num_layers=4, num_heads=8, draws=105, seed=0)
    randoms = [entry for entry in sets if entry["role"] == "random"]
    assert len(randoms) == 105 and all(entry["exact"] for entry in randoms)
    layer0 = {tuple((0, h) for h in pair) for pair in combinations([0, 2, 4, 5, 6, 7], 2)}
    layer2 = {((2, h),) for h in range(1, 8)}
    assert {entry["heads"] for entry in randoms} == {tuple(sorted(a + b)) for a in layer0 for b in layer2}
    assert [entry["draws"] for entry in randoms] == [(i,) for i in range(105)]
    drawn = versus_sets({"k3": CHOSEN}, num_layers=4, num_heads=8, draws=104, seed=0)  # one draw short: drawn
    assert not any(entry["exact"] for entry in drawn)
    # the exact p: the chosen set (effect -0.5) beaten only by the 4 sets planted at -0.9, over the space's 105
    values = np.array([[1.0], [0.5]] + [[0.1]] * 4 + [[0.99]] * 101)
    report = versus_report(values, np.repeat(values[None], 3, axis=0), sets, part=0, higher_is_better=True)["k3"]
    assert report["p_value"] == pytest.approx(5 / 106) and report["exact"] is True and report["space"] == 105
    assert report["random"]["draws"] == report["random"]["distinct"] == 105
    # a layer with too few heads left gives all it has: one way there, and the set is short
    full = [(0, 0, "dep_to_head"), (0, 1, "dep_to_head"), (1, 0, "dep_to_head")]
    assert space_size(full, num_heads=3) == 1 * 2
    short = versus_sets({"k3": full}, num_layers=2, num_heads=3, draws=20, seed=0)[1:]
    assert [(entry["heads"], entry["short"]) for entry in short] == [(((0, 2), (1, 1)), 1), (((0, 2), (1, 2)), 1)]


def test_identical_draws_are_computed_once_and_counted_once_per_draw():
    from probing.analyses.ablation.versus import set_label, sets_of_result, versus_report, versus_sets

    chosen = [(1, 2, "dep_to_head")]
    sets = versus_sets({"det@1": chosen}, num_layers=2, num_heads=12, draws=10, seed=0)  # 10 draws of 11 sets
    randoms = sets[1:]
    drawn = [matched_draw(chosen, 2, 12, seed=0, index=i).heads for i in range(10)]
    assert len(randoms) == len(set(drawn)) < 10                          # this seed repeats a set
    assert sorted(i for entry in randoms for i in entry["draws"]) == list(range(10))
    assert all(drawn[i] == entry["heads"] for entry in randoms for i in entry["draws"])
    twice = next(entry for entry in randoms if len(entry["draws"]) > 1)
    assert set_label(twice) == "det@1:random" + ",".join(map(str, twice["draws"]))
    # effects planted per distinct set: the report counts each once per draw that gave it
    effect_of = {entry["heads"]: -0.01 * n for n, entry in enumerate(randoms)}
    values = np.array([[0.8], [0.75]] + [[0.8 + effect_of[entry["heads"]]] for entry in randoms])
    report = versus_report(values, np.repeat(values[None], 3, axis=0), sets, part=0, higher_is_better=True)["det@1"]
    per_draw = [effect_of[heads] for heads in drawn]
    assert report["random"]["draws"] == 10 and report["random"]["distinct"] == len(randoms)
    assert report["random"]["mean"] == pytest.approx(np.mean(per_draw))
    assert report["p_value"] == pytest.approx(permutation_p(-0.05, per_draw, higher_is_better=True))
    # and a result's conditions give the same sets back
    result = {"model": {"num_layers": 2, "num_heads": 12},
              "conditions": [{"label": "none", "heads": []}]
              + [{"label": set_label(entry), "heads": [list(h) for h in entry["heads"]]} for entry in sets]}
    assert [(e["draws"], e["heads"], e["exact"]) for e in sets_of_result(result)] == \
        [(e["draws"], e["heads"], e["exact"]) for e in sets]


def test_versus_sets_stacked_give_the_numbers_of_separate_passes(monkeypatch):
    """The chosen and random sets as stacked conditions = one pass per condition (tiny Llama, LM loss)."""
    import torch
    from test_ablation import run_ablation

    import probing.analyses.ablation.accumulator as ablation
    from probing.analyses.ablation.conditions import INTACT, Condition
    from probing.analyses.ablation.versus import versus_sets
    from probing.data.inputs import InputSource
    from probing.testing import sample_path

    sets = versus_sets({"k2": [(0, 1, "dep_to_head"), (1, 0, "dep_to_head")]}, num_layers=2, num_heads=4,
                       draws=3, seed=0)
    conditions = [INTACT] + [Condition(f"set{i}", entry["heads"]) for i, entry in enumerate(sets)]
    source = lambda: InputSource.treebank(str(sample_path()), limit=6)  # noqa: E731
    from helpers import tiny_model
    stacked = run_ablation(tiny_model("llama"), "lm", conditions, source=source())
    monkeypatch.setattr(ablation, "CONDITION_CELLS", 1)
    monkeypatch.setattr(ablation, "SHARE_PREFIX", False)
    single = run_ablation(tiny_model("llama"), "lm", conditions, source=source())
    for name, tensor in stacked.state_tensors.items():
        if tensor.dtype.is_floating_point:
            torch.testing.assert_close(tensor, single.state_tensors[name], rtol=1e-5, atol=1e-6)
        else:
            assert torch.equal(tensor, single.state_tensors[name]), name


def test_ablate_chosen_against_random_from_the_command_line(tmp_path, capsys):
    from helpers import tiny_model

    from probing.cli import main

    model = tiny_model("llama")  # a decoder: its DEV result carries the causal block, which must validate
    dev, test = scored_dev(model, tmp_path)
    capsys.readouterr()
    common = ["ablate", "--model", model, "--treebank", test, "--limit", "12", "--metric", "lm", "--bootstrap", "10",
              "--k", "1", "2", "--random", "3", "--select-on", dev]
    assert main([*common, "--chosen", "det", "--output", str(tmp_path / "out.json")]) == 0
    table = capsys.readouterr().out
    assert "det@1" in table and "det@2" in table and "random mean" in table and "nats" in table
    assert main([*common, "--chosen", "nmod:poss:nope", "--output", str(tmp_path / "bad.json")]) == 2
    assert "--chosen" in capsys.readouterr().err and not (tmp_path / "bad.json").exists()
    assert main([*common[:-6], "--k", "99", "--random", "3", "--select-on", dev, "--chosen", "det",
                 "--output", str(tmp_path / "bad.json")]) == 2
    assert "--k" in capsys.readouterr().err


@pytest.fixture(scope="module")
def chosen_run(tmp_path_factory):
    """A --chosen run of the tiny Llama on the LM loss: its DEV result, its ablation result (with the block)."""
    from helpers import tiny_model

    from probing.cli import main

    folder = tmp_path_factory.mktemp("versus")
    model, output = tiny_model("llama"), folder / "ablate.json"
    dev, test = scored_dev(model, folder)
    assert main(["ablate", "--quiet", "--model", model, "--treebank", test, "--limit", "12", "--metric", "lm",
                 "--bootstrap", "20", "--k", "1", "3", "--random", "4", "--select-on", dev, "--chosen", "det", "nsubj",
                 "--output", str(output)]) == 0
    return model, dev, output


def test_ablate_chosen_writes_a_versus_block_the_conditions_give_again(chosen_run):
    from probing.analyses.ablation.scores import result_scores
    from probing.analyses.ablation.versus import result_versus, versus_block
    from probing.results.io import read_result

    result = read_result(chosen_run[2])
    block = result["versus"]
    assert list(block["parts"]) == ["loss"] and block["higher_is_better"] is False
    assert set(block["parts"]["loss"]) == {"det@1", "det@3", "nsubj@1", "nsubj@3"}
    without = {name: value for name, value in result.items() if name != "versus"}
    assert versus_block(without) == block == result_versus(result)
    values, _ = result_scores(result)
    labels = [condition["label"] for condition in result["conditions"]]
    row = block["parts"]["loss"]["det@3"]
    chosen = labels.index("det@3:chosen")
    assert row["chosen"]["effect"] == pytest.approx(values[chosen, 0] - values[0, 0])
    randoms = [(i, label.rpartition(":")[2]) for i, label in enumerate(labels) if label.startswith("det@3:")
               and not label.endswith(":chosen")]
    effects = [values[i, 0] - values[0, 0] for i, role in randoms for _ in role.split(",")]  # once per draw
    exact = all(role.startswith("exact") for _, role in randoms)
    assert row["exact"] is exact and row["random"]["draws"] == (row["space"] if exact else 4) == len(effects)
    assert row["random"]["mean"] == pytest.approx(np.mean(effects))
    assert row["p_value"] == pytest.approx(permutation_p(row["chosen"]["effect"], effects, higher_is_better=False))
    smaller = sum(len(role.split(",")) for i, role in randoms if len(result["conditions"][i]["heads"]) < 3)
    assert len(row["chosen"]["heads"]) == 3 and row["short_sets"] == smaller
    low, high = row["chosen"]["interval"]
    assert low <= row["chosen"]["effect"] <= high
    one = block["parts"]["loss"]["det@1"]  # k=1 on 4 heads a layer: 3 sets, fewer than the 4 draws asked
    assert one["exact"] is True and one["space"] == one["random"]["draws"] == 3
    assert any(one["p_value"] == pytest.approx(n / 4) for n in (1, 2, 3, 4))  # (1 + count) / (1 + 3)


@pytest.mark.parametrize("damage, where", [
    (lambda block: block["parts"]["loss"]["det@1"]["chosen"].update(heads=[[0, 0], [1, 1]]), "chosen.heads"),
    (lambda block: block["parts"]["loss"]["det@1"].update(p_value=1.5), "p_value"),
    (lambda block: block["parts"]["loss"]["det@3"]["random"].update(draws=7), "random.draws"),
    (lambda block: block["parts"].update(nope=block["parts"]["loss"]), "versus.parts.nope"),
])
def test_a_damaged_versus_block_is_refused_in_one_line(chosen_run, tmp_path, capsys, damage, where):
    import json

    from probing.cli import main

    result = json.loads(chosen_run[2].read_text())
    damage(result["versus"])
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(result))
    assert main(["leaderboard", str(broken)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and where in error and "broken.json" in error


@pytest.mark.parametrize("edit, where", [
    (lambda block: block["parts"]["loss"]["det@3"].update(p_value=0.0001), "versus.parts.loss.det@3.p_value"),
    (lambda block: block["parts"]["loss"]["nsubj@1"]["chosen"].update(effect=0.5),
     "versus.parts.loss.nsubj@1.chosen.effect"),
    (lambda block: block["parts"]["loss"]["det@1"]["random"]["percentiles"].__setitem__(1, 9.0),
     "versus.parts.loss.det@1.random.percentiles[1]"),
])
def test_a_board_refuses_a_versus_block_its_conditions_do_not_give(chosen_run, tmp_path, capsys, edit, where):
    """A hand-edited block (p = 0.0001, "significant") is what the schema accepts and the counts deny: the board
    derives the block again and refuses the file in one line naming it, the field and both values; the unedited
    file, and one whose numbers differ from the derived ones by rounding only (within versus.TIE), are shown."""
    import json

    from probing.analyses.ablation.versus import TIE
    from probing.cli import main

    result = json.loads(chosen_run[2].read_text())
    as_written = tmp_path / "as-written.json"
    as_written.write_text(json.dumps(result))
    rounded = json.loads(json.dumps(result))
    rounded["versus"]["parts"]["loss"]["det@3"]["chosen"]["effect"] += TIE / 10
    (tmp_path / "rounded.json").write_text(json.dumps(rounded))
    edit(result["versus"])
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(result))
    capsys.readouterr()
    assert main(["leaderboard", str(edited)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"edited.json: {where} is " in error and " in the file but " in error
    for accepted in (as_written, tmp_path / "rounded.json"):
        assert main(["leaderboard", str(accepted), "--output", str(tmp_path / "board.md")]) == 0
    assert main(["leaderboard", str(as_written), str(edited)]) == 2  # among others, still the one named
    assert "edited.json" in capsys.readouterr().err


def test_merging_parts_of_other_chosen_heads_or_other_draws_names_the_field_and_both_files(tmp_path, capsys):
    """Parts whose conditions differ (other chosen heads; other random draws) are refused in one short line that
    names both files and the first field that differs with both values, never the whole options block."""
    from helpers import tiny_model

    from probing.cli import main

    model = tiny_model("llama")
    dev, test = scored_dev(model, tmp_path)
    common = ["ablate", "--quiet", "--model", model, "--treebank", test, "--limit", "6", "--metric", "lm",
              "--bootstrap", "5", "--k", "1", "--select-on", dev]
    runs = {"first": ("det", "2", "0/2"), "heads": ("nsubj", "2", "1/2"), "draws": ("det", "1", "1/2")}
    for name, (relation, draws, shard) in runs.items():
        assert main([*common, "--chosen", relation, "--random", draws, "--shard", shard,
                     "--output", str(tmp_path / f"{name}.json")]) == 0
    # every part records its options (config.options), so the option itself is where two such parts differ first
    for other, field, values in (("heads", "config.options.chosen[0]", ("'det'", "'nsubj'")),
                                 ("draws", "config.options.random", ("2 in first.json", "1 in draws.json"))):
        capsys.readouterr()
        assert main(["merge", str(tmp_path / "first.json"), str(tmp_path / f"{other}.json"),
                     "--output", str(tmp_path / "merged.json")]) == 2
        error = capsys.readouterr().err.replace(f"{tmp_path}/", "")
        assert error.count("\n") == 1 and len(error) < 300, error
        assert f"{field} " in error and "first.json" in error and f"{other}.json" in error, error
        assert all(value in error for value in values), error
        assert not (tmp_path / "merged.json").exists()


@pytest.mark.parametrize("metric, where", [
    ("loss", "metric: expected an object, found 'loss'"),
    ({"name": "lm", "parts": "loss"}, "metric.parts: expected a list of a string"),
    ({"name": "lm", "parts": [["loss"]]}, "metric.parts[0]: expected a string"),
])
def test_a_metric_whose_parts_are_not_names_is_refused_in_one_line(chosen_run, tmp_path, capsys, metric, where):
    """The versus block's parts are named against the metric's: a damaged metric is a refusal, not a traceback."""
    import json

    from probing.cli import main

    result = json.loads(chosen_run[2].read_text())
    result["metric"] = metric
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(result))
    assert main(["leaderboard", str(broken)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"broken.json: {where}" in error


def test_a_result_that_is_no_chosen_run_has_no_versus_block():
    from probing.analyses.ablation.versus import sets_of_result

    with pytest.raises(ProbingError, match="not a set of a --chosen run"):
        sets_of_result({"conditions": [{"label": "none", "heads": []}, {"label": "1-1", "heads": [[0, 0]]}]})


def test_short_draws_are_counted_from_the_heads_of_a_result():
    from probing.analyses.ablation.versus import sets_of_result

    result = {"conditions": [{"label": "none", "heads": []},
                             {"label": "det@2:chosen", "heads": [[0, 0], [0, 1]]},
                             {"label": "det@2:random0", "heads": [[0, 2]]},
                             {"label": "det@2:random1", "heads": [[0, 2], [0, 3]]}]}
    assert [entry["short"] for entry in sets_of_result(result)] == [0, 1, 0]


def test_select_on_a_treebank_chooses_the_sets_a_score_file_of_it_chooses(tmp_path, capsys):
    """--select-on SPEC scores DEV in the same command: the same chosen and random sets, the same numbers."""
    import json

    from helpers import tiny_model

    from probing.cli import main
    from probing.testing import sample_split

    dev, test = sample_split()
    model = tiny_model("llama")
    scored = tmp_path / "dev.json"
    assert main(["score", "--quiet", "--model", model, "--treebank", dev, "--limit", "20", "--relations", "det",
                 "nsubj", "--bootstrap", "0", "--output", str(scored)]) == 0
    common = ["ablate", "--quiet", "--model", model, "--treebank", test, "--limit", "20", "--metric", "lm",
              "--bootstrap", "10", "--k", "1", "3", "--random", "3", "--chosen", "det", "nsubj"]
    results = {}
    for name, select_on in (("file", str(scored)), ("spec", dev)):
        output = tmp_path / f"{name}.json"
        cut = ["--select-limit", "20"] if name == "spec" else []  # the file was scored on DEV's first 20
        assert main([*common, "--select-on", select_on, *cut, "--output", str(output)]) == 0
        results[name] = json.loads(output.read_text(encoding="utf-8"))
    capsys.readouterr()
    conditions = {name: [(c["label"], c["heads"]) for c in result["conditions"]] for name, result in results.items()}
    draws = Counter()  # intact, then per relation and k: chosen + 3 draws (or the whole space when it is smaller)
    for label, _ in conditions["spec"][1:]:
        key, _, role = label.rpartition(":")
        draws[key] += 0 if role == "chosen" else len(role.split(","))
    block = results["spec"]["versus"]["parts"]["loss"]
    assert set(draws) == {"det@1", "det@3", "nsubj@1", "nsubj@3"}
    assert all(draws[key] == min(3, block[key]["space"]) == block[key]["random"]["draws"] for key in draws)
    assert conditions["spec"] == conditions["file"]
    assert results["spec"]["conditions"] == results["file"]["conditions"]
    assert results["spec"]["config"]["select_on"] == dev


def test_select_on_the_runs_own_units_is_refused_in_one_line(tmp_path, capsys):
    from helpers import tiny_model

    from probing.cli import main
    from probing.testing import sample_split

    _, test = sample_split()
    output = tmp_path / "out.json"
    assert main(["ablate", "--quiet", "--model", tiny_model("llama"), "--treebank", test, "--metric", "lm",
                 "--bootstrap", "10", "--chosen", "det", "--select-on", test, "--output", str(output)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "--select-on" in error and "same sentences" in error
    assert not output.exists()


def test_scores_only_keeps_every_number_and_refuses_a_merge(tmp_path, capsys):
    """--scores-only writes each condition's scores in place of the probe's per-head sums: same block, same table,
    a smaller file, which nothing rebuilds an accumulator from (a shard cannot be written so)."""
    import json

    from helpers import tiny_model

    from probing.cli import main
    from probing.results.io import read_result

    model = tiny_model("llama")
    dev, test = scored_dev(model, tmp_path)
    common = ["ablate", "--quiet", "--model", model, "--treebank", test, "--limit", "12", "--metric", "probe",
              "--relations", "det", "all", "--bootstrap", "30", "--k", "1", "2", "--random", "3", "--select-on", dev,
              "--chosen", "det"]
    full, slim = tmp_path / "full.json", tmp_path / "slim.json"
    assert main([*common, "--output", str(full)]) == 0
    assert main([*common, "--scores-only", "--output", str(slim)]) == 0
    capsys.readouterr()
    whole, scores = read_result(full), read_result(slim)
    assert scores["versus"] == whole["versus"] and scores["conditions"] == whole["conditions"]
    assert sorted(scores["state"]) == ["scores.replicates", "scores.values"]
    assert slim.stat().st_size < full.stat().st_size / 2
    from probing.analyses.ablation.scores import result_scores

    (values, replicates), (all_values, all_replicates) = result_scores(scores), result_scores(whole)
    np.testing.assert_array_equal(values, all_values)
    kept = [i for i, c in enumerate(scores["conditions"]) if i == 0 or c["label"].endswith(":chosen")]
    dropped = [i for i in range(len(scores["conditions"])) if i not in kept]
    assert len(kept) == 3 and dropped  # the intact model, det@1 and det@2 chosen; their random sets
    np.testing.assert_array_equal(replicates[:, kept], all_replicates[:, kept])  # the chosen effects' intervals
    assert np.isnan(replicates[:, dropped]).all()  # a random set's replicates feed no report
    assert main(["leaderboard", str(slim)]) == 0
    assert "det top 2" in capsys.readouterr().out
    from probing.analyses.ablation.accumulator import AblationAccumulator

    with pytest.raises(ProbingError, match="--scores-only"):  # what merge and resume would rebuild from
        AblationAccumulator.from_result(scores)
    assert main([*common, "--scores-only", "--shard", "1/2", "--output", str(tmp_path / "shard.json")]) == 2
    assert "--scores-only" in capsys.readouterr().err and not (tmp_path / "shard.json").exists()
    json.loads(slim.read_text())  # plain JSON still


def test_a_relation_rare_in_the_units_finishes_with_no_data_where_there_is_none(tmp_path, capsys):
    """On 5 sentences some bootstrap replicates draw no unit (and iobj has no pair at all): those intervals are
    undefined, which the run writes as no data (null), finishing with a written result, not a crash at the end."""
    from helpers import tiny_model

    from probing.analyses.ablation.scores import result_scores
    from probing.cli import main
    from probing.results.io import read_result

    model = tiny_model("llama")
    dev, test = scored_dev(model, tmp_path)
    common = ["ablate", "--quiet", "--model", model, "--treebank", test, "--limit", "5", "--bootstrap", "500",
              "--chosen", "det", "--k", "1", "2", "--random", "5", "--select-on", dev]
    for metric in (["lm"], ["probe", "--relations", "iobj", "det", "all"]):
        output = tmp_path / f"{metric[0]}.json"
        capsys.readouterr()
        assert main([*common, "--metric", *metric, "--output", str(output)]) == 0, capsys.readouterr().err
        printed = capsys.readouterr().out
        assert "nan" not in printed.lower()
        result = read_result(output)
        _, replicates = result_scores(result)
        assert np.isnan(replicates).any()  # replicates that drew none of the 5 sentences: undefined, left out
        for part, sets in result["versus"]["parts"].items():
            for entry in sets.values():
                if part == "iobj":
                    assert entry["chosen"] == {**entry["chosen"], "effect": None, "interval": None}
                    assert entry["p_value"] is None and entry["random"] is None
                else:
                    low, high = entry["chosen"]["interval"]
                    assert np.isfinite([low, high]).all() and low <= entry["chosen"]["effect"] <= high
        if metric[0] == "probe":
            assert "iobj" in printed and "no data [no data]" in printed


def test_a_result_probing_cannot_write_is_a_bug_not_a_refusal(tmp_path, capsys, monkeypatch):
    """A NaN reaching the writer is probing's own failure: exit 1 naming a bug log, never exit 2 (bad input)."""
    from helpers import tiny_model

    import probing.analyses.ablation.versus as versus
    from probing.cli import main

    model = tiny_model("llama")
    dev, test = scored_dev(model, tmp_path)
    real = versus.versus_block

    def with_a_nan(result):
        block = real(result)
        next(iter(block["parts"]["loss"].values()))["chosen"]["effect"] = float("nan")
        return block

    monkeypatch.setattr(versus, "versus_block", with_a_nan)
    capsys.readouterr()
    output = tmp_path / "out.json"
    assert main(["ablate", "--quiet", "--model", model, "--treebank", test, "--limit", "3", "--metric", "lm",
                 "--bootstrap", "5", "--chosen", "det", "--random", "1", "--select-on", dev,
                 "--output", str(output)]) == 1
    error = capsys.readouterr().err
    assert "internal error" in error and "bug" in error and not output.exists()


def test_a_chosen_set_of_every_head_has_one_empty_matched_set_and_finishes(tmp_path, capsys):
    """k = all 8 heads of the tiny Llama: no head is left in any layer, so the space holds one set, the empty
    one (short by 8), whose effect is exactly 0; the run finishes (it crashed finding that set's first layer)."""
    from helpers import tiny_model

    from probing.cli import main
    from probing.results.io import read_result

    model = tiny_model("llama")
    dev, test = scored_dev(model, tmp_path)
    output = tmp_path / "all.json"
    assert main(["ablate", "--quiet", "--model", model, "--treebank", test, "--limit", "4", "--metric", "lm",
                 "--bootstrap", "10", "--chosen", "det", "--k", "8", "--random", "5", "--select-on", dev,
                 "--output", str(output)]) == 0
    capsys.readouterr()
    row = read_result(output)["versus"]["parts"]["loss"]["det@8"]
    assert row["exact"] is True and row["space"] == 1 and row["short_sets"] == 1
    assert row["random"]["draws"] == row["random"]["distinct"] == 1  # nothing disabled: the intact model again
    assert row["random"]["mean"] == pytest.approx(0.0, abs=1e-6) and row["random"]["percentiles"] == [row["random"]["mean"]] * 2


def test_shards_of_a_chosen_run_merge_into_the_whole_runs_versus_block(tmp_path, capsys):
    """Each shard's versus block measures its own sentences; the merge recomputes the block from the merged
    conditions and state, so the effects and p-values are the unsharded run's, not the first shard's."""
    import json

    from helpers import tiny_model

    from probing.analyses.ablation.versus import versus_block
    from probing.cli import main

    model = tiny_model("llama")
    dev, test = scored_dev(model, tmp_path)
    common = ["ablate", "--quiet", "--model", model, "--treebank", test, "--limit", "12", "--metric", "lm",
              "--bootstrap", "30", "--k", "1", "2", "--random", "3", "--select-on", dev, "--chosen", "det"]
    paths = {name: tmp_path / f"{name}.json" for name in ("whole", "shard0", "shard1", "merged")}
    assert main([*common, "--output", str(paths["whole"])]) == 0
    for index in (0, 1):
        assert main([*common, "--shard", f"{index}/2", "--output", str(paths[f"shard{index}"])]) == 0
    assert main(["merge", str(paths["shard0"]), str(paths["shard1"]), "--output", str(paths["merged"])]) == 0
    capsys.readouterr()
    whole, first, merged = (json.loads(paths[name].read_text(encoding="utf-8"))["versus"]["parts"]["loss"]
                            for name in ("whole", "shard0", "merged"))
    assert merged != first
    assert merged == versus_block(json.loads(paths["merged"].read_text(encoding="utf-8")))["parts"]["loss"]
    for key, row in whole.items():
        assert merged[key]["chosen"]["effect"] == pytest.approx(row["chosen"]["effect"], abs=1e-9)
        assert merged[key]["random"]["mean"] == pytest.approx(row["random"]["mean"], abs=1e-9)
        assert merged[key]["p_value"] == row["p_value"] and merged[key]["exact"] == row["exact"]


@pytest.mark.parametrize("draws", [10, 20])
def test_ablate_match_band_draws_from_the_chosen_heads_bands_and_records_it(tmp_path, capsys, draws):
    """--match band end to end (tiny Llama, 2 layers x 4 heads): every random set of det@2 comes from the chosen
    heads' bands (here both layers) less the chosen heads; 10 draws are drawn, 20 exceed the C(6, 2) = 15 sets of
    the space, which is then used whole; the result records the matching and the board's row says it."""
    from helpers import tiny_model

    from probing.analyses.ablation.versus import band_pool, versus_disagreement
    from probing.cli import main
    from probing.report.board import leaderboard_from_files
    from probing.results.io import read_result

    model = tiny_model("llama")
    dev, test = scored_dev(model, tmp_path)
    output = tmp_path / "band.json"
    assert main(["ablate", "--quiet", "--model", model, "--treebank", test, "--limit", "8", "--metric", "lm",
                 "--bootstrap", "10", "--k", "2", "--random", str(draws), "--match", "band", "--select-on", dev,
                 "--chosen", "det", "--output", str(output)]) == 0
    result = read_result(output)
    entry = result["versus"]["parts"]["loss"]["det@2"]
    assert result["config"]["options"]["match"] == "band" and result["versus"]["match"] == "band"
    chosen = [tuple(head) for head in entry["chosen"]["heads"]]
    pool = set(band_pool(chosen, num_layers=2, num_heads=4))
    assert len(pool) == 6 and not pool & set(chosen) and entry["space"] == 15
    randoms = [condition for condition in result["conditions"] if condition["label"].startswith("det@2:")
               and not condition["label"].endswith(":chosen")]
    assert randoms and all({tuple(head) for head in condition["heads"]} <= pool and len(condition["heads"]) == 2
                           for condition in randoms)
    assert entry["exact"] is (draws >= 15) and entry["random"]["draws"] == min(draws, 15)
    if entry["exact"]:
        assert len({tuple(map(tuple, condition["heads"])) for condition in randoms}) == 15
    assert versus_disagreement(result) is None  # the block derives again from the file, matching and all
    (table,) = leaderboard_from_files([output]).tables
    head = table.rows[0].cells["lm loss: random"].head
    assert ("all 15 sets of the band-matched space" if entry["exact"] else f"{draws} draws, band-matched (space 15)") \
        == head


def test_match_without_chosen_is_refused_in_one_line(tmp_path, capsys):
    from helpers import tiny_model

    from probing.cli import main

    assert main(["ablate", "--quiet", "--model", tiny_model("llama"), "--limit", "2", "--metric", "lm", "--heads", "1-1",
                 "--match", "band"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and error.startswith("probing: --match: does nothing without --chosen") or \
        "--match: does nothing without --chosen" in error
    assert main(["ablate", "--quiet", "--model", tiny_model("llama"), "--limit", "2", "--metric", "lm", "--chosen",
                 "det", "--select-on", "x.json", "--match", "depth"]) == 2
    assert "--match" in capsys.readouterr().err
