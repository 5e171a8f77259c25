"""A plug-in analysis needs no edit of the package: tests/plugins/toy_analysis.py registers itself and gets a
command, shards, merge, resume, validation and a leaderboard table from the registry alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from probing.cli import main
from probing.engine import checkpointing
from probing.errors import ProbingError
from probing.results.io import read_result
from probing.testing import sample_path, tiny_bert

PLUGINS = Path(__file__).resolve().parent / "plugins"


@pytest.fixture(scope="module", autouse=True)
def toy_analysis():
    """The plug-in registered for this module's tests only (importing it registers it, as $PROBING_PLUGINS
    would), and taken out again so that other tests see the built-in analyses alone."""
    from probing.plugins import analyses

    sys.path.insert(0, str(PLUGINS))
    try:
        import toy_analysis as module

        yield module
    finally:
        analyses()._entries.pop("toy", None)  # the registry has no public removal: nothing else needs one
        sys.modules.pop("toy_analysis", None)
        sys.path.remove(str(PLUGINS))


def toy(capsys, *args: str) -> int:
    code = main(["toy", "--quiet", "--model", tiny_bert(), "--treebank", str(sample_path()), "--batch-size", "2",
                 *args])
    capsys.readouterr()
    return code


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    path = tmp_path_factory.mktemp("toy") / "whole.json"
    assert main(["toy", "--quiet", "--model", tiny_bert(), "--treebank", str(sample_path()), "--batch-size", "2",
                 "--output", str(path)]) == 0
    return json.loads(path.read_text())


@pytest.mark.slow
def test_the_variable_finds_the_plug_in_and_gives_it_a_command():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PLUGINS), os.environ.get("PYTHONPATH", "")]),
           "PROBING_PLUGINS": "toy_analysis"}
    listed = subprocess.run([sys.executable, "-m", "probing", "--help"], env=env, capture_output=True, text=True)
    assert listed.returncode == 0 and "    toy        how much attention each head pays a word" in listed.stdout
    without = {key: value for key, value in env.items() if key != "PROBING_PLUGINS"}
    unknown = subprocess.run([sys.executable, "-m", "probing", "toy"], env=without, capture_output=True, text=True)
    assert unknown.returncode == 2 and "unknown command 'toy'" in unknown.stderr


def test_its_result_is_validated_by_its_own_schema_and_check(whole, tmp_path):
    assert whole["analysis"] == "toy" and whole["toy"]["words"] > 0
    path = tmp_path / "edited.json"
    edited = json.loads(json.dumps(whole))
    edited["toy"]["self_share"][0][0] += 0.25
    path.write_text(json.dumps(edited))
    with pytest.raises(ProbingError, match=r"toy\.self_share\[0\]\[0\]: is not the state's sum"):
        read_result(path)
    edited["toy"]["self_share"][0][0] = 1.5
    path.write_text(json.dumps(edited))
    with pytest.raises(ProbingError, match=r"toy\.self_share\[0\]\[0\].*between 0 and 1"):
        read_result(path)


def test_shards_merge_into_the_whole_run(whole, tmp_path, capsys):
    parts = [tmp_path / f"part{index}.json" for index in range(2)]
    for index, part in enumerate(parts):
        assert toy(capsys, "--shard", f"{index}/2", "--output", str(part)) == 0
    assert main(["merge", *map(str, parts), "--output", str(tmp_path / "merged.json")]) == 0
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged["toy"]["words"] == whole["toy"]["words"]
    # a shard batches other sentences together, so the float32 attention (other padded shapes) differs in its
    # last bits: about 1e-7 of a share, far below the 1e-6 asked here
    for merged_row, whole_row in zip(merged["toy"]["self_share"], whole["toy"]["self_share"], strict=True):
        assert merged_row == pytest.approx(whole_row, rel=1e-6)


def test_an_interrupted_run_resumes_to_the_same_numbers(whole, tmp_path, capsys, monkeypatch, toy_analysis):
    output = tmp_path / "resumed.json"
    monkeypatch.setattr(toy_analysis.SelfAttentionAccumulator, "interrupt_after", 20)  # a chunk is 16 batches: the first is saved
    assert toy(capsys, "--output", str(output), "--checkpoint-every", "0") == 130
    assert not output.exists() and checkpointing.default_path(output).is_file()
    monkeypatch.setattr(toy_analysis.SelfAttentionAccumulator, "interrupt_after", None)
    assert main(["toy", "--quiet", "--model", tiny_bert(), "--treebank", str(sample_path()), "--batch-size", "2",
                 "--output", str(output), "--resume"]) == 0
    assert "resuming from" in capsys.readouterr().err
    resumed = json.loads(output.read_text())
    assert resumed["toy"] == whole["toy"]  # the same batches added in the same order


def test_it_has_a_leaderboard_table(whole, tmp_path, capsys):
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(whole))
    assert main(["leaderboard", str(path), "--format", "md"]) == 0
    shown = capsys.readouterr().out
    assert "Self-attention (toy plug-in)" in shown
    header = next(line for line in shown.splitlines() if "layer 1" in line)
    assert [cell.strip() for cell in header.strip("|").split("|")][-2:] == ["layer 1", "layer 2"]
