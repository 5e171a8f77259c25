"""``probing trees`` end to end: planted attention gives known trees; shards, torchrun and --resume give the
numbers of one run; a DEV result reused for TEST equals choosing again; seeded probes rerun identically.

The sample treebank is split into a DEV part (its first 40 sentences) and a TEST part (the other 35).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import real_treebank
from helpers import planted_dependency_attention, planted_head_attention

from probing.analyses.trees.accumulator import TreesAccumulator
from probing.analyses.trees.report import leaderboard_table, tables
from probing.cli import main
from probing.data.inputs import InputSource
from probing.data.treebank import ROOT, read_treebank
from probing.engine import checkpointing
from probing.engine.passes import run_pass
from probing.errors import ProbingError
from probing.model.loading import load_model
from probing.results.schema.validation import validate
from probing.testing import sample_path, tiny_bert

QUICK = ("--bootstrap", "20", "--probe-epochs", "2", "--batch-size", "8", "--quiet")


@pytest.fixture(scope="module")
def model() -> str:
    """One tiny checkpoint for the whole module: its tokenizer is trained once, in this process."""
    return tiny_bert()


@pytest.fixture(scope="module")
def parts(tmp_path_factory) -> dict[str, Path]:
    """The sample treebank cut into DEV (first 40 sentences) and TEST (the rest)."""
    folder = tmp_path_factory.mktemp("treebanks")
    blocks = [block for block in sample_path().read_text(encoding="utf-8").split("\n\n") if block.strip()]
    assert len(blocks) == 75
    paths = {"dev": folder / "dev.conllu", "test": folder / "test.conllu"}
    paths["dev"].write_text("\n\n".join(blocks[:40]) + "\n\n", encoding="utf-8")
    paths["test"].write_text("\n\n".join(blocks[40:]) + "\n\n", encoding="utf-8")
    return paths


def trees(model: str, *options: str) -> list[str]:
    return ["trees", "--model", model, *QUICK, *options]


def read(path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def measured(result: dict) -> dict:
    """What a trees result measured: counts, held-out numbers and the choices (not when or where they were made)."""
    heldout = {key: value for key, value in (result.get("heldout") or {}).items() if key != "select_on"}
    selection = result.get("selection") or {}
    return {"trees": result["trees"], "heldout": heldout, "state": result["state"],
            "digest": selection.get("digest"), "input": result["input"]["units_used"]}


@pytest.fixture(scope="module")
def runs(model, parts, tmp_path_factory) -> dict[str, Path]:
    """A DEV run (in-sample: it holds the choices), and a held-out run that chooses on DEV itself."""
    folder = tmp_path_factory.mktemp("runs")
    outputs = {"dev": folder / "dev.json", "heldout": folder / "heldout.json"}
    assert main(trees(model, "--treebank", str(parts["dev"]), "--output", str(outputs["dev"]))) == 0
    assert main(trees(model, "--select-on", str(parts["dev"]), "--treebank", str(parts["test"]),
                      "--output", str(outputs["heldout"]))) == 0
    return outputs


# ---------------------------------------------------------------------------- planted attention


def _ending_in_punctuation(tmp_path: Path) -> Path:
    """The sample's sentences whose last word is punctuation (not scored), in a file of their own."""
    blocks = [block for block in sample_path().read_text(encoding="utf-8").split("\n\n") if block.strip()]
    kept = [block for block in blocks if block.strip().splitlines()[-1].split("\t")[3] == "PUNCT"]
    assert len(kept) >= 30
    path = tmp_path / "punct-final.conllu"
    path.write_text("\n\n".join(kept) + "\n\n", encoding="utf-8")
    return path


def test_heads_attending_to_the_gold_head_score_every_tree_right(model):
    loaded = load_model(model)
    counts = TreesAccumulator(loaded.num_layers, loaded.num_heads)
    with planted_dependency_attention(loaded, sample_path()):
        run_pass(loaded, InputSource.treebank(str(sample_path())), [counts])
    block = counts.result()["trees"]
    sentences = list(read_treebank(sample_path()))
    scored = sum(1 for s in sentences for head, upos in zip(s.heads, s.upos) if head != ROOT and upos != "PUNCT")
    assert block["words"] == scored and block["sentences"]["scored"] == len(sentences)
    for decoding in ("max", "mst"):
        for metric in ("uas", "uuas"):
            grid = np.asarray(block["decodings"][decoding][metric]["dep_to_head"])
            assert (grid == scored).all(), (decoding, metric)


