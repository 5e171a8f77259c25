"""probing pairs: what a sentence is scored after (--context), and a long run split into parts (--shard).

The context rule is checked against a plain loop written from the rule alone; the parts of a split run,
added up by probing merge, must give the very result one run gives (the same log-probabilities, decisions,
accuracies and bootstrap intervals).
"""

from __future__ import annotations

import json
import os

import pytest
import torch
from helpers import HAND_PAIRS, tiny_model
from transformers import AutoModelForCausalLM, AutoTokenizer

from probing.analyses.pairs.scoring import sentence_log_probs
from probing.cli import main

SENTENCES = HAND_PAIRS["sentences"]  # hand-written (tests/data/hand_pairs.json)
TOLERANCE = 1e-3  # nats, as in test_pairs.py


def plain_log_prob(model, tokenizer, text: str, start: int | None) -> float:
    """log p(text) after ``start`` (no token: the first token is not scored), one sentence, a plain loop."""
    ids = ([] if start is None else [start]) + tokenizer(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        log_probs = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
    return sum(float(log_probs[position - 1, ids[position]]) for position in range(1, len(ids)))


@pytest.fixture(scope="module")
def tiny():
    path = tiny_model("llama")
    return AutoModelForCausalLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


@pytest.mark.parametrize("context", ["bos", "eos", "none"])
def test_each_context_scores_after_its_token(tiny, context):
    model, tokenizer = tiny
    start = {"bos": tokenizer.bos_token_id, "eos": tokenizer.eos_token_id, "none": None}[context]
    assert context == "none" or start is not None
    expected = [plain_log_prob(model, tokenizer, text, start) for text in SENTENCES]
    found = sentence_log_probs(model, tokenizer, SENTENCES, batch_size=3, context=context)
    assert max(abs(a - b) for a, b in zip(found, expected)) < TOLERANCE


def test_the_contexts_differ(tiny):
    """Not a vacuous option: the tiny model's scores after BOS, EOS and nothing are three different lists."""
    model, tokenizer = tiny
    runs = {context: sentence_log_probs(model, tokenizer, SENTENCES[:4], context=context)
            for context in ("bos", "eos", "none")}
    assert runs["bos"] != runs["eos"] != runs["none"] != runs["bos"]


@pytest.fixture
def blimp() -> str:
    folder = os.environ.get("PROBING_BLIMP")
    if not folder:
        pytest.skip("real data: BLiMP is not available (set PROBING_BLIMP)")
    return folder


def test_the_parts_of_a_split_run_merge_into_the_whole_run(blimp, tmp_path, capsys):
    model = tiny_model("llama")
    common = ["pairs", "--quiet", "--model", model, "--blimp", blimp, "--paradigms", "wh_island",
              "anaphor_gender_agreement", "--limit", "7", "--bootstrap", "50", "--seed", "3", "--context", "eos"]
    assert main([*common, "--output", str(tmp_path / "whole.json")]) == 0
    parts = []
    for index in range(3):
        parts.append(tmp_path / f"part{index}.json")
        assert main([*common, "--shard", f"{index}/3", "--output", str(parts[-1])]) == 0
    part = json.loads(parts[1].read_text())
    assert [entry["pairs"] for entry in part["pairs"]["paradigms"].values()] == [2, 2]  # places 1 and 4 of 7
    assert main(["merge", "--output", str(tmp_path / "merged.json"), *map(str, parts)]) == 0
    capsys.readouterr()
    whole, merged = (json.loads((tmp_path / name).read_text()) for name in ("whole.json", "merged.json"))
    assert merged["pairs"] == whole["pairs"]
    assert merged["pairs"]["context_token"] == AutoTokenizer.from_pretrained(model).eos_token
    assert merged["config"] == whole["config"] and merged["input"]["units_used"] == whole["input"]["units_used"] == 14


def test_an_incomplete_set_of_parts_is_refused(blimp, tmp_path, capsys):
    common = ["pairs", "--quiet", "--model", tiny_model("llama"), "--blimp", blimp, "--paradigms", "wh_island",
              "--limit", "4", "--bootstrap", "0"]
    assert main([*common, "--shard", "0/2", "--output", str(tmp_path / "a.json")]) == 0
    assert main(["merge", "--output", str(tmp_path / "m.json"), str(tmp_path / "a.json")]) == 2
    assert "shard 1/2 missing" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_the_board_names_the_context_and_the_paradigms_that_move():
    from probing.analyses.pairs.accuracy import accuracies
    from probing.analyses.pairs.report import leaderboard_table
    from probing.data.minimal_pairs import MinimalPair

    pairs = [MinimalPair("a", "syntax", "", "")] * 2 + [MinimalPair("b", "syntax", "", "")] * 2

    def run(token, good):
        block = {**accuracies(pairs, good, [0.0] * 4, bootstrap=0), "context_token": token}
        return {"analysis": "pairs", "model": {"name": "m", "name_or_path": "m", "architecture": "x",
                                               "fingerprint": "f"}, "config": {"limit": None}, "pairs": block}

    table = leaderboard_table([run("<s>", [1.0, 1.0, 1.0, -1.0]), run(None, [1.0, 1.0, -1.0, -1.0])])
    assert [row.treebank.rsplit(", ", 1)[-1] for row in table.rows[:2]] == ["after <s>", "after nothing"]
    moved = [note for note in table.notes if "move with the context" in note]
    assert moved == ["m, paradigms that move with the context (accuracy % after <s> / nothing): b 50.0 / 0.0"]


def test_the_paradigms_that_move_get_a_table_with_a_paired_interval_for_the_move():
    """A model scored after two contexts: the board's second table lists the paradigm that moves (not the one
    that does not), its BOS column (and row, in the first table) first whatever order the results come in, and
    the move with a paired interval, which for a paradigm whose pairs all flip together has no spread at all."""
    from probing.analyses.pairs.accuracy import accuracies
    from probing.analyses.pairs.report import leaderboard_tables
    from probing.data.minimal_pairs import MinimalPair

    pairs = [MinimalPair("a", "syntax", "", "")] * 20 + [MinimalPair("b", "syntax", "", "")] * 20

    def run(context, token, right_a):
        good = [1.0] * right_a + [-1.0] * (20 - right_a) + [1.0] * 20
        block = {**accuracies(pairs, good, [0.0] * 40, bootstrap=200, seed=1), "context_token": token}
        return {"analysis": "pairs", "model": {"name": "m", "name_or_path": "m", "architecture": "x",
                                               "fingerprint": "f"},
                "config": {"limit": None, "context": context, "bootstrap": 200, "seed": 1}, "pairs": block}

    overall, moved = leaderboard_tables([run("none", None, 5), run("bos", "<s>", 15)])
    assert moved.relations == ["after <s>", "after nothing", "move"]
    assert [row.treebank.rsplit(", ", 1)[-1] for row in overall.rows[:2]] == ["after <s>", "after nothing"]
    assert [row.treebank for row in moved.rows] == ["overall, the mean of 2 paradigms", "a, 20 pairs"]
    cells = moved.rows[1].cells
    assert (cells["after <s>"].accuracy, cells["after nothing"].accuracy) == (0.75, 0.25)
    # the 10 pairs that flip always flip together: every replicate's move is the share of them it drew
    move = cells["move"]
    assert move.accuracy == pytest.approx(0.5) and 0.2 < move.interval[0] < 0.5 < move.interval[1] < 0.8
    assert move.clearly_better and "move" not in overall.relations
    # overall: b is right after both contexts, so every replicate's overall move is half of a's, on a's own draws
    mean = moved.rows[0].cells
    assert (mean["after <s>"].accuracy, mean["after nothing"].accuracy) == (0.875, 0.625)
    assert mean["move"].accuracy == pytest.approx(0.25)
    assert mean["move"].interval == pytest.approx([bound / 2 for bound in move.interval])


def test_one_model_on_two_pair_sets_is_no_context_comparison():
    """CLAMS German and CLAMS French share their paradigms' names but not their pairs (nor their counts): runs of
    one model on both, after the same token, are two pair sets side by side, not a move with the context (which
    compared them pair by pair and indexed past the shorter one)."""
    from probing.analyses.pairs.accuracy import accuracies
    from probing.analyses.pairs.report import context_moves, leaderboard_tables
    from probing.data.minimal_pairs import MinimalPair

    def run(sha256, right, total):
        pairs = [MinimalPair("simple_agrmt", "morphology", "", "")] * total
        good = [1.0] * right + [-1.0] * (total - right)
        block = {**accuracies(pairs, good, [0.0] * total, bootstrap=50, seed=0), "context_token": "<bos>"}
        return {"analysis": "pairs", "model": {"name": "m", "name_or_path": "m", "architecture": "x",
                                               "fingerprint": "f"}, "input": {"sha256": sha256},
                "config": {"limit": None, "context": "bos", "bootstrap": 50, "seed": 0}, "pairs": block}

    german, french = run("de", 30, 30), run("fr", 5, 20)
    assert context_moves([german, french]) == []
    assert len(leaderboard_tables([german, french])) == 1  # the accuracies; no table of moves
    again = run("de", 10, 30)  # the same pairs read again (another context): that is a comparison
    assert [uid for _, moves in context_moves([german, again]) for _, uid in moves] == ["simple_agrmt"]


def test_a_context_named_as_a_token_of_the_vocabulary(tiny):
    """--context TOKEN: any one token, named as the tokenizer writes it, scores exactly as the context that gives
    the same token (here the EOS, by name); a name that is not one token is refused naming --context."""
    from probing.errors import ProbingError
    from probing.model.token_scores import context_token

    model, tokenizer = tiny
    named = tokenizer.eos_token
    assert named and context_token(tokenizer, named) == tokenizer.eos_token_id
    assert sentence_log_probs(model, tokenizer, SENTENCES, batch_size=3, context=named) == \
        sentence_log_probs(model, tokenizer, SENTENCES, batch_size=3, context="eos")
    with pytest.raises(ProbingError, match="not a token of the model's vocabulary") as refused:
        context_token(tokenizer, "<|no such token|>")
    assert refused.value.source == "--context"


@pytest.mark.parametrize("bad", ["", " eos", "a\tb"])
def test_a_context_that_cannot_be_a_token_is_refused_before_anything_loads(bad, capsys):
    assert main(["pairs", "--model", "no/such-model", "--context", bad]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "--context" in error and "Traceback" not in error


@pytest.mark.parametrize("context", ["bos", "eos", "none"])
def test_the_result_records_the_token_it_prepended(context, tmp_path):
    """``model.prepended_token`` is the token this run put before every sentence: its context (None after nothing),
    not the sink token the attention analyses prepend, which a minimal-pairs run never uses."""
    from probing.analyses.pairs.api import score_pairs

    path = tmp_path / "own.jsonl"
    path.write_text("".join(json.dumps({"sentence_good": good, "sentence_bad": bad}) + "\n"
                            for good, bad in zip(SENTENCES[0::2], SENTENCES[1::2])), encoding="utf-8")
    model = tiny_model("llama")
    tokenizer = AutoTokenizer.from_pretrained(model)
    result = score_pairs(model, pairs_file=str(path), bootstrap=0, context=context)
    expected = {"bos": tokenizer.bos_token, "eos": tokenizer.eos_token, "none": None}[context]
    assert context == "none" or expected is not None
    assert result["model"]["prepended_token"] == result["pairs"]["context_token"] == expected
