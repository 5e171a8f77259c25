"""probing coref on the engine: planted heads, counts, bootstrap, shards, torchrun, resume, held-out
selection, the result schema and the leaderboard rows."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from coref_data import coref_treebank_path
from helpers import _row_targets, kill_once_checkpointed

from probing.analyses.coref.accumulator import CorefAccumulator
from probing.analyses.coref.antecedents import scored_mentions
from probing.analyses.coref.report import TYPE_AXIS
from probing.cli import main
from probing.data.inputs import InputSource
from probing.data.windows import Window, WindowMention
from probing.engine import checkpointing
from probing.engine.batching import encode_units, window_rule
from probing.engine.options import PassOptions
from probing.engine.passes import run_pass
from probing.errors import ProbingError
from probing.model.interventions import attention_override
from probing.model.loading import load_model
from probing.results.io import read_result
from probing.results.schema.arrays import encode_array
from probing.stats.bootstrap import poisson_weights
from probing.testing import tiny_bert

WINDOW = 40
"""Tokens per window under the tiny WordPiece vocabulary: two or three sample sentences."""


# --- counting, on made-up predictions ----------------------------------------------------------

def mention(entity, head, kind="nominal", text="w"):
    return WindowMention(entity, head, kind, text, text, "_")


def test_a_head_is_right_on_any_antecedent_and_counts_go_to_all_and_the_type():
    window = Window(0, tuple("abcdef"), mentions=(mention("1", 0), mention("2", 1), mention("1", 2),
                                                  mention("1", 4, "pronoun", "it")))
    # [batch, direction, layer, head, word]: layer 0 head 0 predicts word 0 everywhere, head 1 word 2,
    # layer 1 head 0 word 1; head_to_dep predicts word 5 everywhere
    predictions = torch.zeros((1, 2, 2, 2, 6), dtype=torch.long)
    predictions[0, 0, 0, 1] = 2
    predictions[0, 0, 1, :] = 1
    predictions[0, 1] = 5
    accumulator = CorefAccumulator(2, 2, window=WINDOW)
    accumulator.add([window], predictions)
    coref = accumulator.result()["coref"]
    # scored: word 2 (nominal, antecedent 0) and word 4 (pronoun, antecedents 0 and 2)
    assert coref["scored"] == {"all": 2, "pronoun": 1, "proper": 0, "nominal": 1}
    assert coref["mentions"] == {"all": 4, "pronoun": 1, "proper": 0, "nominal": 3}
    assert coref["heads"]["all"]["dep_to_head"] == [[2, 1], [0, 0]]  # word 2 is no antecedent of itself
    assert coref["heads"]["pronoun"]["dep_to_head"] == [[1, 1], [0, 0]]
    assert coref["heads"]["nominal"]["dep_to_head"] == [[1, 0], [0, 0]]
    assert coref["heads"]["all"]["head_to_dep"] == [[0, 0], [0, 0]]
    # baselines: word 2's nearest is word 1 (wrong); word 4's nearest is word 2 (right)
    assert coref["baselines"]["all"]["nearest"] == 1 and coref["baselines"]["pronoun"]["nearest"] == 1


def test_replicates_weight_each_window_by_its_own_poisson_weights():
    windows = [Window(index, ("a", "b", "c"), mentions=(mention("1", 0), mention("1", 2, "proper")))
               for index in (3, 8, 11)]
    predictions = torch.zeros((3, 2, 1, 1, 3), dtype=torch.long)  # every word predicts word 0: right
    predictions[1] = 1  # window 8 predicts word 1: wrong
    accumulator = CorefAccumulator(1, 1, window=WINDOW, bootstrap=50, seed=7)
    accumulator.add(windows, predictions)
    weights = poisson_weights([3, 8, 11], replicates=50, seed=7).numpy()  # [replicate, window]
    state = accumulator.state_tensors
    assert np.array_equal(state["boot_scored"][:, 0].numpy(), weights.sum(1))
    assert np.array_equal(state["boot_scored"][:, 2].numpy(), weights.sum(1))
    assert np.array_equal(state["boot_heads"][:, 0, 0, 0, 0].numpy(), weights[:, 0] + weights[:, 2])
    assert np.array_equal(state["boot_baselines"][:, 2, 0].numpy(), weights.sum(1))  # nearest is word 0: right


# --- a planted head ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def loaded():
    return load_model(tiny_bert(num_layers=2, num_heads=4))


def planted_coref_attention(loaded, windows, rules):
    """Head ``h`` of every layer attends, from every piece of a scored mention's head word, to the first
    piece of the word ``rules[h]`` names: ``nearest`` (the nearest preceding mention's head word, what
    the nearest baseline predicts) or ``antecedent`` (the nearest antecedent's head word). Every other
    token attends to itself. Rows are recognised by their token ids."""
    encoded = encode_units(loaded.tokenizer, windows, prepend=loaded.prepend_token_id)
    targets = {rule: {} for rule in set(rules.values())}
    for window, item in zip(windows, encoded):
        first_piece = {}
        for token, word in enumerate(item.word_of_token):
            first_piece.setdefault(word, token)
        goal = {rule: {} for rule in targets}
        for scored in scored_mentions(window.mentions):
            goal["nearest"][scored.head] = scored.predicted[0]
            goal.setdefault("antecedent", {})[scored.head] = max(scored.antecedents)
        for rule in targets:
            targets[rule][item.input_ids] = [first_piece[goal[rule][word]] if word in goal[rule] else token
                                             for token, word in enumerate(item.word_of_token)]
    seen = {}

    def record(module, args):
        seen["ids"] = args[0]

    def attend(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        batch, heads, queries, keys = query.shape[0], query.shape[1], query.shape[2], key.shape[2]
        weights = torch.zeros(batch, heads, queries, keys, dtype=query.dtype)
        for row in range(batch):
            ids = seen["ids"][row].tolist()
            for head in range(heads):
                weights[row, head, torch.arange(queries), _row_targets(ids, targets[rules[head]])] = 1.0
        return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights

    hook = loaded.model.get_input_embeddings().register_forward_pre_hook(record)
    return hook, attention_override(loaded.model, attend, name="probing_planted_coref")


def test_a_head_planted_on_the_nearest_mention_scores_exactly_the_nearest_baseline(loaded):
    source = InputSource.documents(str(coref_treebank_path()))
    source.windows = window_rule(loaded.tokenizer, WINDOW, prepend=loaded.prepend_token_id)
    windows = list(source.units())
    rules = {0: "nearest", 1: "antecedent", 2: "nearest", 3: "antecedent"}
    hook, override = planted_coref_attention(loaded, windows, rules)
    accumulator = CorefAccumulator(loaded.num_layers, loaded.num_heads, window=WINDOW)
    try:
        with override:
            stats = run_pass(loaded, source, [accumulator], PassOptions(batch_size=4, max_length=WINDOW))
    finally:
        hook.remove()
    coref = accumulator.result()["coref"]
    assert stats.too_long > 0 and coref["scored"]["all"] > 100
    for kind in TYPE_AXIS:
        nearest, scored = coref["baselines"][kind]["nearest"], coref["scored"][kind]
        assert 0 < nearest < scored or kind == "proper", kind  # the planted head is neither trivial nor perfect
        for layer in range(loaded.num_layers):
            row = coref["heads"][kind]["dep_to_head"][layer]
            assert row == [nearest, scored, nearest, scored], (kind, layer)


# --- the command ---------------------------------------------------------------------------------

BASE = ("--quiet", "--batch-size", "4", "--window", str(WINDOW), "--bootstrap", "30")


def coref(output, *extra, treebank=None):
    return ["coref", "--model", tiny_bert(), "--treebank", str(treebank or coref_treebank_path()), *BASE, *extra,
            "--output", str(output)]


def numbers(result: dict) -> dict:
    """What a coref result measured: its payload and state, without provenance or timing."""
    return {"coref": result["coref"], "state": result["state"], "heldout": result.get("heldout")}


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    output = tmp_path_factory.mktemp("whole") / "coref.json"
    assert main(coref(output)) == 0
    return json.loads(output.read_text())


def test_the_command_prints_the_table_and_writes_a_valid_result(whole, tmp_path, capsys):
    output = tmp_path / "again.json"
    assert main(coref(output)) == 0
    printed = capsys.readouterr().out
    for kind in TYPE_AXIS:
        assert f"\n{kind:>7}" in printed
    assert "nearest" in printed and "rule-based" in printed and "in-sample" in printed
    result = read_result(output, analysis="coref")
    assert result["input"]["kind"] == "documents" and result["config"]["window"] == WINDOW
    assert result["input"]["units_used"] == result["coref"]["windows"]
    assert result["input"]["units_total"] == result["coref"]["windows"] + result["input"]["skipped"]["too_long"]
    assert numbers(result)["coref"]["scored"] == whole["coref"]["scored"]


def test_two_shards_merge_into_the_whole_run(whole, tmp_path, capsys):
    parts = []
    for index in range(2):
        part = tmp_path / f"part{index}.json"
        assert main(coref(part, "--shard", f"{index}/2")) == 0
        parts.append(str(part))
    merged = tmp_path / "merged.json"
    capsys.readouterr()
    assert main(["merge", *parts, "--output", str(merged)]) == 0
    assert "rule-based" in capsys.readouterr().out  # merge prints the coref table
    result = json.loads(merged.read_text())
    assert result["config"]["shard"] is None and len(result["merged_from"]) == 2
    assert numbers(result) == numbers(whole)
    assert result["input"]["skipped"] == whole["input"]["skipped"]


@pytest.mark.slow
def test_two_processes_under_torchrun_equal_one(whole, tmp_path):
    output = tmp_path / "two.json"
    script = tmp_path / "run.py"
    script.write_text(f"import sys\nfrom probing.cli import main\nsys.exit(main({coref(output)!r}))\n", encoding="utf-8")
    launch = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(script)]
    finished = subprocess.run(launch, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert finished.stderr.count(f"wrote {output}\n") == 1
    assert numbers(json.loads(output.read_text())) == numbers(whole)


@pytest.mark.slow
def test_a_killed_run_resumes_to_the_same_counts(whole, tmp_path, capsys):
    output = tmp_path / "killed.json"
    checkpoint = checkpointing.default_path(output)
    argv = coref(output)
    argv[argv.index("--batch-size") + 1] = "1"  # a checkpoint after every 16 windows
    kill_once_checkpointed([*argv[:-2], "--checkpoint-every", "0", "--output", str(output)], checkpoint, timeout=300)
    saved = checkpointing.load(checkpoint)["passes"]["0"]
    assert not saved["complete"] and 0 < saved["consumed"] < whole["input"]["units_total"]
    capsys.readouterr()
    assert main([*argv[:-2], "--checkpoint-every", "0", "--resume", "--output", str(output)]) == 0
    assert "resuming from" in capsys.readouterr().err
    resumed = json.loads(output.read_text())
    assert numbers(resumed)["coref"] == whole["coref"] and resumed["state"] == whole["state"]
    assert not checkpoint.exists()


# --- held-out selection ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def heldout(tmp_path_factory):
    folder = tmp_path_factory.mktemp("heldout")
    dev, test = coref_treebank_path("dev"), coref_treebank_path("test")
    dev_result, test_result = folder / "dev.json", folder / "test.json"
    assert main(coref(dev_result, "--bootstrap", "0", treebank=dev)) == 0
    assert main(coref(test_result, "--select-on", str(dev), treebank=test)) == 0
    return {"dev": json.loads(dev_result.read_text()), "test": json.loads(test_result.read_text()),
            "dev_path": dev_result, "folder": folder}


def test_the_head_is_chosen_on_dev_and_reported_on_test_by_type(heldout):
    dev, test = heldout["dev"], heldout["test"]
    chosen = test["heldout"]["dev"]
    assert {key: chosen[key] for key in ("layer", "head", "direction")} == \
        {key: dev["coref"]["best"]["all"][key] for key in ("layer", "head", "direction")}
    assert chosen["mentions"] == dev["coref"]["scored"]["all"]
    for kind in TYPE_AXIS:
        report = test["heldout"]["types"][kind]
        scored = test["coref"]["scored"][kind]
        assert report["mentions"] == scored
        if scored:
            correct = test["coref"]["heads"][kind][chosen["direction"]][chosen["layer"]][chosen["head"]]
            assert report["head"]["accuracy"] == correct / scored
            low, high = report["head"]["interval"]
            assert 0 <= low <= high <= 1
            assert report["baselines"]["nearest"]["accuracy"] == test["coref"]["baselines"][kind]["nearest"] / scored


def test_a_dev_result_file_gives_the_same_report(heldout, tmp_path, capsys):
    output = tmp_path / "from-file.json"
    assert main(coref(output, "--select-on", str(heldout["dev_path"]), treebank=coref_treebank_path("test"))) == 0
    result = json.loads(output.read_text())
    assert result["heldout"]["types"] == heldout["test"]["heldout"]["types"]
    assert result["heldout"]["select_on"]["result"] == str(heldout["dev_path"])
    assert "chosen by all-mentions accuracy on coref-dev (" in capsys.readouterr().out


def test_held_out_shards_merge_into_the_held_out_whole(heldout, tmp_path, capsys):
    parts = []
    for index in range(2):
        part = tmp_path / f"part{index}.json"
        assert main(coref(part, "--select-on", str(heldout["dev_path"]), "--shard", f"{index}/2",
                          treebank=coref_treebank_path("test"))) == 0
        parts.append(str(part))
    merged = tmp_path / "merged.json"
    assert main(["merge", *parts, "--output", str(merged)]) == 0
    result = json.loads(merged.read_text())
    assert result["heldout"]["types"] == heldout["test"]["heldout"]["types"]
    capsys.readouterr()


def test_selecting_on_the_test_file_itself_is_refused(heldout, tmp_path, capsys):
    test = coref_treebank_path("test")
    assert main(coref(tmp_path / "x.json", "--select-on", str(test), treebank=test)) == 2
    assert "in-sample selection" in capsys.readouterr().err


def test_a_dev_result_with_another_window_is_refused(heldout, tmp_path, capsys):
    argv = coref(tmp_path / "x.json", "--select-on", str(heldout["dev_path"]), treebank=coref_treebank_path("test"))
    argv[argv.index("--window") + 1] = str(WINDOW + 8)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config.window is 40 in DEV but 48 in TEST" in err


# --- user errors -----------------------------------------------------------------------------------

def test_a_window_longer_than_the_model_reads_is_one_line(tmp_path, capsys):
    assert main(coref(tmp_path / "x.json", "--window", "100000")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--window: 100000 tokens is more than the longest unit allowed (128" in err
    assert not (tmp_path / "x.json").exists()


def test_a_window_no_sentence_fits_names_window_and_what_to_do(tmp_path, capsys):
    """--window 3: every sentence is longer, so nothing is scored; the line names --window, not --max-length."""
    assert main(coref(tmp_path / "x.json", "--window", "3")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "longer than 3 tokens (--window 3)" in err, err
    assert "give a larger --window" in err and "--max-length" not in err
    assert not (tmp_path / "x.json").exists()


def test_a_treebank_without_coreference_is_one_line(tmp_path, capsys):
    from probing.testing import sample_path

    assert main(coref(tmp_path / "x.json", treebank=sample_path())) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds no coreference mention" in err


def test_malformed_brackets_stop_the_command_at_their_line(tmp_path, capsys):
    text = coref_treebank_path().read_text(encoding="utf-8").split("\n")
    line = next(number for number, row in enumerate(text) if "Entity=4)" in row)
    text[line] = text[line].replace("Entity=4)", "Entity=9)")
    broken = tmp_path / "broken.conllu"
    broken.write_text("\n".join(text), encoding="utf-8")
    assert main(coref(tmp_path / "x.json", treebank=broken)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"broken.conllu:{line + 1}: Entity '9)' closes entity 9" in err


# --- the result file -------------------------------------------------------------------------------

def test_a_count_above_its_total_is_refused_on_reading(whole, tmp_path):
    tampered = json.loads(json.dumps(whole))
    tampered["coref"]["baselines"]["pronoun"]["nearest"] = tampered["coref"]["scored"]["pronoun"] + 1
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(tampered), encoding="utf-8")
    with pytest.raises(ProbingError, match=r"coref.baselines.pronoun.nearest: \d+ correct of \d+ scored mentions"):
        read_result(path)
    tampered = json.loads(json.dumps(whole))
    tampered["state"]["heads"] = encode_array(np.zeros((4, 2, 1, 1), dtype=np.int64))
    path.write_text(json.dumps(tampered), encoding="utf-8")
    with pytest.raises(ProbingError, match=r"state.heads.shape: is \[4, 2, 1, 1\], expected \[4, 2, 2, 4\]"):
        read_result(path)


def test_the_leaderboard_table_holds_the_head_and_the_baselines_by_type(whole, heldout, tmp_path, capsys):
    from probing.report.board import build_leaderboard, cell_text
    from probing.report.renderers import render

    board = build_leaderboard([whole, heldout["test"]])
    table = next(table for table in board.tables if table.key == "coref")
    assert table.relations == list(TYPE_AXIS) and not table.mean
    models = [row for row in table.rows if row.kind == "model"]
    assert {row.selection for row in models} == {"held-out", "in-sample"}
    assert sorted(row.model for row in table.rows if row.kind == "baseline") == sorted(["nearest", "head match",
                                                                                       "rule-based"] * 2)
    held = next(row for row in models if row.selection == "held-out")
    chosen = heldout["test"]["heldout"]["types"]["all"]["head"]
    assert cell_text(held.cells["all"]).startswith(f"{100 * chosen['accuracy']:.1f} [")
    assert held.cells["all"].head == f"{chosen['layer'] + 1}-{chosen['head'] + 1}"
    for fmt in ("md", "json", "latex", "html"):
        assert "antecedent" in render(board, fmt).lower()
    assert render(board, "csv").count("\n") == 1 + len(table.rows)


def test_baselines_of_other_windows_are_named_after_the_models_that_read_them(heldout):
    import copy

    from probing.analyses.coref.report import leaderboard_table

    first = heldout["test"]
    other = copy.deepcopy(first)  # another tokenizer: the same treebank cut into other windows
    other["model"]["name"] = "other-model"
    for entry in other["heldout"]["types"].values():
        if entry["baselines"]["nearest"] is not None:
            entry["baselines"]["nearest"]["accuracy"] += 0.01  # its nearest baseline came out otherwise
    names = sorted(row.model for row in leaderboard_table([first, other]).rows if row.kind == "baseline")
    model = first["model"]["name"]
    assert names == sorted([f"nearest ({model} windows)", "nearest (other-model windows)",
                            f"head match ({model}, other-model windows)", f"rule-based ({model}, other-model windows)"])
    alone = sorted(row.model for row in leaderboard_table([first]).rows if row.kind == "baseline")
    assert alone == ["head match", "nearest", "rule-based"]
