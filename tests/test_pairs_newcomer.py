"""probing pairs as a newcomer meets it: progress lines off a terminal, intervals that do not collapse at 0 or 100%,
and a pair file of one's own (read by path, unpinned, its sha256 recorded; a broken file refused in one line)."""

from __future__ import annotations

from helpers import HAND_PAIRS, hand_blimp, tiny_model

from probing.cli import main


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
