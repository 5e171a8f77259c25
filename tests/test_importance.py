"""``probing importance`` end to end on the packaged all-MiniLM-L6-v2 and the packaged sample treebank: DEV is its
first 40 sentences (``probing score``), the map an ``ablate --each-head --scores-only`` run on the next 20. The
map is checked against the ablation's own conditions, rho against scipy, the chosen head against DEV's own best,
the ranks against a recount, and the command, ``probing plot``, ``probing leaderboard`` and ``probing merge``
against what a user sees (one-line refusals, exit 2, nothing written).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from probing.cli import main
from probing.testing import sample_split, tiny_bert

pytestmark = pytest.mark.slow  # the each-head ablation: 73 conditions over 20 sentences, about 20 s


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("importance")
    dev, test = sample_split(40, 20, folder=folder)
    files = {name: folder / f"{name}.json" for name in ("dev", "ablation", "importance")}
    assert main(["score", "--treebank", dev, "--relations", "det", "nsubj", "all", "--bootstrap", "0", "--quiet",
                 "--output", str(files["dev"])]) == 0
    assert main(["ablate", "--treebank", test, "--metric", "probe", "--relations", "det", "nsubj", "all",
                 "--each-head", "--scores-only", "--bootstrap", "50", "--quiet",
                 "--output", str(files["ablation"])]) == 0
    assert main(["importance", str(files["ablation"]), "--select-on", str(files["dev"]), "--permutations", "500",
                 "--output", str(files["importance"]), "--figure", str(folder / "importance.png")]) == 0
    return files


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_map_is_each_conditions_change_at_its_head(runs):
    ablation, result = _read(runs["ablation"]), _read(runs["importance"])
    for part in ablation["metric"]["parts"]:
        for condition in ablation["conditions"][1:]:
            (layer, head), entry = condition["heads"][0], condition["parts"][part]
            assert result["map"][part]["effect"][layer][head] == pytest.approx(entry["change"], abs=1e-12)
            assert result["map"][part]["harm"][layer][head] == pytest.approx(-entry["change"], abs=1e-12)
            low, high = result["map"][part]["low"][layer][head], result["map"][part]["high"][layer][head]
            assert [low, high] == pytest.approx(entry["interval"], abs=1e-12)


def test_rho_is_scipys_and_the_chosen_head_is_devs_best(runs):
    dev, result = _read(runs["dev"]), _read(runs["importance"])
    for relation in ("det", "nsubj", "all"):
        accuracy = np.array(result["accuracy"][relation]["accuracy"]).ravel()
        best = dev["relations"][relation]["best"]
        assert max(accuracy) == pytest.approx(best["accuracy"])
        head = result["chosen"][relation]["head"]
        assert (head["layer"], head["head"], head["direction"]) == (best["layer"], best["head"], best["direction"])
        for part, test in result["syntax"][relation].items():
            harm = np.array(result["map"][part]["harm"]).ravel()
            expected = scipy.stats.spearmanr(accuracy, harm).statistic
            assert test["rho"] == pytest.approx(expected, abs=1e-9)
            assert test["interval"][0] <= test["interval"][1] and 1 / 501 <= test["p_value"] <= 1


def test_the_ranks_are_a_recount_of_the_map(runs):
    result = _read(runs["importance"])
    for chosen in result["chosen"].values():
        layer, head = chosen["head"]["layer"], chosen["head"]["head"]
        for part, ranked in chosen["parts"].items():
            harm = np.array(result["map"][part]["harm"])
            mine = harm[layer, head]
            for name, rows in (("band", range(max(0, layer - 1), min(6, layer + 2))), ("model", range(6))):
                others = np.delete(harm[list(rows)].ravel(), (layer - rows.start) * 12 + head)
                assert ranked[name]["heads"] == others.size + 1
                assert ranked[name]["rank"] == 1 + np.sum(others > mine + 1e-9)
                assert ranked[name]["p_value"] == pytest.approx((1 + np.sum(others >= mine - 1e-9)) / (others.size + 1))


def test_plot_leaderboard_and_the_api_read_it(runs, tmp_path, capsys):
    import probing

    figure = tmp_path / "map.png"
    assert main(["plot", str(runs["importance"]), "--relation", "nsubj", "--part", "nsubj", "all",
                 "--output", str(figure)]) == 0
    assert figure.read_bytes().startswith(b"\x89PNG") and (runs["importance"].parent / "importance.png").is_file()
    capsys.readouterr()
    assert main(["leaderboard", str(runs["importance"])]) == 0
    board = capsys.readouterr().out
    assert "# Syntax against harm" in board and "all-MiniLM-L6-v2, nsubj" in board and "m = 3 tests" in board
    read = probing.read(runs["importance"])
    assert read.analysis == "importance" and read.grid("map.det.harm").shape == (6, 12)
    run = probing.run("importance", ablation=str(runs["ablation"]), select_on=str(runs["dev"]), permutations=500)
    assert run.data["syntax"] == read.data["syntax"]  # seeded: the same permutations, the same p


def _refused(argv: list[str], capsys, *fragments: str) -> None:
    capsys.readouterr()  # what the runs before said
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err, captured.err
    for fragment in fragments:
        assert fragment in captured.err, captured.err


def test_a_wrong_input_is_one_line_and_writes_nothing(runs, tmp_path, capsys):
    output = tmp_path / "out.json"
    ablation, dev = str(runs["ablation"]), str(runs["dev"])
    _refused(["importance", dev, "--select-on", dev, "--output", str(output)], capsys, dev, "not of 'ablation'")
    _refused(["importance", ablation, "--select-on", ablation, "--output", str(output)], capsys, "not of 'probe'")
    _refused(["importance", ablation, "--select-on", dev, "--relations", "nmod", "--output", str(output)], capsys,
             "--relations", "'nmod'")
    _refused(["importance", ablation, "--select-on", dev, "--figure", str(tmp_path / "map.txt")], capsys, "--figure")
    _refused(["merge", str(runs["importance"]), "--output", str(output)], capsys, "no shards to merge")
    treebank = sample_split(40, 20, folder=tmp_path)[1]  # the ablation's own units, scored as DEV
    same = tmp_path / "same.json"
    assert main(["score", "--treebank", treebank, "--relations", "det", "--bootstrap", "0", "--quiet",
                 "--output", str(same)]) == 0
    _refused(["importance", ablation, "--select-on", str(same), "--output", str(output)], capsys,
             "holds the very sentences")
    other = tmp_path / "other.json"  # another model's DEV
    assert main(["score", "--model", tiny_bert(), "--treebank", sample_split(40, 20, folder=tmp_path)[0],
                 "--relations", "det", "--bootstrap", "0", "--quiet", "--output", str(other)]) == 0
    _refused(["importance", ablation, "--select-on", str(other), "--output", str(output)], capsys,
             "not of the same model")
    heads = tmp_path / "heads.json"  # an ablation of two heads, not of each head alone
    assert main(["ablate", "--model", tiny_bert(), "--treebank", treebank, "--limit", "3", "--metric", "probe",
                 "--heads", "1-1", "--heads", "2-2", "--bootstrap", "5", "--quiet", "--output", str(heads)]) == 0
    _refused(["importance", str(heads), "--select-on", str(other)], capsys, "not a result of ablate --each-head")
    assert not output.exists() and not (tmp_path / "map.txt").exists()


def test_no_output_replaces_what_the_user_had(runs, tmp_path, capsys):
    """Every output goes through check_output_path: an input of the run, a treebank or another analysis's result is
    refused byte for byte; an earlier importance result (or figure) is replaced."""
    ablation, dev = str(runs["ablation"]), str(runs["dev"])
    treebank = Path(sample_split(40, 20, folder=tmp_path)[0])
    for target in (runs["ablation"], runs["dev"], treebank):
        before = target.read_bytes()
        for option in ("--output", "--figure"):
            _refused(["importance", ablation, "--select-on", dev, option, str(target)], capsys, option, str(target))
            assert target.read_bytes() == before
    earlier = tmp_path / "earlier.json"
    earlier.write_bytes(runs["importance"].read_bytes())
    assert main(["importance", ablation, "--select-on", dev, "--permutations", "20", "--output", str(earlier)]) == 0
    assert _read(earlier)["permutations"]["count"] == 20


def test_the_api_gives_the_commands_result(runs):
    """``probing.run("importance", ...)`` is the command's library function: the same result, the same record of
    its options (when and how fast aside)."""
    import probing

    varying = ("timing", "created", "environment")
    by_api = probing.run("importance", ablation=str(runs["ablation"]), select_on=str(runs["dev"]),
                         permutations=500).data
    by_command = _read(runs["importance"])
    assert {key: value for key, value in by_api.items() if key not in varying} == \
        {key: value for key, value in by_command.items() if key not in varying}
