"""Importance maps compared across pair sets (``probing importance --across``) on maps built here from planted
harms (no model): rho against scipy, p from permutations within layers (depth alone gives no small p), Holm over
the pairs, the heads most harmful in several sets, and the command's outputs and one-line refusals.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from probing.analyses.importance.across import across, language_of_set, most_harmful
from probing.cli import main
from probing.errors import ProbingError

DEVS = {"minilm": "leaderboards/versus/results/all-MiniLM-L6-v2-dev.json",
        "gemma": "leaderboards/versus/results/gemma-3-270m-dev.json"}
"""Committed DEV probe results: the maps below are of their models (6 x 12 and 18 x 4 heads)."""


@pytest.fixture(scope="module")
def devs() -> dict:
    from conftest import REPO

    from probing.results.io import read_result

    return {name: read_result(REPO / path, analysis="probe") for name, path in DEVS.items()}


def planted_map(dev: dict, pair_set: str, harm, seed: int = 0) -> dict:
    """An importance result of DEV's model on ``pair_set``, made from an ablate --each-head result whose accuracy
    drops by ``harm`` [layer, head] when each head is disabled (a minimal-pairs metric: higher is better)."""
    from probing.analyses.ablation.scores import scores_only_state
    from probing.analyses.importance.build import importance_result
    from probing.naming import head_name

    layers, heads = dev["model"]["num_layers"], dev["model"]["num_heads"]
    order = [(layer, head) for layer in range(layers) for head in range(heads)]
    values = np.concatenate([[0.8], 0.8 - np.asarray(harm, dtype=float).ravel()])[:, None]   # [condition, part]
    replicates = values[None] + 0.01 * np.random.default_rng(seed).standard_normal((20, 1, 1))  # paired shifts
    ablation = {
        "model": dev["model"], "created": "2026-12-08T00:00:00+00:00",
        "input": {"path": pair_set, "pair_set": pair_set, "sha256": "e" * 64, "kind": "minimal_pairs",
                  "units_total": 700, "units_used": 700, "skipped": {}},
        "config": {"metric": "minimal-pairs", "shard": None, "attention": "weights", "pooling": dev["config"]["pooling"],
                   "bootstrap": {"replicates": 20, "seed": 0}, "limit": 100},
        "conditions": [{"label": "none", "heads": []}] + [{"label": head_name(*head), "heads": [list(head)]}
                                                          for head in order],
        "state": scores_only_state(values, replicates),
        "metric": {"name": "minimal-pairs", "description": "minimal pairs", "higher_is_better": True,
                   "parts": ["overall"]},
    }
    sources = {"ablation": {"path": f"{pair_set}.json", "sha256": "a" * 64}, "dev": {"path": "dev.json",
                                                                                        "sha256": "d" * 64}}
    return importance_result(ablation, dev, sources=sources, relations=["nsubj"], permutations=10)


def _harms(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random(shape) * 0.02


def test_rho_is_scipys_symmetric_and_holm_adjusted(devs):
    dev = devs["minilm"]
    base = _harms((6, 12), 1)
    similar = base + 0.002 * np.random.default_rng(2).random((6, 12))   # the same heads matter
    other = _harms((6, 12), 3)                                            # other heads matter
    maps = [("a.json", planted_map(dev, "clams-de", base)), ("b.json", planted_map(dev, "de_pud:odd:agreement", similar)),
            ("c.json", planted_map(dev, "clams-fr", other))]
    found = across(maps, permutations=999, seed=0)
    matrix = found["matrix"]
    assert found["part"] == "overall" and found["heads"] == 72
    for first, a in (("clams-de", base), ("de_pud:odd:agreement", similar)):
        for second, b in (("clams-fr", other), ("de_pud:odd:agreement", similar)):
            if first != second:
                expected = scipy.stats.spearmanr(a.ravel(), b.ravel()).statistic
                assert matrix[first][second]["rho"] == pytest.approx(expected, abs=1e-9)
                assert matrix[first][second] == matrix[second][first]
    assert matrix["clams-de"]["clams-de"] is None
    assert matrix["clams-de"]["de_pud:odd:agreement"]["p_value"] == pytest.approx(1 / 1000)  # no permutation reaches it
    assert matrix["clams-de"]["clams-fr"]["p_value"] > 0.01
    tested = [matrix[a][b] for a, b in (("clams-de", "de_pud:odd:agreement"), ("clams-de", "clams-fr"),
                                        ("de_pud:odd:agreement", "clams-fr"))]
    assert min(cell["p_adjusted"] for cell in tested) == pytest.approx(3 / 1000)  # Holm: m = 3 on the least
    assert all(cell["p_adjusted"] >= cell["p_value"] for cell in tested)
    means = found["mean_rho"]   # clams-de and de_pud are one language: their rho is the within-language one
    assert means["within_language"] == pytest.approx(matrix["clams-de"]["de_pud:odd:agreement"]["rho"])
    assert means["pairs_across"] == 2 and means["pairs_within"] == 1


def test_depth_alone_gives_no_small_p(devs):
    """Two maps that both cost more in the lower layers, their heads inside each layer unrelated: rho is large,
    and the within-layer permutations keep it large, so p is not small."""
    dev = devs["minilm"]
    depth = np.linspace(0.05, 0.0, 6)[:, None]
    first = depth + _harms((6, 12), 4) * 0.2
    second = depth + _harms((6, 12), 5) * 0.2
    found = across([("a.json", planted_map(dev, "clams-de", first)), ("b.json", planted_map(dev, "clams-fr", second))],
                   permutations=999)
    cell = found["matrix"]["clams-de"]["clams-fr"]
    assert cell["rho"] > 0.7 and cell["p_value"] > 0.05


def test_the_heads_most_harmful_in_several_sets_are_counted(devs):
    dev = devs["gemma"]
    maps = []
    for number, pair_set in enumerate(("clams-ru", "rublimp", "clams-de")):
        harm = _harms((18, 4), 10 + number)
        harm[2, 3] = 0.5                       # planted: the most harmful head everywhere
        if pair_set != "clams-de":
            harm[7, 0] = 0.4                   # planted: the second, in Russian only
        maps.append((f"{pair_set}.json", planted_map(dev, pair_set, harm)))
    found = across(maps, most=2, permutations=99)
    assert found["shared"][0] == {"layer": 2, "head": 3, "sets": ["clams-ru", "rublimp", "clams-de"],
                                  "languages": ["de", "ru"]}
    assert found["shared"][1]["layer"] == 7 and found["shared"][1]["languages"] == ["ru"]
    assert [(entry["layer"], entry["head"]) for entry in found["top"]["clams-ru"]] == [(2, 3), (7, 0)]


def test_a_map_whose_harms_are_all_equal_has_no_rho_and_tests_nothing(devs):
    dev = devs["minilm"]
    maps = [("a.json", planted_map(dev, "clams-de", _harms((6, 12), 1))),
            ("b.json", planted_map(dev, "clams-fr", np.zeros((6, 12)))),
            ("c.json", planted_map(dev, "clams-ru", _harms((6, 12), 2)))]
    found = across(maps, permutations=99)
    flat = found["matrix"]["clams-de"]["clams-fr"]
    assert flat == {"rho": None, "p_value": None, "p_adjusted": None} and found["top"]["clams-fr"] == []
    tested = found["matrix"]["clams-de"]["clams-ru"]
    assert tested["p_adjusted"] == pytest.approx(tested["p_value"])  # Holm's m counts the one pair with a p


def test_most_harmful_takes_ties_at_the_last_place_and_no_harmless_head():
    assert most_harmful(np.array([[0.3, 0.2], [0.2, 0.0]]), 2) == [(0, 0), (0, 1), (1, 0)]
    assert most_harmful(np.array([[0.0, -0.1], [0.0, 0.0]]), 2) == []


def test_a_sets_language():
    assert [language_of_set({"input": {"pair_set": name, "path": name}}) for name in
            ("clams-de", "rublimp", "ru_pud:odd:agreement", "fi_tdt:test:agreement", "en_ewt:test:agreement")] == \
        ["de", "ru", "ru", "fi", "en"]


def test_maps_that_cannot_be_compared_are_refused(devs):
    minilm = planted_map(devs["minilm"], "clams-de", _harms((6, 12), 0))
    with pytest.raises(ProbingError, match="two maps or more"):
        across([("a.json", minilm)])
    gemma = planted_map(devs["gemma"], "clams-fr", _harms((18, 4), 0))
    with pytest.raises(ProbingError, match="^b.json: is not a map of a.json's model"):
        across([("a.json", minilm), ("b.json", gemma)])
    with pytest.raises(ProbingError, match="head shape differs: 18 x 4 against 6 x 12"):   # one fingerprint, other heads
        across([("a.json", {**minilm, "model": {**minilm["model"], "fingerprint": gemma["model"]["fingerprint"]}}),
                ("b.json", gemma)])
    with pytest.raises(ProbingError, match="its weights differ"):   # one shape, other weights
        across([("a.json", minilm), ("b.json", {**minilm, "model": {**minilm["model"], "fingerprint": "sha256:0"}})])
    with pytest.raises(ProbingError, match="^b.json: measures clams-de, as a.json does"):
        across([("a.json", minilm), ("b.json", minilm)])
    with pytest.raises(ProbingError, match="^--part: .*no part 'loss'|^a.json: has no part 'loss'"):
        across([("a.json", minilm), ("b.json", planted_map(devs["minilm"], "clams-fr", _harms((6, 12), 1)))],
               part="loss")


def _write(folder: Path, name: str, result: dict) -> str:
    path = folder / name
    path.write_text(json.dumps(result), encoding="utf-8")
    return str(path)


def test_the_command_writes_tables_numbers_and_figure_and_refuses_in_one_line(devs, tmp_path, capsys):
    dev = devs["gemma"]
    paths = [_write(tmp_path, f"{name}.json", planted_map(dev, name, _harms((18, 4), seed)))
             for seed, name in enumerate(("clams-de", "clams-fr", "ru_pud:odd:agreement"))]
    page, numbers, figure = tmp_path / "across.md", tmp_path / "across.json", tmp_path / "across.png"
    assert main(["importance", "--across", *paths, "--permutations", "99", "--output", str(page),
                 "--figure", str(figure)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "Harm across pair sets" in text and "| clams-de (de) | - |" in text and "72 heads" in text
    assert figure.read_bytes().startswith(b"\x89PNG")
    assert main(["importance", "--across", *paths, "--permutations", "99", "--output", str(numbers)]) == 0
    written = json.loads(numbers.read_text(encoding="utf-8"))
    assert [entry["label"] for entry in written["sets"]] == ["clams-de", "clams-fr", "ru_pud:odd:agreement"]
    assert main(["importance", "--across", *paths, "--permutations", "99", "--output", str(page)]) == 0  # replaced
    capsys.readouterr()

    other = planted_map(devs["minilm"], "clams-ru", _harms((6, 12), 7))
    wrong = _write(tmp_path, "other.json", other)
    for argv, fragment in (([*paths[:2], wrong], f"{wrong}: is not a map of"),
                           ([paths[0]], "two maps or more"),
                           ([*paths, "--select-on", paths[0]], "--select-on"),
                           ([*paths, "--output", str(tmp_path / "x.txt")], "--output"),
                           ([*paths, "--output", paths[0]], paths[0]),
                           (["m" * 300 + ".json", paths[0]], "--across: a name in the path is 305 bytes long")):
        before = sorted(tmp_path.iterdir())
        assert main(["importance", "--across", *argv]) == 2
        captured = capsys.readouterr()
        assert captured.err.count("\n") == 1 and "Traceback" not in captured.err and fragment in captured.err, \
            captured.err
        assert sorted(tmp_path.iterdir()) == before
    assert main(["importance", paths[0]]) == 2 and "--select-on" in capsys.readouterr().err
    assert main(["importance", paths[0], "--select-on", paths[1], "--most-harmful", "3"]) == 2
    assert "--most-harmful: is an option of --across only" in capsys.readouterr().err
    assert main(["importance", "--across", *paths, "--most-harmful", "1", "--permutations", "9",
                 "--output", str(numbers)]) == 0
    assert json.loads(numbers.read_text(encoding="utf-8"))["most_harmful"] == 1