def test_a_head_attending_to_the_next_word_scores_exactly_the_right_branching_baseline(model, tmp_path):
    treebank = _ending_in_punctuation(tmp_path)
    loaded = load_model(model)
    counts = TreesAccumulator(loaded.num_layers, loaded.num_heads)
    with planted_head_attention(loaded.model, {0: "next"}):
        run_pass(loaded, InputSource.treebank(str(treebank)), [counts])
    block = counts.result()["trees"]
    # counted here from the gold trees alone: scored words whose head is the next word
    right = sum(1 for s in read_treebank(treebank) for i, (head, upos) in enumerate(zip(s.heads, s.upos))
                if head != ROOT and upos != "PUNCT" and head == i + 1)
    assert block["baselines"]["right_branching"]["uas"] == right > 0
    for decoding in ("max", "mst"):
        uas = np.asarray(block["decodings"][decoding]["uas"]["dep_to_head"])
        assert (uas[:, 0] == right).all(), decoding  # head 0 of every layer
        assert (uas[:, 1:] != right).any()


# ---------------------------------------------------------------------------- results and their checks


def test_results_validate_and_hold_choices_counts_and_intervals(runs):
    dev, heldout = read(runs["dev"]), read(runs["heldout"])
    assert dev["config"]["mode"] == "in_sample" and "heldout" not in dev
    assert heldout["config"]["mode"] == "heldout"
    assert heldout["selection"]["digest"] == dev["selection"]["digest"]
    block = heldout["heldout"]
    for decoding in ("max", "mst"):
        for metric in ("uas", "uuas"):
            entry = block["best_heads"][decoding][metric]
            low, high = entry["interval"]
            assert low <= entry["accuracy"] <= high
            choice = heldout["selection"]["best_heads"][decoding][metric]
            grid = heldout["trees"]["decodings"][decoding][metric][choice["direction"]]
            assert entry["correct"] == grid[choice["layer"]][choice["head"]]
    assert {e["relation"] for e in block["ensembles"]} == {"dobj", "det", "pobj", "poss"}
    assert set(block["probes"]) == {"attn", "attn+vectors", "distances+vectors"}
    assert Path(runs["heldout"]).with_name("heldout-uas.png").stat().st_size > 0
    text = tables(heldout)
    assert "Best single head" in text and "Ensemble trees" in text and "attn+vectors" in text


def test_the_schema_refuses_a_count_above_its_total(runs):
    result = read(runs["heldout"])
    result["trees"]["decodings"]["mst"]["uas"]["dep_to_head"][0][0] = result["trees"]["words"] + 1
    with pytest.raises(ProbingError, match=r"trees\.decodings\.mst\.uas\.dep_to_head\[0\]\[0\]"):
        validate(result, source="r.json")
    result = read(runs["heldout"])
    entry = result["trees"]["baselines"]["left_branching"]
    entry["uas"] = entry["uuas"] + 1
    with pytest.raises(ProbingError, match="exceeds the UUAS count"):
        validate(result, source="r.json")


def test_leaderboard_rows(runs):
    from probing.report.board import cell_text

    table = leaderboard_table([read(runs["heldout"]), read(runs["dev"])])
    models = [row for row in table.rows if row.kind == "model"]
    assert len(models) == 2 and {row.selection for row in models} == {"held-out", "in-sample"}
    heldout = read(runs["heldout"])["heldout"]
    held = next(row for row in models if row.selection == "held-out")
    assert cell_text(held.cells["MST UAS"]).startswith(f"{100 * heldout['best_heads']['mst']['uas']['accuracy']:.1f} [")
    assert [row.model for row in table.rows if row.kind == "baseline"] and table.key == "trees"


# ---------------------------------------------------------------------------- parts of one run


def test_test_shards_on_a_dev_result_merge_into_the_run_that_chose_again(model, parts, runs, tmp_path, capsys):
    outputs = []
    for index in range(2):
        output = tmp_path / f"part{index}.json"
        assert main(trees(model, "--select-on", str(runs["dev"]), "--treebank", str(parts["test"]),
                          "--shard", f"{index}/2", "--output", str(output))) == 0
        outputs.append(str(output))
    merged = tmp_path / "merged.json"
    assert main(["merge", *outputs, "--output", str(merged)]) == 0
    assert "Ensemble trees" in capsys.readouterr().out
    assert measured(read(merged)) == measured(read(runs["heldout"]))


