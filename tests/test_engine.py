"""Every analysis on the one engine: shards merge into the whole run, torchrun equals one process,
and a long ablation survives SIGKILL with --resume.

Integer counts must be identical; float statistics (sums of float32 attention in a different
batch order) agree to rounding.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from helpers import kill_once_checkpointed

from probing.cli import main
from probing.engine import checkpointing
from probing.testing import sample_path, tiny_bert

LIMIT = ("--limit", "24", "--batch-size", "4")

ANALYSES = {
    "surface": [],
    "heads": [],
    "patterns": ["--pairs"],
    "compare": ["--second-model", "SECOND"],
    "ablate": ["--each-layer", "--metric", "probe", "--relations", "det", "all", "--bootstrap", "20"],
}
"""Command -> its own options; every one also gets the tiny model, the sample treebank and LIMIT."""


def command(name: str, output, *extra: str) -> list[str]:
    options = [tiny_bert(num_layers=2, seed=1) if part == "SECOND" else part for part in ANALYSES[name]]
    return [name, "--quiet", "--model", tiny_bert(), "--treebank", str(sample_path()), *LIMIT, *options, *extra,
            "--output", str(output)]


def numbers(result: dict) -> dict:
    """What an analysis measured (its payload without the encoded state), by analysis."""
    analysis = result["analysis"]
    if analysis == "surface":
        return result["surface"]
    if analysis == "heads":
        return {"divergence": result["heads"]["divergence"]["mean"], "surface": result["surface"]["heads"]}
    if analysis == "patterns":
        return {"types": result["types"], "shares": result["shares"]}
    if analysis == "compare":
        return {"similarity": result["similarity"]}
    if analysis == "ablation":
        return {"baseline": result["baseline"], "conditions": result["conditions"]}
    return {"relations": result["relations"], "bootstrap": result["bootstrap"], "state": result["state"]}


def assert_same(mine, theirs, where: str = "") -> None:
    """Equal structures; floats equal to rounding (results keep 6 decimals), integers and strings exactly."""
    if isinstance(mine, dict):
        assert set(mine) == set(theirs), where
        for key in mine:
            assert_same(mine[key], theirs[key], f"{where}.{key}")
    elif isinstance(mine, list):
        assert len(mine) == len(theirs), where
        for index, (a, b) in enumerate(zip(mine, theirs)):
            assert_same(a, b, f"{where}[{index}]")
    elif isinstance(mine, float) or isinstance(theirs, float):
        assert mine == pytest.approx(theirs, rel=1e-5, abs=1e-5), where  # results round to 6 decimals
    else:
        assert mine == theirs, where


@pytest.fixture(scope="module")
def whole_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("whole")
    results = {}
    for name in ANALYSES:
        output = folder / f"{name}.json"
        assert main(command(name, output)) == 0
        results[name] = json.loads(output.read_text())
    return results


@pytest.mark.parametrize("name", sorted(ANALYSES))
def test_two_shards_merge_into_the_whole_run(name, whole_runs, tmp_path, capsys):
    parts = []
    for index in range(2):
        part = tmp_path / f"part{index}.json"
        assert main(command(name, part, "--shard", f"{index}/2")) == 0
        parts.append(str(part))
    merged_path = tmp_path / "merged.json"
    assert main(["merge", *parts, "--output", str(merged_path)]) == 0
    merged, whole = json.loads(merged_path.read_text()), whole_runs[name]
    assert merged["input"]["units_used"] == whole["input"]["units_used"] == 24
    assert merged["config"]["shard"] is None and len(merged["merged_from"]) == 2
    assert_same(numbers(merged), numbers(whole))
    capsys.readouterr()


@pytest.mark.slow
def test_two_processes_under_torchrun_equal_one(whole_runs, tmp_path):
    """One torchrun launch runs every command in turn (starting two processes once, not once per command)."""
    outputs = {name: tmp_path / f"{name}-two.json" for name in ANALYSES}
    script = tmp_path / "every_command.py"
    script.write_text(
        "import sys\nfrom probing.cli import main\n"
        f"for argv in {[command(name, outputs[name]) for name in ANALYSES]!r}:\n"
        "    code = main(argv)\n"
        "    if code:\n        sys.exit(code)\n",
        encoding="utf-8",
    )
    launch = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(script)]
    finished = subprocess.run(launch, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert finished.returncode == 0, finished.stderr[-3000:]
    for name, output in outputs.items():
        assert finished.stderr.count(f"wrote {output}\n") == 1, name  # rank 0 alone writes
        assert_same(numbers(json.loads(output.read_text())), numbers(whole_runs[name]), name)


@pytest.mark.slow
def test_each_head_ablation_survives_sigkill_and_resumes_to_the_same_numbers(tmp_path, capsys):
    options = ["ablate", "--quiet", "--model", tiny_bert(), "--treebank", str(sample_path()), "--batch-size", "1",
               "--each-head", "--metric", "probe", "--relations", "det", "all", "--bootstrap", "20"]
    reference = tmp_path / "reference.json"
    assert main([*options, "--output", str(reference)]) == 0
    output = tmp_path / "killed.json"
    checkpoint = checkpointing.default_path(output)
    kill_once_checkpointed([*options, "--output", str(output), "--checkpoint-every", "0"], checkpoint)
    saved = checkpointing.load(checkpoint)["passes"]["0"]
    assert not saved["complete"] and 0 < saved["consumed"] < 75
    capsys.readouterr()
    assert main([*options, "--output", str(output), "--checkpoint-every", "0", "--resume"]) == 0
    assert "resuming from" in capsys.readouterr().err
    resumed, whole = json.loads(output.read_text()), json.loads(reference.read_text())
    assert resumed["conditions"] == whole["conditions"] and resumed["baseline"] == whole["baseline"]
    assert not checkpoint.exists()


def test_figures_can_be_vector_graphics(tmp_path):
    output = tmp_path / "surface.json"
    for fmt, magic in (("svg", b"<?xml"), ("pdf", b"%PDF")):
        assert main(["surface", "--quiet", "--model", tiny_bert(), "--limit", "4", "--figure-format", fmt,
                     "--output", str(output)]) == 0
        assert (tmp_path / f"surface-surface.{fmt}").read_bytes().startswith(magic)
    assert np.isfinite(json.loads(output.read_text())["surface"]["layer_means"]["entropy"]).all()


@pytest.mark.slow
def test_importing_probing_never_switches_the_matplotlib_backend():
    code = ("import matplotlib; before = matplotlib.get_backend(); import probing.analyses.probe.plots, probing.report.drawing, "
            "probing.report.figures, probing.analyses.patterns.accumulator, probing.analyses.compare.accumulator; "
            "assert 'matplotlib.pyplot' not in __import__('sys').modules; assert matplotlib.get_backend() == before")
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "MPLBACKEND": "svg"})


def test_results_of_different_attention_readings_never_merge(tmp_path, capsys):
    parts = []
    for index, reading in enumerate(("weights", "norms")):
        part = tmp_path / f"part{index}.json"
        assert main(["surface", "--quiet", "--model", tiny_bert(), *LIMIT, "--attention", reading,
                     "--shard", f"{index}/2", "--output", str(part)]) == 0
        parts.append(str(part))
    capsys.readouterr()
    assert main(["merge", *parts, "--output", str(tmp_path / "merged.json")]) == 2
    assert "config.attention is 'weights'" in capsys.readouterr().err
    assert not (tmp_path / "merged.json").exists()


def test_rollout_results_have_one_map_per_layer(tmp_path):
    output = tmp_path / "rollout.json"
    assert main(["score", "--quiet", "--model", tiny_bert(), "--limit", "6", "--attention", "rollout",
                 "--bootstrap", "10", "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    grid = result["relations"]["all"]["heads"]["dep_to_head"]
    assert result["config"]["attention"] == "rollout" and len(grid) == 2 and all(len(row) == 1 for row in grid)


def test_max_pooling_is_refused_under_norms(capsys):
    assert main(["score", "--quiet", "--model", tiny_bert(), "--attention", "norms", "--pool-from", "max"]) == 2
    assert "--pool-from: max pooling renormalises" in capsys.readouterr().err
