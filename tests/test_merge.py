"""`probing merge`: the shards of a run add up to exactly the result of one run, and only they do."""

from __future__ import annotations

import base64
import copy
import json
import zlib

import numpy as np
import pytest

from probing.cli import main
from probing.errors import ProbingError
from probing.results.merging import merge_results
from probing.results.schema.arrays import decode_array, encode_array
from probing.testing import sample_path, tiny_bert

VOLATILE = ("timing", "created", "merged_from")
"""Blocks that are not counts: when and how long, and where the parts came from."""


def score(tmp_path, name: str, *args: str) -> dict:
    output = tmp_path / f"{name}.json"
    code = main(["score", "--quiet", "--model", tiny_bert(), "--treebank", str(sample_path()), "--bootstrap", "30",
                 "--batch-size", "4", "--relations", "det", "all", "nsubj", "--output", str(output), *args])
    assert code == 0
    return json.loads(output.read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One whole run and the three shards of the same run, as result files."""
    folder = tmp_path_factory.mktemp("merge")
    whole = score(folder, "whole")
    parts = [folder / f"part{i}.json" for i in range(3)]
    for i in range(3):
        score(folder, f"part{i}", "--shard", f"{i}/3")
    return whole, parts


def merge(capsys, tmp_path, *parts) -> tuple[int, str, dict | None]:
    output = tmp_path / "merged.json"
    code = main(["merge", *map(str, parts), "--output", str(output)])
    err = capsys.readouterr().err
    return code, err, json.loads(output.read_text()) if code == 0 else None


def without(result: dict, keys=VOLATILE) -> dict:
    return {key: value for key, value in result.items() if key not in keys}


def test_merged_shards_equal_one_run(capsys, tmp_path, runs):
    whole, parts = runs
    code, _, merged = merge(capsys, tmp_path, parts[2], parts[0], parts[1])  # order does not matter
    assert code == 0
    assert without(merged) == without(whole)
    assert merged["bootstrap"] == whole["bootstrap"] and merged["state"] == whole["state"]
    assert merged["treebank"]["sentences_scored"] == whole["treebank"]["sentences_total"] == 75
    assert merged["config"]["shard"] is None
    assert sorted(part["shard"] for part in merged["merged_from"]) == ["0/3", "1/3", "2/3"]
    shard_seconds = [json.loads(p.read_text())["timing"]["seconds_total"] for p in parts]
    assert merged["timing"]["seconds_total"] == pytest.approx(sum(shard_seconds), abs=0.01)
    waits = [json.loads(p.read_text())["timing"]["seconds_waiting_for_input"] for p in parts]
    assert merged["timing"]["seconds_waiting_for_input"] == pytest.approx(sum(waits), abs=0.01)


def test_each_shard_is_a_proper_part(runs):
    whole, parts = runs
    scored = [json.loads(p.read_text())["treebank"]["sentences_scored"] for p in parts]
    assert scored == [25, 25, 25] and sum(scored) == whole["treebank"]["sentences_scored"]
    totals = [json.loads(p.read_text())["relations"]["all"]["total"] for p in parts]
    assert 0 < min(totals) and sum(totals) == whole["relations"]["all"]["total"]


def test_refuses_overlap(capsys, tmp_path, runs):
    _, parts = runs
    code, err, _ = merge(capsys, tmp_path, parts[0], parts[1], parts[1], parts[2])
    assert code == 2 and "shard 1/3 twice" in err and "overlap" in err


def test_refuses_a_gap(capsys, tmp_path, runs):
    _, parts = runs
    code, err, _ = merge(capsys, tmp_path, parts[0], parts[2])
    assert code == 2 and "shard 1/3 missing" in err


def test_refuses_a_whole_run_among_parts(capsys, tmp_path, runs):
    _, parts = runs
    whole_file = tmp_path / "whole.json"
    whole_file.write_text(json.dumps(runs[0]))
    code, err, _ = merge(capsys, tmp_path, parts[0], whole_file)
    assert code == 2 and "whole run, not a shard" in err


def test_refuses_shards_of_different_splits(capsys, tmp_path, runs):
    _, parts = runs
    other = score(tmp_path, "half", "--shard", "1/2")
    code, err, _ = merge(capsys, tmp_path, parts[0], tmp_path / "half.json")
    assert code == 2 and "split the input differently" in err
    assert other["config"]["shard"] == {"index": 1, "count": 2}


@pytest.mark.parametrize(
    ("block", "field", "value", "message"),
    [
        ("input", "sha256", "0" * 64, "input.sha256"),
        ("model", "fingerprint", "sha256:abc123", "model.fingerprint"),
        ("config", "pooling", {"to": "sum", "from": "first"}, "config.pooling"),
        ("config", "relations", ["det"], "config.relations"),
        ("tool", "version", "9.9.9", "tool.version"),
    ],
)
def test_refuses_parts_of_different_runs(runs, block, field, value, message):
    _, parts = runs
    results = [json.loads(p.read_text()) for p in parts]
    results[1] = copy.deepcopy(results[1])
    results[1][block][field] = value
    with pytest.raises(ProbingError, match=message) as caught:
        merge_results(results, ["a.json", "b.json", "c.json"])
    assert "b.json" in str(caught.value) and "not of the same run" in str(caught.value)


def test_refuses_a_different_model_end_to_end(capsys, tmp_path, runs):
    _, parts = runs
    output = tmp_path / "other-model.json"
    assert main(["score", "--quiet", "--model", tiny_bert(seed=1), "--treebank", str(sample_path()), "--bootstrap",
                 "30", "--batch-size", "4", "--relations", "det", "all", "nsubj", "--shard", "1/3",
                 "--output", str(output)]) == 0
    capsys.readouterr()
    code, err, _ = merge(capsys, tmp_path, parts[0], output, parts[2])
    assert code == 2 and "model.fingerprint" in err


def test_the_same_weights_from_another_folder_are_the_same_model(runs):
    _, parts = runs
    results = [json.loads(p.read_text()) for p in parts]
    results[1]["model"]["name_or_path"] = "/elsewhere/copy-of-the-model"
    assert merge_results(results, ["a", "b", "c"])["relations"]


def test_device_may_differ_and_is_recorded(runs):
    _, parts = runs
    results = [json.loads(p.read_text()) for p in parts]
    results[2]["model"]["device"] = "cuda:0"
    merged = merge_results(results, ["a", "b", "c"])
    assert merged["model"]["device"] == "cpu,cuda:0"
    assert [part["device"] for part in merged["merged_from"]] == ["cpu", "cpu", "cuda:0"]


def in_numpy_layout(encoded: dict) -> dict:
    """An encoded array as files before byte planes held it: zlib over the bytes as numpy lays them out."""
    array = decode_array(encoded)
    return {"shape": encoded["shape"], "dtype": encoded["dtype"],
            "data": base64.b64encode(zlib.compress(array.astype("<i8").tobytes())).decode("ascii")}


def test_arrays_decode_alike_from_either_layout():
    counts = np.array([[0, 1, 255], [256, 70_000, -3]], dtype=np.int64)
    planes = encode_array(counts)
    assert planes["layout"] == "byte-planes"
    assert np.array_equal(decode_array(planes), counts)
    assert np.array_equal(decode_array(in_numpy_layout(planes)), counts)
    # the planes are not the numpy bytes: a reader that ignored the layout would read other numbers
    assert planes["data"] != in_numpy_layout(planes)["data"]


def as_version_2(result: dict) -> dict:
    """A probe result as schema version 2 wrote it: no state; the replicate sums in ``bootstrap.arrays``, in
    numpy's byte layout."""
    old = copy.deepcopy(result)
    state = old.pop("state")
    old["schema_version"] = "2"
    old["bootstrap"] = {**old["bootstrap"], "encoding": "base64(zlib(int64 little-endian, C order))",
                        "arrays": {name: in_numpy_layout(array) for name, array in state.items()
                                   if name.startswith("boot_")}}
    return old


def test_version_2_shards_merge_with_version_3_ones_into_one_run(capsys, tmp_path, runs):
    """A version-2 file is read as version 3: its counts and replicate sums become the same state, and it merges
    with files written now into exactly the whole run."""
    whole, parts = runs
    first = json.loads(parts[0].read_text())
    old = tmp_path / "old.json"
    old.write_text(json.dumps(as_version_2(first)))
    from probing.results.io import read_result

    assert read_result(old)["state"].keys() == first["state"].keys()
    code, err, merged = merge(capsys, tmp_path, old, parts[1], parts[2])
    assert code == 0, err
    assert merged["schema_version"] == "3" and merged["state"] == whole["state"]
    assert without(merged) == without(whole)
