"""probing pairs as a newcomer meets it: progress lines off a terminal, intervals that do not collapse at 0 or 100%,
and a pair file of one's own (read by path, unpinned, its sha256 recorded; a broken file refused in one line)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from helpers import HAND_PAIRS, hand_blimp, tiny_model

from probing.analyses.pairs.accuracy import accuracies
from probing.cli import main
from probing.data.minimal_pairs import MinimalPair, check_paradigms
from probing.errors import ProbingError
from probing.results.io import read_result
from probing.stats.intervals import wilson_interval


def test_pairs_prints_progress_lines_off_a_terminal_and_none_when_quiet(tmp_path, monkeypatch, capsys):
    blimp = hand_blimp(tmp_path / "blimp", monkeypatch)
    monkeypatch.setenv("PROBING_PROGRESS_EVERY", "0")  # a line after every batch
    common = ["pairs", "--model", tiny_model("llama"), "--blimp", blimp, "--paradigms", "anaphor_gender_agreement",
              "--bootstrap", "0", "--batch-size", "4"]
    assert main(common) == 0
    err = capsys.readouterr().err  # captured: not a terminal, as under nohup or Slurm
    pairs = len(HAND_PAIRS["good_bad"])
    assert "loaded " in err
    assert f"scoring {pairs} pairs: {pairs} units" in err  # the start: the pass's units are the pairs
    assert f"scoring {pairs} pairs: 2/{pairs} units" in err  # after the first batch of 4 sentences, 2 pairs
    assert f"scoring {pairs} pairs: {pairs} units in " in err  # the end
    assert main([*common, "--quiet"]) == 0
    assert "scoring" not in capsys.readouterr().err


def test_an_accuracy_at_the_bounds_keeps_an_interval_that_does_not_collapse():
    """20 pairs all right: the percentile bootstrap said [100.0, 100.0]; Wilson's interval reaches below 100."""
    pairs = [MinimalPair("a", "syntax", "", "")] * 20 + [MinimalPair("b", "syntax", "", "")] * 20
    good, bad = [0.0] * 40, [-1.0] * 20 + [1.0] * 20  # a: all right, b: all wrong
    result = accuracies(pairs, good, bad, bootstrap=200, seed=0)
    low, high = result["paradigms"]["a"]["interval"]
    assert high == 1.0 and 0.8 < low < 0.9  # Wilson, 20 of 20: [0.839, 1.0]
    low, high = result["paradigms"]["b"]["interval"]
    assert low == 0.0 and 0.1 < high < 0.2
    assert result["fields"]["syntax"]["interval"] == pytest.approx(wilson_interval(20, 40))
    # overall is the mean of two equal paradigms: the Wilson interval of all 40 pairs pooled
    assert result["overall"]["accuracy"] == 0.5
    assert result["overall"]["interval"] == pytest.approx(wilson_interval(20, 40))


def test_the_overall_interval_of_unequal_paradigms_uses_the_effective_number_of_pairs():
    pairs = [MinimalPair("a", "syntax", "", "")] * 30 + [MinimalPair("b", "syntax", "", "")] * 10
    result = accuracies(pairs, [0.0] * 40, [-1.0] * 40, bootstrap=0)  # all right
    low, high = result["overall"]["interval"]
    effective = 4 / (1 / 30 + 1 / 10)  # 2^2 / sum(1 / n): 30 pairs, fewer than the 40 pooled
    assert (low, high) == pytest.approx(wilson_interval(effective, effective)) and high == 1.0
    assert low < wilson_interval(40, 40)[0]


def own_pairs(folder: Path, lines: list) -> Path:
    """A pair file of one's own: each item a dict (one JSON line) or bytes (written as they are)."""
    path = folder / "mine.jsonl"
    path.write_bytes(b"".join((item if isinstance(item, bytes) else json.dumps(item).encode()) + b"\n"
                              for item in lines))
    return path