def test_in_sample_shards_merge_into_the_whole_counts(model, parts, runs, tmp_path, capsys):
    outputs = []
    for index in range(2):
        output = tmp_path / f"part{index}.json"
        assert main(trees(model, "--treebank", str(parts["dev"]), "--shard", f"{index}/2", "--output", str(output))) == 0
        assert read(output).get("selection") is None  # a shard chooses nothing
        outputs.append(str(output))
    merged = tmp_path / "merged.json"
    assert main(["merge", *outputs, "--output", str(merged)]) == 0
    whole, parts_merged = read(runs["dev"]), read(merged)
    assert parts_merged["trees"] == whole["trees"] and parts_merged["state"] == whole["state"]
    capsys.readouterr()
    with pytest.raises(ProbingError, match="holds no selection"):
        from probing.analyses.trees.selection import read_selection

        read_selection(str(merged))


def test_parts_with_other_choices_do_not_merge(model, parts, runs, tmp_path, capsys):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert main(trees(model, "--select-on", str(runs["dev"]), "--treebank", str(parts["test"]), "--shard", "0/2",
                      "--output", str(first))) == 0
    other = read(runs["dev"])
    other["selection"]["ensembles"][0]["members"] = [{"layer": 1, "head": 3}]
    other["selection"]["digest"] = "sha256:another"
    other_path = tmp_path / "other-dev.json"
    other_path.write_text(json.dumps(other), encoding="utf-8")
    assert main(trees(model, "--select-on", str(other_path), "--treebank", str(parts["test"]), "--shard", "1/2",
                      "--output", str(second))) == 0
    capsys.readouterr()
    assert main(["merge", str(first), str(second), "--output", str(tmp_path / "m.json")]) == 2
    # each part records its DEV (config.options.select_on: spec and sha256), so the parts differ there first,
    # and the refusal names both files and the field in one line
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "config.options.select_on" in error
    assert "a.json" in error and "b.json" in error


def test_seeded_probes_rerun_identically_and_another_seed_differs(model, parts, runs, tmp_path):
    again, reseeded = tmp_path / "again.json", tmp_path / "reseeded.json"
    assert main(trees(model, "--select-on", str(parts["dev"]), "--treebank", str(parts["test"]),
                      "--output", str(again))) == 0
    first, second = read(runs["heldout"]), read(again)
    assert second["selection"]["probes"] == first["selection"]["probes"]
    assert second["heldout"]["probes"] == first["heldout"]["probes"]
    assert main(trees(model, "--select-on", str(parts["dev"]), "--treebank", str(parts["test"]), "--seed", "1",
                      "--no-probes", "--output", str(reseeded))) == 0
    assert read(reseeded)["selection"]["probes"] == {}
    from probing.results.schema.arrays import decode_array

    seeded = {}
    for seed in (0, 1):
        output = tmp_path / f"dev-seed{seed}.json"
        assert main(trees(model, "--treebank", str(parts["dev"]), "--seed", str(seed), "--bootstrap", "0",
                          "--output", str(output))) == 0
        seeded[seed] = decode_array(read(output)["selection"]["probes"]["attn"]["parameters"]["weights"])
    assert np.array_equal(seeded[0], decode_array(first["selection"]["probes"]["attn"]["parameters"]["weights"]))
    assert not np.array_equal(seeded[0], seeded[1])


# ---------------------------------------------------------------------------- one-line errors


def test_a_dev_result_made_with_other_options_is_refused_in_one_line(model, parts, runs, capsys):
    assert main(trees(model, "--select-on", str(runs["dev"]), "--treebank", str(parts["test"]),
                      "--relations", "det")) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "options.relations" in error and "--select-on" in error
    assert main(trees(model, "--select-on", str(runs["dev"]), "--treebank", str(parts["dev"]))) == 2
    assert "in-sample selection" in capsys.readouterr().err
    assert main(trees(model, "--no-probes", "--word-vectors", str(parts["dev"]))) == 2
    assert "--word-vectors" in capsys.readouterr().err


