"""`probing explore`: one pass gives the probe of `probing score`, the no-op result and the views; the page,
the view files and the result files; --result reuses a probe; shards of the no-op result merge."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from probing.cli import main
from probing.results.io import read_result
from probing.testing import sample_path, tiny_bert

COMMON = ("--quiet", "--treebank", str(sample_path()), "--limit", "24", "--batch-size", "4", "--bootstrap", "20",
          "--relations", "det", "dobj", "all")


def explore(tmp_path, name: str, *extra: str) -> int:
    return main(["explore", "--model", tiny_bert(), *COMMON, "--output", str(tmp_path / f"{name}.html"), *extra])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("explore")
    assert explore(folder, "page", "--save-results", str(folder / "results"), "--views", str(folder / "views"),
                   "--sentences", "4") == 0
    return folder


def page_data(path) -> dict:
    text = path.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', text, re.DOTALL)
    return json.loads(found.group(1))


def test_the_pass_gives_the_same_probe_as_probing_score(run, tmp_path):
    score = tmp_path / "score.json"
    assert main(["score", "--model", tiny_bert(), *COMMON, "--output", str(score)]) == 0
    mine, theirs = read_result(run / "results" / "probe.json"), read_result(score)
    assert mine["relations"] == theirs["relations"]
    assert mine["bootstrap"] == theirs["bootstrap"] and mine["state"] == theirs["state"]


def test_the_noop_result_reports_each_relations_chosen_head(run):
    probe = read_result(run / "results" / "probe.json")
    noop = read_result(run / "results" / "noop.json", analysis="noop")
    for name, entry in noop["noop"]["relations"].items():
        best = probe["relations"][name]["best"]
        assert (entry["chosen"]["layer"], entry["chosen"]["head"]) == (best["layer"], best["head"])
        assert entry["words"]["dependents"] == probe["relations"][name]["total"]  # one dependent per pair here
    assert noop["noop"]["words"] == probe["treebank"]["words_scored"]


def test_the_page_holds_its_data_and_every_head_has_views(run):
    data = page_data(run / "page.html")
    assert data["relations"] == ["det", "dobj", "all"] and len(data["sentences"]) == 4
    assert len(data["views"]) == data["layers"] * data["heads"]
    words = [len(sentence["words"]) for sentence in data["sentences"]]
    for values in data["views"].values():
        assert [len(per_sentence[0]) for per_sentence in values] == words
    noop = read_result(run / "results" / "noop.json")
    shown = data["noop"]["det"]["non_dependents"]["special"]
    assert shown == noop["noop"]["relations"]["det"]["heads"]["non_dependents"]["special"]


def test_view_files_are_svg_and_png_for_each_chosen_head(run):
    noop = read_result(run / "results" / "noop.json")
    for name, entry in noop["noop"]["relations"].items():
        stem = f"{name}-{entry['chosen']['layer'] + 1}-{entry['chosen']['head'] + 1}"
        svg = ElementTree.parse(run / "views" / f"{stem}.svg").getroot()
        assert svg.tag.endswith("svg")
        assert (run / "views" / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_result_reuses_a_probe_and_gives_the_same_noop_numbers(run, tmp_path):
    probe = run / "results" / "probe.json"
    assert explore(tmp_path, "again", "--result", str(probe), "--save-results", str(tmp_path / "results")) == 0
    assert not (tmp_path / "results" / "probe.json").exists()
    first = read_result(run / "results" / "noop.json")["noop"]
    second = read_result(tmp_path / "results" / "noop.json")["noop"]
    assert second["relations"] == first["relations"]


def test_a_result_of_another_treebank_is_one_line(run, tmp_path, capsys, write_conllu):
    other = write_conllu("1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n\n")
    code = main(["explore", "--model", tiny_bert(), "--quiet", "--treebank", str(other), "--result",
                 str(run / "results" / "probe.json"), "--output", str(tmp_path / "x.html")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--result" in err and "another treebank" in err
    assert not (tmp_path / "x.html").exists()


def test_noop_shards_merge_into_the_whole_run(run, tmp_path, capsys):
    parts = []
    for index in range(2):
        folder = tmp_path / f"part{index}"
        assert explore(tmp_path, f"part{index}", "--shard", f"{index}/2", "--save-results", str(folder)) == 0
        parts.append(str(folder / "noop.json"))
    assert main(["merge", *parts, "--output", str(tmp_path / "merged.json")]) == 0
    merged = read_result(tmp_path / "merged.json")["noop"]
    whole = read_result(run / "results" / "noop.json")["noop"]
    assert merged["words"] == whole["words"] and merged["sentences"] == whole["sentences"] == 24
    for name, entry in whole["relations"].items():
        for group in ("dependents", "non_dependents", "heads", "non_heads"):
            assert np.asarray(merged["relations"][name]["heads"][group]["special"]) == pytest.approx(
                np.asarray(entry["heads"][group]["special"]), abs=2e-6)
    assert main(["leaderboard", str(run / "results" / "noop.json")]) == 0
    assert "no-op test" in capsys.readouterr().out


def test_surface_statistics_and_other_results_join_the_page(run, tmp_path):
    surface = tmp_path / "surface.json"
    assert main(["surface", "--quiet", "--model", tiny_bert(), "--treebank", str(sample_path()), "--limit", "8",
                 "--output", str(surface)]) == 0
    probe = run / "results" / "probe.json"
    assert explore(tmp_path, "full", "--result", str(probe), "--surface", str(surface), "--also", str(probe)) == 0
    text = (tmp_path / "full.html").read_text(encoding="utf-8")
    assert 'id="surface"' in text and "[SEP] %" in text  # the surface layer table, its columns named by token
    assert text.count('<table class="board">') == 2  # the probe's table and the no-op table
    assert text.count('<tr class="model">') == 2 + 2  # the --also probe is a row of the probe's table


def test_a_page_of_raw_text_shows_every_head_in_its_sentences_without_a_treebank(tmp_path, capsys):
    text = tmp_path / "mine.txt"
    text.write_text("A sentence.\n\nThe dog barks at the cat, loudly.\n", encoding="utf-8")
    page = tmp_path / "page.html"
    assert main(["explore", "--model", tiny_bert(), "--text", str(text), "--output", str(page)]) == 0
    assert "2 sentences of unparsed text" in capsys.readouterr().out
    data = page_data(page)
    assert [sentence["words"] for sentence in data["sentences"]] == [
        ["A", "sentence", "."], ["The", "dog", "barks", "at", "the", "cat", ",", "loudly", "."]]
    assert len(data["views"]) == data["layers"] * data["heads"]  # every head can be shown
    assert data["relations"] == ["all"] and 'id="noop"' not in page.read_text(encoding="utf-8")
    # a probe result belongs beside the treebank it was scored on, and one input at a time
    probe = tmp_path / "probe.json"
    assert main(["score", "--model", tiny_bert(), "--limit", "10", "--bootstrap", "0", "--quiet",
                 "--output", str(probe)]) == 0
    for extra, option in ((["--result", str(probe)], "--result"), (["--treebank", str(sample_path())], "--text")):
        capsys.readouterr()
        assert main(["explore", "--model", tiny_bert(), "--text", str(text), *extra,
                     "--output", str(tmp_path / "refused.html")]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and f"error: {option}:" in error
    assert not (tmp_path / "refused.html").exists()
