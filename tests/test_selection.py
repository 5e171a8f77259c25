"""Held-out selection: the tie rules, and `probing score --select-on DEV` end to end with a tiny BERT."""

from __future__ import annotations

import json
from pathlib import Path

import heldout_runs
import numpy as np
import pytest

from probing.analyses.probe.accumulator import best_baseline, best_head
from probing.analyses.probe.heldout_block import attach_heldout
from probing.cli import main
from probing.errors import ProbingError
from probing.stats.heldout import default_splits
from probing.stats.selection import DIRECTIONS, choose, select_head, select_offset
from probing.testing import tiny_bert


def heads_array(layers=3, heads=4, fill=0):
    return np.full((2, layers, heads), fill, dtype=np.int64)  # [direction, layer, head]


def test_best_head_wins():
    counts = heads_array()
    counts[1, 2, 3] = 7
    choice = select_head(counts, total=10)
    assert (choice.direction, choice.layer, choice.head, choice.correct, choice.ties) == ("head_to_dep", 2, 3, 7, 1)


def test_ties_go_to_lower_layer_then_lower_head_then_dep_to_head():
    counts = heads_array()
    counts[0, 2, 0] = counts[1, 1, 3] = 5  # layer 1 beats layer 2, whatever the head and direction
    assert (select_head(counts, 10).layer, select_head(counts, 10).head) == (1, 3)
    counts = heads_array()
    counts[0, 1, 3] = counts[1, 1, 2] = 5  # same layer: head 2 beats head 3, even in head_to_dep
    choice = select_head(counts, 10)
    assert (choice.layer, choice.head, choice.direction, choice.ties) == (1, 2, "head_to_dep", 2)
    counts = heads_array()
    counts[0, 0, 1] = counts[1, 0, 1] = 5  # same head: dep_to_head first
    assert select_head(counts, 10).direction == "dep_to_head"


def test_all_tied_picks_the_very_first_head_and_counts_the_ties():
    choice = select_head(heads_array(fill=4), total=10)
    assert (choice.layer, choice.head, choice.direction, choice.ties) == (0, 0, "dep_to_head", 24)


def test_no_pairs_means_no_choice():
    assert select_head(heads_array(), total=0) is None
    assert select_offset([0] * 6, [-3, -2, -1, 1, 2, 3], total=0) is None


def test_offset_ties_go_to_the_offset_listed_first():
    assert select_offset([1, 5, 2, 5], offsets=[-2, -1, 1, 2], total=9).offset == -1
    reordered = select_offset([5, 1, 2, 5], offsets=[2, -2, 1, -1], total=9)
    assert (reordered.offset, reordered.index, reordered.ties) == (2, 0, 2)


def test_same_rule_as_the_in_sample_best_of_result_files():
    rng = np.random.default_rng(0)
    offsets = ["-3", "-2", "-1", "1", "2", "3"]
    for _ in range(50):
        counts = rng.integers(0, 4, size=(2, 3, 5))  # small range: many ties
        baselines = dict(zip(offsets, rng.integers(0, 4, size=6).tolist()))
        entry = {"total": 9, "heads": {d: counts[i].tolist() for i, d in enumerate(DIRECTIONS)}, "baselines": baselines}
        head, offset = choose(entry, [int(o) for o in offsets])
        expected = best_head(entry["heads"], 9)
        assert (head.layer, head.head, head.direction) == (expected["layer"], expected["head"], expected["direction"])
        assert offset.offset == best_baseline(baselines, [int(o) for o in offsets], 9)["offset"]


def test_default_splits_only_for_bare_names(tmp_path):
    assert default_splits("en_ewt") == ("en_ewt:dev", "en_ewt:test")
    assert default_splits("en_gum") == ("en_gum:dev", "en_gum:test")
    assert default_splits("en_ewt:test") is None
    assert default_splits("en_pud") == ("en_pud:even", "en_pud:odd")  # one split: its halves
    assert default_splits("en_pud:even") is None
    assert default_splits(None) is None
    (tmp_path / "en_ewt").write_text("")
    assert default_splits(str(tmp_path / "en_ewt")) is None


# ---------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def split_sample():
    return heldout_runs.split_sample()


