"""Chosen heads against matched random heads: the draws, the chosen set, the permutation p-value."""

from collections import Counter

import numpy as np
import pytest

from probing.analyses.ablation.versus import chosen_set, matched_draw, permutation_p, random_summary
from probing.errors import ProbingError

CHOSEN = [(0, 1, "dep_to_head"), (0, 3, "dep_to_head"), (2, 0, "head_to_dep")]


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
    sets = versus_sets({"det@1": CHOSEN[:1]}, num_layers=4, num_heads=8, draws=9, seed=3)
    assert [entry["role"] for entry in sets] == ["chosen"] + ["random"] * 9
    values = np.array([[0.8]] + [[0.2]] + [[0.79]] * 9)                  # the chosen set alone hurts
    replicates = np.repeat(values[None], 5, axis=0)
    report = versus_report(values, replicates, sets, part=0, higher_is_better=True)["det@1"]
    assert report["chosen"]["effect"] == pytest.approx(-0.6) and report["p_value"] == pytest.approx(1 / 10)
    assert report["random"]["mean"] == pytest.approx(-0.01)


def test_versus_sets_stacked_give_the_numbers_of_separate_passes(monkeypatch):
    """The chosen and random sets as stacked conditions = one pass per condition (tiny Llama, LM loss)."""
    import torch
    from test_ablation import run_ablation

    import probing.analyses.ablation.accumulator as ablation
    from probing.analyses.ablation.versus import versus_sets
    from probing.data.inputs import InputSource
    from probing.testing import sample_path

    sets = versus_sets({"k2": [(0, 1, "dep_to_head"), (1, 0, "dep_to_head")]}, num_layers=2, num_heads=4,
                       draws=3, seed=0)
    conditions = [ablation.INTACT] + [ablation.Condition(f"set{i}", entry["heads"]) for i, entry in enumerate(sets)]
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

    dev = tmp_path / "dev.json"
    model = tiny_model("llama")  # a decoder: its DEV result carries the causal block, which must validate
    assert main(["score", "--quiet", "--model", model, "--limit", "12", "--relations", "det", "nsubj",
                 "--bootstrap", "0", "--output", str(dev)]) == 0
    capsys.readouterr()
    common = ["ablate", "--model", model, "--limit", "12", "--metric", "lm", "--bootstrap", "10", "--k", "1", "2",
              "--random", "3", "--select-on", str(dev)]
    assert main([*common, "--chosen", "det", "--output", str(tmp_path / "out.json")]) == 0
    table = capsys.readouterr().out
    assert "det@1" in table and "det@2" in table and "random mean" in table
    assert main([*common, "--chosen", "nmod:poss:nope", "--output", str(tmp_path / "bad.json")]) == 2
    assert "--chosen" in capsys.readouterr().err and not (tmp_path / "bad.json").exists()
    assert main([*common[:-6], "--k", "99", "--random", "3", "--select-on", str(dev), "--chosen", "det",
                 "--output", str(tmp_path / "bad.json")]) == 2
    assert "--k" in capsys.readouterr().err


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
        assert main([*common, "--select-on", select_on, "--output", str(output)]) == 0
        results[name] = json.loads(output.read_text(encoding="utf-8"))
    capsys.readouterr()
    conditions = {name: [(c["label"], c["heads"]) for c in result["conditions"]] for name, result in results.items()}
    assert len(conditions["spec"]) == 1 + 2 * 2 * (1 + 3)  # intact, then per relation and k: chosen + 3 draws
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
