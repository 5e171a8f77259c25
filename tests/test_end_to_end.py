"""`probing score` end to end with a tiny random BERT built offline, and its bad inputs."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import conllu_rows

from probing.cli import main
from probing.data.relations import DEFAULT_RELATIONS, relation_pairs
from probing.data.treebank import read_treebank
from probing.results.schema import SCHEMA_VERSION
from probing.results.schema.arrays import decode_array
from probing.testing import sample_path, tiny_bert

RESULT_KEYS = {"schema_version", "tool", "model", "treebank", "config", "relations", "timing", "created"}


def score(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["score", "--quiet", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tiny_bert_end_to_end_result_file(capsys, tmp_path):
    output = tmp_path / "r.json"
    code, out, _ = score(capsys, "--model", tiny_bert(), "--treebank", str(sample_path()), "--output", str(output),
                         "--relations", *DEFAULT_RELATIONS, "nsubj", "--bootstrap", "20")
    assert code == 0
    assert "best head (layer-head, from 1)" in out and "nsubj" in out
    result = json.loads(output.read_text())
    assert RESULT_KEYS <= set(result)
    assert result["schema_version"] == SCHEMA_VERSION == "3" and result["analysis"] == "probe"
    assert (result["model"]["num_layers"], result["model"]["num_heads"]) == (2, 4)
    sentences = list(read_treebank(sample_path()))
    assert result["treebank"]["sentences_total"] == result["treebank"]["sentences_scored"] == len(sentences)
    assert result["treebank"]["words_scored"] == sum(map(len, sentences))
    assert result["config"]["offsets"] == [-3, -2, -1, 1, 2, 3]
    assert result["config"]["pooling"] == {"to": "sum", "from": "mean"}
    for name, entry in result["relations"].items():
        assert entry["total"] == sum(len(relation_pairs(name, s)) for s in sentences) > 0
        for direction in ("dep_to_head", "head_to_dep"):
            grid = entry["heads"][direction]
            assert len(grid) == 2 and all(len(row) == 4 for row in grid)
            assert all(0 <= c <= entry["total"] for row in grid for c in row)
        assert set(entry["baselines"]) == {"-3", "-2", "-1", "1", "2", "3"}
        best = entry["best"]
        assert best["accuracy"] == max(max(map(max, entry["heads"][d])) for d in entry["heads"]) / entry["total"]
        assert best["accuracy"] == entry["heads"][best["direction"]][best["layer"]][best["head"]] / entry["total"]
        assert entry["best_baseline"]["accuracy"] == max(entry["baselines"].values()) / entry["total"]


def test_the_batch_size_moves_no_count_but_through_float_rounding(capsys, tmp_path):
    """Batches of 1 and of 7 sentences: what no float enters (totals, offset baselines and their bootstrap
    replicates) is identical; a head's count may move only at a near-tie, where another batch shape rounds a
    word's two strongest attentions the other way (docs/scoring.md, section 7): at most one word per head on
    these 20 sentences, where a tie within float32 rounding (about 1e-7) is already unlikely."""
    results = []
    for batch_size in ("1", "7"):
        output = tmp_path / f"b{batch_size}.json"
        assert score(capsys, "--model", tiny_bert(), "--limit", "20", "--batch-size", batch_size,
                     "--output", str(output), "--bootstrap", "10")[0] == 0
        results.append(json.loads(output.read_text()))
    one, seven = (result["relations"] for result in results)
    assert one.keys() == seven.keys()
    for name in one:
        assert (one[name]["total"], one[name]["baselines"]) == (seven[name]["total"], seven[name]["baselines"])
        for direction in ("dep_to_head", "head_to_dep"):
            moved = np.abs(np.subtract(one[name]["heads"][direction], seven[name]["heads"][direction]))
            assert moved.max() <= 1, (name, direction)
    arrays = [{key: decode_array(value) for key, value in result["state"].items()} for result in results]
    for key in ("boot_total", "boot_baselines"):
        assert np.array_equal(arrays[0][key], arrays[1][key]), key


def test_relation_matching_nothing_is_reported_not_dropped(capsys, tmp_path):
    output = tmp_path / "r.json"
    assert score(capsys, "--model", tiny_bert(), "--limit", "5", "--relations", "det", "vocative",
                 "--output", str(output), "--bootstrap", "0")[0] == 0
    entry = json.loads(output.read_text())["relations"]["vocative"]
    assert entry["total"] == 0 and entry["best"] is None and entry["best_baseline"] is None


def test_too_long_sentences_are_skipped_and_counted(capsys, tmp_path):
    output = tmp_path / "r.json"
    # the first ten sentences are 19 to 37 tiny-BERT tokens long: five are over 24
    assert score(capsys, "--model", tiny_bert(), "--limit", "10", "--max-length", "24",
                 "--output", str(output), "--bootstrap", "0")[0] == 0
    treebank = json.loads(output.read_text())["treebank"]
    assert treebank["skipped"]["too_long"] == 5
    assert treebank["sentences_scored"] == 5


def test_a_run_that_scores_nothing_is_an_error_not_an_empty_result(capsys, tmp_path):
    output = tmp_path / "r.json"
    code, _, err = score(capsys, "--model", tiny_bert(), "--limit", "10", "--max-length", "16", "--output", str(output))
    assert code == 2 and "all 10 units are longer than 16 tokens" in err and not output.exists()
    code, _, err = score(capsys, "--model", tiny_bert(), "--limit", "2", "--shard", "4/5", "--output", str(output))
    assert code == 2 and "shard 4/5 holds no unit" in err and not output.exists()


def test_zero_piece_words_become_unk_and_are_counted(capsys, write_conllu, tmp_path):
    # A zero-width space is erased by BERT's normaliser: the word would own no piece.
    path = write_conllu(conllu_rows("1 the the DET _ _ 2 det _ _", "2 \u200b x X _ _ 0 root _ _"))
    output = tmp_path / "r.json"
    assert score(capsys, "--model", tiny_bert(), "--treebank", str(path), "--output", str(output), "--bootstrap", "0")[0] == 0
    result = json.loads(output.read_text())
    assert result["treebank"]["unk_substituted_words"] == 1
    assert result["relations"]["det"]["total"] == 1


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--relations", "DOBJ"], "--relations: unknown relation 'DOBJ'"),
        (["--treebank", "missing.conllu"], "treebank file not found"),
        (["--model", "/nonexistent/model-folder"], "--model: model folder not found"),
        (["--batch-size", "0"], "--batch-size: must be a positive integer"),
        (["--shard", "3/2"], "--shard"),
    ],
)
def test_bad_options_get_one_clear_message(capsys, args, fragment):
    code, out, err = score(capsys, "--model", tiny_bert(), *args)
    assert code == 2
    assert fragment in err
    assert "Traceback" not in err and out == ""


@pytest.mark.slow
def test_malformed_treebank_via_the_real_command_line(write_conllu, tmp_path):
    bad = write_conllu(conllu_rows("1 a a X _ _ 0 root _ _", "2 b b X _ _ x dep _ _"))
    output = tmp_path / "r.json"
    previous = '{"schema_version": "3", "analysis": "probe"}\n'  # the start of an earlier probe result
    output.write_text(previous)
    completed = subprocess.run(
        [sys.executable, "-m", "probing", "score", "--model", tiny_bert(), "--treebank", str(bad), "--output", str(output)],
        capture_output=True, text=True,
    )
    assert completed.returncode == 2
    assert f"{bad}:2: HEAD is not an integer: 'x'" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert output.read_text() == previous  # nothing the user had is lost


def test_empty_treebank(capsys, write_conllu):
    code, _, err = score(capsys, "--model", tiny_bert(), "--treebank", str(write_conllu("")))
    assert code == 2 and "holds no sentence" in err


def test_output_is_replaced_only_by_a_complete_file(tmp_path, monkeypatch):
    from probing import atomic
    from probing.errors import ProbingError

    target = tmp_path / "r.json"
    target.write_text("old\n")

    def disk_full(descriptor):
        raise OSError(28, "No space left on device")

    # fail after part of the new file was written, before it could be renamed into place
    monkeypatch.setattr(atomic.os, "fsync", disk_full)
    with pytest.raises(ProbingError, match="the disk is full; nothing was changed"):
        atomic.write_json_atomic({"a": 1}, target)
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # no temp file left behind


def test_a_malformed_line_at_the_end_of_a_long_treebank_still_leaves_no_result(tmp_path, capsys):
    """Reading runs ahead of the model in a thread; its error still stops the run before anything is written."""
    text = sample_path().read_text(encoding="utf-8") * 8  # 600 sentences: many chunks ahead of the error
    lines = text.count("\n")
    bad = tmp_path / "long.conllu"
    bad.write_text(text + "1\tbroken\tbroken\tX\t_\t_\tx\troot\t_\t_\n\n", encoding="utf-8")
    output = tmp_path / "r.json"
    code, out, err = score(capsys, "--model", tiny_bert(), "--treebank", str(bad), "--output", str(output),
                           "--bootstrap", "10")
    assert code == 2 and err.strip() == f"probing score: error: {bad}:{lines + 1}: HEAD is not an integer: 'x'"
    assert not output.exists() and not list(tmp_path.glob(".r.json*"))