def run_score(capsys, *args):
    code = main(["score", "--quiet", "--model", tiny_bert(), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def runs():
    """Plain DEV and TEST results and the held-out result, computed once."""
    return heldout_runs.results() | {"paths": heldout_runs.result_paths()}


def test_heldout_result_keeps_the_test_result_and_adds_the_dev_choice(runs):
    heldout, test, dev = runs["heldout"], runs["test"], runs["dev"]
    assert heldout["relations"] == test["relations"]  # in-sample on TEST, exactly as a plain run
    assert heldout["bootstrap"] == test["bootstrap"] and heldout["state"] == test["state"]
    block = heldout["heldout"]
    assert block["select_on"]["treebank"]["sha256"] == dev["treebank"]["sha256"]
    assert block["report_on"]["sha256"] == test["treebank"]["sha256"]
    assert block["replicates"] == 40
    offsets = test["config"]["offsets"]
    for name, entry in block["relations"].items():
        dev_head, dev_offset = choose(dev["relations"][name], offsets)
        chosen, test_entry = entry["heldout"], test["relations"][name]
        assert entry["pairs"] == test_entry["total"]
        assert entry["dev"]["pairs"] == dev["relations"][name]["total"]
        assert (chosen["head"]["layer"], chosen["head"]["head"], chosen["head"]["direction"]) == (
            dev_head.layer, dev_head.head, dev_head.direction)
        expected = test_entry["heads"][dev_head.direction][dev_head.layer][dev_head.head] / test_entry["total"]
        assert chosen["head"]["accuracy"] == pytest.approx(expected)
        assert chosen["baseline"]["offset"] == dev_offset.offset
        assert chosen["difference"]["value"] == pytest.approx(expected - chosen["baseline"]["accuracy"])
        low, high = chosen["head"]["interval"]
        assert 0.0 <= low <= high <= 1.0
        assert 0.0 <= chosen["difference"]["p_not_better"] <= 1.0
        best = test_entry["best"]  # the in-sample numbers are the TEST result's own best
        in_sample = entry["in_sample"]["head"]
        assert (in_sample["layer"], in_sample["head"], in_sample["accuracy"]) == (best["layer"], best["head"], best["accuracy"])
        assert chosen["head"]["accuracy"] <= in_sample["accuracy"]  # in-sample is the best on TEST by construction


def test_a_dev_result_file_gives_the_same_choice_as_scoring_dev(runs, split_sample, capsys, tmp_path):
    _, test = split_sample
    output = tmp_path / "from_json.json"
    code, out, _ = run_score(capsys, "--relations", "dobj", "det", "pobj", "all", "nsubj", "--treebank", str(test),
                             "--select-on", str(runs["paths"]["dev"]), "--bootstrap", "40", "--output", str(output))
    assert code == 0
    assert "head chosen on dev" in out and "P(not better)" in out
    from_json = json.loads(output.read_text())["heldout"]
    assert from_json["relations"] == runs["heldout"]["heldout"]["relations"]
    assert from_json["select_on"]["result"] == str(runs["paths"]["dev"])


def test_attach_heldout_works_on_result_dicts_alone(runs):
    again = attach_heldout(runs["test"], runs["dev"])
    assert again["heldout"]["relations"] == runs["heldout"]["heldout"]["relations"]


def test_selecting_on_the_reported_treebank_is_refused(split_sample, capsys):
    _, test = split_sample
    code, _, err = run_score(capsys, "--treebank", str(test), "--select-on", str(test), "--bootstrap", "0", "--limit", "5")
    assert code == 2 and "in-sample" in err


def test_dev_result_of_another_model_or_missing_relations_is_refused(runs, split_sample, capsys, tmp_path):
    _, test = split_sample
    other = dict(runs["dev"], model=dict(runs["dev"]["model"], num_layers=7))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(other))
    code, _, err = run_score(capsys, "--treebank", str(test), "--select-on", str(bad), "--bootstrap", "0",
                             "--relations", "det", "--limit", "5")
    assert code == 2 and "7 layers" in err
    code, _, err = run_score(capsys, "--treebank", str(test), "--select-on", str(runs["paths"]["dev"]),
                             "--bootstrap", "0", "--relations", "amod", "--limit", "5")
    assert code == 2 and "lacks relations ['amod']" in err


def test_heldout_shards_merge_into_the_whole_heldout_run(runs, split_sample, capsys, tmp_path):
    _, test = split_sample
    parts = []
    for index in range(2):
        part = tmp_path / f"part{index}.json"
        code, _, _ = run_score(capsys, "--relations", *heldout_runs.RELATIONS, "--treebank", str(test), "--select-on",
                               str(runs["paths"]["dev"]), "--bootstrap", str(heldout_runs.REPLICATES),
                               "--shard", f"{index}/2", "--output", str(part))
        assert code == 0
        parts.append(str(part))
    merged_path = tmp_path / "merged.json"
    assert main(["merge", *parts, "--output", str(merged_path)]) == 0
    merged, whole = json.loads(merged_path.read_text()), runs["heldout"]
    assert merged["relations"] == whole["relations"] and merged["bootstrap"] == whole["bootstrap"]
    assert merged["state"] == whole["state"]
    assert merged["heldout"]["relations"] == whole["heldout"]["relations"]


def test_shards_chosen_on_different_dev_data_do_not_merge(runs):
    from probing.analyses.probe.heldout_block import reattach_heldout

    other = json.loads(json.dumps(runs["heldout"]))
    other["heldout"]["select_on"]["treebank"]["sha256"] = "0" * 64
    with pytest.raises(ProbingError, match="same DEV"):
        reattach_heldout(runs["test"], [runs["heldout"], other])
    assert reattach_heldout(runs["test"], [runs["test"]]) == runs["test"]


def test_a_heldout_run_prints_the_table_to_cite_first_titled_and_every_table_has_a_legend(runs):
    from probing.analyses.probe.tables import HELDOUT_LEGEND, SCORE_LEGEND, legend, run_header, score_tables

    text = score_tables(runs["heldout"])
    lines = text.splitlines()
    assert lines[0] == "held out: chosen on dev, reported on test, 95% intervals"
    headers = [number for number, line in enumerate(lines) if line.startswith("relation ")]
    in_sample = next(number for number, line in enumerate(lines) if line.startswith("in-sample:"))
    assert headers[0] < text.index(legend(HELDOUT_LEGEND)) and headers[0] < in_sample < headers[1]
    assert "for comparison with the held-out table above" in lines[in_sample]
    for number, columns in zip(headers, (HELDOUT_LEGEND, SCORE_LEGEND)):  # a legend line for every column shown
        assert all(column in lines[number] for column in columns) and legend(columns) in text
        assert len(lines[number].split()) >= len(columns)
    plain = score_tables(runs["dev"]).splitlines()
    assert plain[0].startswith("in-sample: heads and offsets chosen and reported on the same 40 sentences")
    assert "--treebank en_ewt" in plain[0] and not any(line.startswith("held out") for line in plain)
    model = runs["heldout"]["model"]
    header = run_header(runs["heldout"])
    assert header.startswith(f"{Path(model['name_or_path']).name} (") and model["name_or_path"] not in header
