"""probing pairs as a newcomer meets it: progress lines off a terminal, intervals that do not collapse at 0 or 100%,
and a pair file of one's own (read by path, unpinned, its sha256 recorded; a broken file refused in one line)."""

from __future__ import annotations

import pytest
from helpers import HAND_PAIRS, hand_blimp, tiny_model

from probing.analyses.pairs.accuracy import accuracies
from probing.cli import main
from probing.data.minimal_pairs import MinimalPair
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
    assert f"scoring {pairs} pairs: {2 * pairs} units" in err  # the start: sentences to score
    assert f"scoring {pairs} pairs: 4/{2 * pairs} units" in err  # after the first batch of 4 sentences
    assert f"scoring {pairs} pairs: {2 * pairs} units in " in err  # the end
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
