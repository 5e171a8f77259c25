"""Pair sets scored by a tiny causal LM: ``probing pairs --pair-set`` names the set, its phenomena and, for pairs made
from a treebank, what became of the subject arcs; pairs written out and read back score the same; ``ablate --metric
minimal-pairs`` takes the same choice and refuses pairs made from the sentences DEV chose heads on."""

from __future__ import annotations

import json

import pytest
from helpers import tiny_model
from test_agreement_pairs import SENTENCES, conllu
from test_pair_sets import CLAMS_LINES, write_clams

from probing.cli import main
from probing.results.io import read_result


@pytest.fixture
def hand_treebank(tmp_path):
    path = tmp_path / "hand.conllu"
    path.write_text("".join(conllu(sent_id, *rows) for sent_id, rows in SENTENCES.items()), encoding="utf-8")
    return path


def test_pairs_scores_a_named_set_and_names_it_and_its_phenomena(tmp_path, monkeypatch, capsys):
    root = tmp_path / "minimal-pairs"
    (root / "clams" / "de").mkdir(parents=True)
    write_clams(root, "\n".join(CLAMS_LINES) + "\n", monkeypatch)
    output = tmp_path / "r.json"
    assert main(["pairs", "--quiet", "--model", tiny_model("llama"), "--pair-set", "clams-de", "--minimal-pairs",
                 str(root), "--paradigms", "simple_agrmt", "--bootstrap", "0", "--output", str(output)]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert " on CLAMS German (clams-de): 2 pairs of 1 paradigms; each sentence scored after '<s>'" in header
    result = read_result(output)  # validated against the schema
    assert result["input"]["pair_set"] == "clams-de" and result["config"]["options"]["pair_set"] == "clams-de"
    assert "minimal_pairs" not in result["config"]["options"]  # a folder of this machine: never in a result
    assert result["pairs"]["paradigms"]["simple_agrmt"]["phenomenon"] == "simple_agrmt"
    assert result["pairs"]["phenomena"]["simple_agrmt"]["pairs"] == 2


def test_agreement_pairs_are_scored_with_their_counts_and_read_back_score_the_same(hand_treebank, tmp_path, capsys):
    model = tiny_model("llama")
    made, written = tmp_path / "made.json", tmp_path / "pairs.jsonl"
    assert main(["pairs", "--quiet", "--model", model, "--pair-set", f"{hand_treebank}:agreement", "--bootstrap", "0",
                 "--output", str(made)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith(f"made from {hand_treebank} (its own forms the lexicon): 24 subject arcs, ")
    result = read_result(made)
    block = result["input"]["made_from"]
    assert block["arcs"] == 24 and block["no_pair"]["in_multiword_token"] == 1 and block["repeated"] == 1
    assert result["pairs"]["overall"]["pairs"] == block["pairs"]
    assert set(result["pairs"]["phenomena"]) == {"subject-verb agreement"}
    assert main(["data", "pairs", f"{hand_treebank}:agreement", "--output", str(written)]) == 0
    back = tmp_path / "back.json"
    assert main(["pairs", "--quiet", "--model", model, "--pairs-file", str(written), "--bootstrap", "0",
                 "--output", str(back)]) == 0
    again = read_result(back)
    for uid, entry in result["pairs"]["paradigms"].items():
        assert again["pairs"]["paradigms"][uid]["log_p_good"] == entry["log_p_good"]
        assert again["pairs"]["paradigms"][uid]["log_p_bad"] == entry["log_p_bad"]


def test_a_treebank_that_gives_no_pair_is_refused_saying_why(tmp_path, capsys):
    path = tmp_path / "none.conllu"
    path.write_text(conllu("n1", *SENTENCES["s-participle"]), encoding="utf-8")
    assert main(["pairs", "--quiet", "--model", tiny_model("llama"), "--pair-set", f"{path}:agreement"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has no pair to score" in err and "no finite agreeing word 1" in err


def test_ablate_refuses_pairs_made_from_the_sentences_that_chose_the_heads(hand_treebank, capsys):
    argv = ["ablate", "--quiet", "--model", tiny_model("llama"), "--metric", "minimal-pairs", "--pair-set",
            f"{hand_treebank}:agreement", "--chosen", "nsubj", "--k", "1", "--random", "2", "--bootstrap", "10"]
    assert main([*argv, "--select-on", str(hand_treebank)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--select-on {hand_treebank}: holds the sentences that " in err
    assert "heads chosen on a sentence are never measured on pairs made from it" in err


def test_ablate_scores_a_pair_set_against_heads_chosen_elsewhere(hand_treebank, tmp_path, capsys):
    from probing.testing import sample_path

    output = tmp_path / "ablation.json"
    assert main(["ablate", "--quiet", "--model", tiny_model("llama"), "--metric", "minimal-pairs", "--pair-set",
                 f"{hand_treebank}:agreement", "--chosen", "nsubj", "--k", "1", "--random", "2", "--bootstrap", "10",
                 "--select-on", str(sample_path()), "--output", str(output)]) == 0
    assert f"minimal-pair accuracy (overall: the mean of the paradigm accuracies) on {hand_treebank}:agreement" \
           in capsys.readouterr().out
    result = json.loads(output.read_text(encoding="utf-8"))
    assert result["input"]["pair_set"] == f"{hand_treebank}:agreement"
    assert "phenomenon:subject-verb agreement" in result["metric"]["parts"]


def test_a_pair_set_is_an_input_of_the_minimal_pairs_metric_only(capsys):
    assert main(["ablate", "--quiet", "--model", tiny_model("llama"), "--metric", "lm", "--each-layer",
                 "--pair-set", "clams-de"]) == 2
    assert "--pair-set: --pair-set is an input of --metric minimal-pairs only" in capsys.readouterr().err