def test_a_result_without_the_probe_weights_measures_the_same_and_cannot_be_reused(model, parts, runs, tmp_path,
                                                                                  capsys):
    from probing.analyses.trees.selection import parameters_sha256

    slim = tmp_path / "slim.json"
    assert main(trees(model, "--select-on", str(parts["dev"]), "--treebank", str(parts["test"]),
                      "--drop-probe-weights", "--output", str(slim))) == 0
    kept, dropped = read(runs["heldout"]), read(slim)
    assert measured(dropped) == measured(kept)  # same counts, held-out numbers and digest
    validate(dropped)
    assert dropped["selection"]["probes"].keys() == kept["selection"]["probes"].keys()
    for name, entry in dropped["selection"]["probes"].items():
        assert "parameters" not in entry
        assert entry["parameters_sha256"] == parameters_sha256(kept["selection"]["probes"][name]["parameters"])
        assert entry["training"] == kept["selection"]["probes"][name]["training"]
    assert slim.stat().st_size < Path(runs["heldout"]).stat().st_size
    capsys.readouterr()
    assert main(trees(model, "--select-on", str(slim), "--treebank", str(parts["dev"]))) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "--drop-probe-weights" in error and str(slim) in error
    assert main(trees(model, "--treebank", str(parts["dev"]), "--no-probes", "--drop-probe-weights")) == 2
    assert "--drop-probe-weights" in capsys.readouterr().err