def hand_lines(uids=("agreement", "islands")) -> list[dict]:
    good_bad = HAND_PAIRS["good_bad"]
    half = len(good_bad) // 2
    return [{"sentence_good": good, "sentence_bad": bad, "UID": uids[0] if place < half else uids[1],
             "field": "morphology" if place < half else "syntax", "pairID": str(place % half)}
            for place, (good, bad) in enumerate(good_bad)]


def test_a_pair_file_of_ones_own_is_scored_and_said_to_be_unpinned(tmp_path, capsys):
    path = own_pairs(tmp_path, hand_lines())
    output = tmp_path / "mine-result.json"
    assert main(["pairs", "--quiet", "--model", tiny_model("llama"), "--pairs-file", str(path), "--bootstrap", "0",
                 "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert "mine.jsonl (your own pairs, unpinned: sha256 " in out.splitlines()[0]
    result = read_result(output)  # validated against the schema
    assert result["input"]["pinned"] is False and result["input"]["kind"] == "minimal_pairs"
    assert result["input"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert result["config"]["paradigms"] == ["agreement", "islands"]
    assert result["pairs"]["overall"]["pairs"] == len(HAND_PAIRS["good_bad"])
    assert set(result["pairs"]["fields"]) == {"morphology", "syntax"}


def test_a_paradigm_typo_gets_a_did_you_mean(tmp_path, capsys):
    with pytest.raises(ProbingError, match=r"unknown BLiMP paradigm 'wh_islnd' \(did you mean wh_island\?\)"):
        check_paradigms(["wh_islnd"])
    path = own_pairs(tmp_path, hand_lines())
    assert main(["pairs", "--quiet", "--model", tiny_model("llama"), "--pairs-file", str(path),
                 "--paradigms", "agreemnt"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--paradigms" in err and "(did you mean agreement?)" in err


BROKEN = {
    "a line without its pair": (lambda lines: [lines[0], {"sentence_good": "A dog barks ."}], 2, "has no sentence_bad"),
    "a duplicated id": (lambda lines: [lines[0], lines[1], {**lines[2], "pairID": lines[0]["pairID"]}], 3,
                        "pairID '0' of paradigm 'agreement' again (first at line 1)"),
    "identical sentences": (lambda lines: [lines[0], {**lines[1], "sentence_bad": lines[1]["sentence_good"]}], 2,
                            "the same sentence"),
    "non-UTF-8": (lambda lines: [lines[0], lines[1], b'{"sentence_good": "caf\xe9 .", "sentence_bad": "cafe ."}'], 3,
                  "is not UTF-8 (byte 0xe9"),
    "an extra column": (lambda lines: [{**lines[0], "sentence_god": "x"}], 1, "unknown column 'sentence_god' "
                        "(did you mean sentence_good?)"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_pair_file_is_refused_in_one_line_naming_file_and_line(case, tmp_path, capsys):
    build, line, message = BROKEN[case]
    path = own_pairs(tmp_path, build(hand_lines()))
    output = tmp_path / "out.json"
    assert main(["pairs", "--quiet", "--model", tiny_model("llama"), "--pairs-file", str(path),
                 "--output", str(output)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{path}:{line}: " in err and message in err, err
    assert not output.exists() and sorted(tmp_path.iterdir()) == [path]  # nothing written


def test_the_board_names_ones_own_pairs_and_quotes_no_blimp_figures_beside_them():
    from probing.analyses.pairs.report import leaderboard_table

    pairs = [MinimalPair("mine", "syntax", "", "")] * 4
    result = {"analysis": "pairs", "model": {"name": "m", "name_or_path": "m", "architecture": "x", "fingerprint": "f"},
              "config": {"limit": None}, "input": {"path": "data/mine.jsonl", "sha256": "ab" * 32, "pinned": False},
              "pairs": {**accuracies(pairs, [0.0] * 4, [-1.0] * 4, bootstrap=0), "context_token": "<s>"}}
    table = leaderboard_table([result])
    assert [row.treebank for row in table.rows] == ["mine.jsonl (your own pairs, unpinned: sha256 abababababab), "
                                                    "1 paradigms, after <s>"]
