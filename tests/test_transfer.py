"""Heads across languages on planted counts: the transfer matrix, its diagonal, none cells, and its refusals."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from probing.analyses.probe.atlas import atlas_markdown, shared_head, transfer_loss
from probing.cli import main
from probing.errors import ProbingError
from probing.stats.transfer import language_of, transfer
from probing.testing import planted_language_result


def three_languages() -> list[dict]:
    """de and fr choose head 0-1 (dep_to_head), zh chooses 1-0; each report half has 10 pairs."""
    return [
        planted_language_result("de_pud", chosen=(0, 1, "dep_to_head"), correct={(0, 1): 7, (1, 0): 2}, total=10,
                                offsets_correct=(0, 0, 1, 4, 0, 0)),
        planted_language_result("fr_pud", chosen=(0, 1, "dep_to_head"), correct={(0, 1): 6, (1, 0): 1}, total=10,
                                offsets_correct=(0, 0, 5, 2, 0, 0)),
        planted_language_result("zh_pud", chosen=(1, 0, "dep_to_head"), correct={(0, 1): 3, (1, 0): 8}, total=10,
                                offsets_correct=(0, 0, 0, 0, 6, 0)),
    ]


def test_the_matrix_scores_each_chosen_head_on_every_report_half():
    atlas = transfer(three_languages())
    entry = atlas["relations"]["dobj"]
    languages = atlas["languages"]
    assert languages == ["de_pud", "fr_pud", "zh_pud"]
    accuracy = [[entry["matrix"][a][b]["accuracy"] for b in languages] for a in languages]
    assert accuracy == [[0.7, 0.6, 0.3], [0.7, 0.6, 0.3], [0.2, 0.1, 0.8]]
    # the diagonal is each language's own held-out figure
    for language in languages:
        assert entry["matrix"][language][language]["accuracy"] == entry["own"][language]["head"]["accuracy"]
    # each column's own best offset is the one its choice half chose (word order moves it)
    assert {b: entry["own"][b]["offset"]["offset"] for b in languages} == {"de_pud": 1, "fr_pud": -1, "zh_pud": 2}
    assert entry["pairs"] == {"de_pud": 10, "fr_pud": 10, "zh_pud": 10}


def test_loss_and_shared_head_from_the_matrix():
    atlas = transfer(three_languages())
    # own - transferred over ordered pairs: de<-fr 0, de<-zh 50, fr<-de 0, fr<-zh 50, zh<-de 50, zh<-fr 50
    assert transfer_loss(atlas, "dobj") == pytest.approx(200 / 6)
    assert shared_head(atlas, "dobj") == ("1-2", 2, 3)
    page = atlas_markdown(atlas, "planted")
    assert "| de_pud: 1-2 | **70.0** | 60.0 | 30.0 |" in page and "| zh_pud: 2-1 | 20.0 | 10.0 | **80.0** |" in page


def test_a_language_without_pairs_is_none_everywhere():
    results = three_languages()
    zh = results[2]
    zh["relations"]["dobj"]["total"] = 0
    zh["relations"]["dobj"]["heads"] = {d: [[0, 0], [0, 0]] for d in ("dep_to_head", "head_to_dep")}
    zh["heldout"]["relations"]["dobj"].update(
        {"pairs": 0, "dev": {"pairs": 0, "head": None, "baseline": None},
         "heldout": {"head": None, "baseline": None, "difference": None}})
    atlas = transfer(results)
    entry = atlas["relations"]["dobj"]
    assert entry["chosen"]["zh_pud"] is None
    assert entry["matrix"]["zh_pud"]["de_pud"] is None and entry["matrix"]["de_pud"]["zh_pud"] is None
    assert transfer_loss(atlas, "dobj") == 0.0  # only de<->fr are left, and both chose head 1-2
    assert "| zh_pud: none | none | none | none |" in atlas_markdown(atlas, "planted")


def test_results_that_cannot_be_compared_are_refused():
    results = three_languages()
    other = copy.deepcopy(results)
    other[1]["model"]["fingerprint"] = "another"
    with pytest.raises(ProbingError, match="not of one model"):
        transfer(other)
    twice = three_languages() + [planted_language_result("de_pud", chosen=(0, 0, "dep_to_head"), correct={}, total=1)]
    with pytest.raises(ProbingError, match="two results report on de_pud"):
        transfer(twice)
    in_sample = copy.deepcopy(results)
    del in_sample[0]["heldout"]
    with pytest.raises(ProbingError, match="not a held-out probe result"):
        transfer(in_sample)


def test_language_names_from_result_paths():
    assert language_of({"treebank": {"path": "ko_pud:odd"}}) == "ko_pud"
    assert language_of({"treebank": {"path": "data/xx_toy-ud-test.conllu"}}) == "xx_toy"


def test_the_command_writes_tables_numbers_and_the_figure(tmp_path, capsys, monkeypatch):
    results = three_languages()
    paths = []
    for result in results:
        path = tmp_path / f"{language_of(result)}.json"
        path.write_text(json.dumps(result))
        paths.append(str(path))
    # planted results hold only what the matrix reads; the schema's full validation is not what is tested here
    monkeypatch.setattr("probing.results.io.read_result", lambda path, analysis=None: json.loads(Path(path).read_text()))
    assert main(["transfer", *paths, "--output", str(tmp_path / "t.md"), "--figure", str(tmp_path / "t.png"),
                 "--title", "planted"]) == 0
    assert "# planted" in (tmp_path / "t.md").read_text() and (tmp_path / "t.png").stat().st_size > 0
    assert main(["transfer", *paths, "--output", str(tmp_path / "t.json")]) == 0
    assert json.loads((tmp_path / "t.json").read_text())["languages"] == ["de_pud", "fr_pud", "zh_pud"]
    assert main(["transfer", *paths, "--output", str(tmp_path / "t.txt")]) == 2
    assert "writes .md (tables) or .json (numbers)" in capsys.readouterr().err