def test_word_vectors_from_a_file(model, parts, tmp_path, capsys):
    words = sorted({w.lower() for s in read_treebank(parts["dev"]) for w in s.words})
    generator = np.random.default_rng(0)
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("".join(f"{w} " + " ".join(f"{x:.4f}" for x in generator.normal(size=5)) + "\n"
                               for w in words[: len(words) // 2]), encoding="utf-8")
    output = tmp_path / "dev.json"
    assert main(trees(model, "--treebank", str(parts["dev"]), "--word-vectors", str(vectors),
                      "--output", str(output))) == 0
    block = read(output)["selection"]["word_vectors"]
    assert block["source"] == "file" and block["dim"] == 5 and 0 < block["unknown"] < block["looked_up"]
    assert read(output)["selection"]["probes"]["attn+vectors"]["dim"] == 5
    capsys.readouterr()
    # TEST must read the same vectors the probes were trained with
    assert main(trees(model, "--select-on", str(output), "--treebank", str(parts["test"]))) == 2
    assert "word_vectors" in capsys.readouterr().err
    held = tmp_path / "held.json"
    assert main(trees(model, "--select-on", str(output), "--treebank", str(parts["test"]), "--word-vectors",
                      str(vectors), "--output", str(held))) == 0
    counts = read(held)["trees"]["word_vectors"]
    assert 0 < counts["unknown"] <= counts["looked_up"]


# ---------------------------------------------------------------------------- processes and faults


@pytest.mark.slow
def test_two_processes_under_torchrun_equal_one(model, parts, runs, tmp_path):
    output = tmp_path / "two.json"
    script = tmp_path / "run.py"
    argv = trees(model, "--select-on", str(parts["dev"]), "--treebank", str(parts["test"]), "--output", str(output))
    script.write_text(f"import sys\nfrom probing.cli import main\nsys.exit(main({argv!r}))\n", encoding="utf-8")
    launch = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(script)]
    finished = subprocess.run(launch, check=False, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert finished.stderr.count(f"wrote {output}\n") == 1  # rank 0 alone writes
    assert measured(read(output)) == measured(read(runs["heldout"]))


@pytest.mark.slow
def test_a_killed_run_resumes_to_the_same_numbers(model, parts, tmp_path, capsys):
    options = trees(model, "--select-on", str(parts["dev"]), "--treebank", str(parts["test"]), "--batch-size", "1",
                    "--checkpoint-every", "0")
    reference = tmp_path / "reference.json"
    assert main([*options, "--output", str(reference)]) == 0
    output = tmp_path / "killed.json"
    checkpoint = checkpointing.default_path(output)
    process = subprocess.Popen([sys.executable, "-m", "probing", *options, "--output", str(output)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    # kill it in its second pass (DEV, the ensemble candidates), or later: the first pass (every head, the
    # relations, the probes' examples) is then complete in the checkpoint, and the rest must be redone
    while True:
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline, "the second pass never reached a checkpoint"
        if checkpoint.exists():
            try:
                passes = checkpointing.load(checkpoint)["passes"]
            except ProbingError:
                passes = {}
            if "1" in passes:
                break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=60) == -signal.SIGKILL
    process.stderr.close()
    saved = checkpointing.load(checkpoint)["passes"]
    assert saved["0"]["complete"] and "1" in saved
    capsys.readouterr()
    assert main([*options, "--output", str(output), "--resume"]) == 0
    assert "resuming from" in capsys.readouterr().err
    assert measured(read(output)) == measured(read(reference))
    assert not checkpoint.exists()


def test_state_round_trips_through_a_checkpoint(model, parts, runs):
    result = read(runs["heldout"])
    rebuilt = TreesAccumulator.from_result(result)
    again = TreesAccumulator.for_result(result).load_state(
        {name: tensor.clone() for name, tensor in rebuilt.state().items()})
    assert again.result()["trees"] == result["trees"]
    assert again.result()["heldout"]["probes"] == result["heldout"]["probes"]
    assert all(tensor.dtype == torch.long for tensor in rebuilt.state().values())


@pytest.mark.slow
@pytest.mark.parametrize("progress", ["--quiet", "--progress"])
def test_stage_timings_are_progress_and_quiet_silences_them(model, tmp_path, capsys, progress):
    """What each stage took is progress (probing.engine.progress): shown unless --quiet (--no-progress)."""
    output = tmp_path / "trees.json"
    assert main(trees(model, "--treebank", str(sample_path()), "--limit", "8", "--no-probes", progress,
                      "--output", str(output))) == 0
    timings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("probing trees: ")]
    if progress == "--quiet":
        assert timings == []
    else:
        assert any(" s" in line and "every head as a tree" in line for line in timings), timings


@pytest.mark.slow
def test_tables_and_leaderboard_rows_need_no_torch():
    code = ("import sys; import probing.analyses.trees.report as report; "
            "assert 'torch' not in sys.modules, 'torch was imported'; print(report.leaderboard_table([]).key)")
    finished = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0 and finished.stdout.strip() == "trees", finished.stderr[-2000:]


@pytest.mark.real_data
@pytest.mark.slow
def test_a_real_model_has_heads_whose_trees_beat_right_branching(minilm, ewt_dev, tmp_path):
    """Htut et al. find the best heads' trees above the positional baselines, if not by much: on 300 sentences
    of en_ewt dev, all-MiniLM-L6-v2's best MST head must beat right-branching, and no head can reach 100%."""
    output = tmp_path / "ewt.json"
    assert main(["trees", "--model", minilm, "--treebank", str(ewt_dev), "--limit", "300", "--no-probes",
                 "--bootstrap", "0", "--quiet", "--output", str(output)]) == 0
    block = read(output)["trees"]
    best = block["decodings"]["mst"]["best_uas"]
    assert block["baselines"]["right_branching"]["uas"] < best["correct"] < block["words"]
    assert len(read(output)["selection"]["ensembles"]) == 8


@pytest.mark.parametrize("fmt", ["md", "csv", "json", "latex", "html"])
def test_the_leaderboard_table_renders_in_every_format(runs, fmt):
    from probing.analyses.trees.report import leaderboard_table
    from probing.report.board import Leaderboard
    from probing.report.renderers import render

    heldout = read(runs["heldout"])
    table = leaderboard_table([heldout, read(runs["dev"])])
    kinds = [(row.kind, row.selection) for row in table.rows]
    assert kinds.count(("model", "held-out")) == 1 and ("baseline", "held-out") in kinds
    model = next(row for row in table.rows if row.kind == "model" and row.selection == "held-out")
    assert model.cells["MST UAS"].accuracy == heldout["heldout"]["best_heads"]["mst"]["uas"]["accuracy"]
    text = render(Leaderboard([table]), fmt)
    accuracy = model.cells["MST UAS"].accuracy
    shown = {"json": repr(accuracy), "csv": f"{100 * accuracy:.2f}"}.get(fmt, f"{100 * accuracy:.1f}")
    assert "right-branching" in text and shown in text


@pytest.mark.real_data
def test_the_selection_names_its_treebank_as_given_not_by_a_machine_path(model, tmp_path):
    """A result names a public treebank by its name (en_ewt:dev), in the selection block too; the folder
    it was read from on the machine that made it is no part of it."""
    folder = real_treebank("en_ewt", "dev").parent
    real_treebank("en_ewt", "test")
    output = tmp_path / "held.json"
    assert main(trees(model, "--treebank", "en_ewt", "--limit", "30", "--no-probes", "--output", str(output))) == 0
    result = read(output)
    assert result["selection"]["made_on"]["path"] == "en_ewt:dev"
    assert result["heldout"]["select_on"]["made_on"]["path"] == "en_ewt:dev"
    assert str(folder) not in json.dumps(result)
