"""A decoder's trees read later-to-earlier, against an independent implementation of the rule.

The rule (docs/trees.md, the causal reading): the edge between words a and b is scored by the later word's
attention to the earlier one, ``S[a][b] = S[b][a] = W[max(a, b)][min(a, b)]``, whichever of the two is the
head; ``max`` gives each word the other word with the highest S (ties: the lower index), ``mst`` is the
maximum spanning arborescence of S rooted at the gold root. Scored words: all but the gold root and
punctuation; sentences without exactly one root are skipped. The reference below is written from that rule
alone: transformers' own eager attention one sentence at a time, pooled to words with plain loops (from
tests/test_causal_direction.py), the plain recursive Chu-Liu-Edmonds of tests/trees_reference.py, and
nested loops for everything else.
"""

from __future__ import annotations

import itertools
import json

import pytest
import torch
from helpers import tiny_model
from test_causal_direction import word_attention
from transformers import AutoModelForCausalLM
from trees_reference import reference_mst

from probing.cli import main
from probing.data.treebank import ROOT, read_treebank
from probing.model.alignment import SPECIAL, align_words
from probing.model.loading import load_model
from probing.testing import sample_path, sample_split

QUICK = ("--bootstrap", "20", "--no-probes", "--batch-size", "5", "--quiet")
LIMIT = 12


def causal_edge_scores(W: list[list[float]]) -> list[list[float]]:
    n = len(W)
    return [[0.0 if a == b else W[max(a, b)][min(a, b)] for b in range(n)] for a in range(n)]


def best_other(row: list[float], word: int) -> int:
    best = None
    for j in range(len(row)):
        if j != word and (best is None or row[j] > row[best]):
            best = j
    return best


def uas_uuas(predicted: list[int], sentence) -> tuple[int, int]:
    directed = undirected = 0
    for word, (head, upos) in enumerate(zip(sentence.heads, sentence.upos)):
        if head == ROOT or upos == "PUNCT":
            continue
        directed += int(predicted[word] == head)
        undirected += int(predicted[word] == head or predicted[head] == word)
    return directed, undirected


def word_attention_of_sentences(path: str, treebank, limit: int | None):
    """(sentence, W[layer][head] as nested lists) of each sentence with exactly one root, in file order."""
    loaded = load_model(path)
    model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager").eval()
    layers, heads = model.config.num_hidden_layers, model.config.num_attention_heads
    for sentence in itertools.islice(read_treebank(treebank), limit):
        if sum(1 for head in sentence.heads if head == ROOT) != 1:
            continue
        aligned = align_words(loaded.tokenizer, [sentence.words], prepend=loaded.prepend_token_id,
                              spaces=[sentence.space_after])[0]
        with torch.no_grad():
            output = model(input_ids=torch.tensor([aligned.input_ids]), output_attentions=True)
        owners = [owner if owner != SPECIAL else -1 for owner in aligned.word_of_token]
        n = len(sentence.words)
        yield sentence, [[word_attention(output.attentions[layer][0, head].double().tolist(), owners, n)
                          for head in range(heads)] for layer in range(layers)]


def scored_words(sentence) -> int:
    return sum(1 for head, upos in zip(sentence.heads, sentence.upos) if head != ROOT and upos != "PUNCT")


def reference_causal_counts(path: str, treebank, limit: int) -> dict:
    """{decoding: {metric: [layer][head]}} and the scored words, by the rule, one sentence at a time."""
    counts, words, head_first = None, 0, 0
    for sentence, grids in word_attention_of_sentences(path, treebank, limit):
        if counts is None:
            counts = {d: {m: [[0] * len(grids[0]) for _ in grids] for m in ("uas", "uuas")} for d in ("max", "mst")}
        words += scored_words(sentence)
        head_first += sum(1 for word, (head, upos) in enumerate(zip(sentence.heads, sentence.upos))
                          if head != ROOT and upos != "PUNCT" and head < word)
        root = sentence.heads.index(ROOT)
        for layer, row in enumerate(grids):
            for head, W in enumerate(row):
                S = causal_edge_scores(W)
                predicted = {"max": [best_other(S[word], word) if len(S) > 1 else -1 for word in range(len(S))],
                             "mst": reference_mst(S, root)}
                for decoding, heads_of in predicted.items():
                    directed, undirected = uas_uuas(heads_of, sentence)
                    counts[decoding]["uas"][layer][head] += directed
                    counts[decoding]["uuas"][layer][head] += undirected
    return {"counts": counts, "words": words, "head_first": head_first}


def mean_attention(grids, members) -> list[list[float]]:
    n = len(grids[0][0])
    return [[sum(grids[m["layer"]][m["head"]][i][j] for m in members) / len(members) for j in range(n)]
            for i in range(n)]


def reference_causal_ensembles(path: str, treebank, ensembles: list[dict], limit: int | None = None) -> dict:
    """Each causal ensemble's correct pairs (its later word's strongest earlier word of the members' mean
    attention is the earlier word) and the UAS/UUAS of the tree of all of them: the MST of the sum of their
    causal edge scores, each weighted by its DEV accuracy."""
    from test_causal_direction import strongest_earlier

    from probing.data.relations import dependent_pairs

    correct, uas, uuas, words = [0] * len(ensembles), 0, 0, 0
    for sentence, grids in word_attention_of_sentences(path, treebank, limit):
        n = len(sentence.words)
        combined = [[0.0] * n for _ in range(n)]
        for e, ensemble in enumerate(ensembles):
            mean = mean_attention(grids, ensemble["members"])
            S = causal_edge_scores(mean)
            weight = ensemble["correct"] / ensemble["total"]
            combined = [[combined[a][b] + weight * S[a][b] for b in range(n)] for a in range(n)]
            for dependent, head in dependent_pairs(ensemble["relation"], sentence):
                if head >= 0:
                    later, earlier = max(dependent, head), min(dependent, head)
                    correct[e] += int(strongest_earlier(mean[later], later) == earlier)
        directed, undirected = uas_uuas(reference_mst(combined, sentence.heads.index(ROOT)), sentence)
        uas, uuas, words = uas + directed, uuas + undirected, words + scored_words(sentence)
    return {"correct": correct, "uas": uas, "uuas": uuas, "words": words}


def run_trees(tmp_path, name: str, *options: str) -> dict:
    output = tmp_path / f"{name}.json"
    assert main(["trees", *QUICK, *options, "--output", str(output)]) == 0
    return json.loads(output.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def llama() -> str:
    return tiny_model("llama")


def test_a_decoders_causal_tree_counts_equal_the_reference(llama, tmp_path, capsys):
    result = run_trees(tmp_path, "in-sample", "--model", llama, "--treebank", str(sample_path()),
                       "--limit", str(LIMIT))
    capsys.readouterr()
    expected = reference_causal_counts(llama, sample_path(), LIMIT)
    causal = result["trees"]["causal"]
    assert result["trees"]["words"] == expected["words"]
    assert causal["head_first"] == expected["head_first"] > 0
    assert any(count for grid in expected["counts"]["mst"].values() for row in grid for count in row)
    for decoding in ("max", "mst"):
        for metric in ("uas", "uuas"):
            assert causal[decoding][metric] == expected["counts"][decoding][metric], (decoding, metric)
        # the in-sample best follows the one tie rule: most words, then the lower layer and head
        grid = causal[decoding]["uas"]
        best = causal[decoding]["best_uas"]
        top = max(count for row in grid for count in row)
        first = next((layer, head) for layer, row in enumerate(grid) for head, count in enumerate(row) if count == top)
        assert (best["layer"], best["head"], best["direction"], best["correct"]) == (*first, "causal", top)


def test_the_causal_reading_is_chosen_on_dev_and_reported_on_test(llama, tmp_path, capsys):
    dev, test = sample_split()
    in_sample = run_trees(tmp_path, "dev", "--model", llama, "--treebank", dev)
    heldout = run_trees(tmp_path, "heldout", "--model", llama, "--select-on", dev, "--treebank", test)
    reused = run_trees(tmp_path, "reused", "--model", llama, "--select-on", str(tmp_path / "dev.json"),
                       "--treebank", test)
    text = capsys.readouterr().out
    assert "later->earlier" in text and "head before its word" in text
    words = heldout["trees"]["words"]
    for decoding in ("max", "mst"):
        for metric in ("uas", "uuas"):
            dev_best = in_sample["trees"]["causal"][decoding][f"best_{metric}"]
            chosen = heldout["selection"]["causal_best_heads"][decoding][metric]
            reported = heldout["heldout"]["causal_best_heads"][decoding][metric]
            assert (chosen["layer"], chosen["head"], chosen["correct"]) == (
                dev_best["layer"], dev_best["head"], dev_best["correct"])
            assert (reported["layer"], reported["head"], reported["direction"]) == (
                chosen["layer"], chosen["head"], "causal")
            # TEST's own count of the head DEV chose, not TEST's best
            assert reported["correct"] == heldout["trees"]["causal"][decoding][metric][chosen["layer"]][chosen["head"]]
            assert reported["accuracy"] == reported["correct"] / words
            low, high = reported["interval"]
            assert low <= reported["accuracy"] <= high
    assert reused["heldout"]["causal_best_heads"] == heldout["heldout"]["causal_best_heads"]
    # without a bootstrap the same choices are reported, with no interval
    plain = run_trees(tmp_path, "plain", "--model", llama, "--select-on", dev, "--treebank", test, "--bootstrap", "0")
    for decoding in ("max", "mst"):
        entry = plain["heldout"]["causal_best_heads"][decoding]["uas"]
        assert entry["correct"] == heldout["heldout"]["causal_best_heads"][decoding]["uas"]["correct"]
        assert entry["interval"] is None
    assert plain["heldout"]["causal_ensemble_trees"]["uas"]["interval"] is None
    from probing.analyses.trees.result import TreesResult

    chosen = TreesResult(heldout).chosen("mst", "uuas", causal=True)
    assert (chosen.layer, chosen.head, chosen.direction) == tuple(
        heldout["heldout"]["causal_best_heads"]["mst"]["uuas"][key] for key in ("layer", "head", "direction"))


def test_a_dev_result_without_the_causal_choice_is_refused_for_a_decoder(llama, tmp_path, capsys):
    dev, test = sample_split()
    made = run_trees(tmp_path, "dev", "--model", llama, "--treebank", dev)
    del made["selection"]["causal_best_heads"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(made), encoding="utf-8")
    capsys.readouterr()
    assert main(["trees", *QUICK, "--model", llama, "--select-on", str(old), "--treebank", test]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "causal reading" in error and "--select-on" in error


def test_a_decoders_causal_ensembles_and_their_trees_equal_the_reference(llama, tmp_path, capsys):
    dev, test = sample_split()
    result = run_trees(tmp_path, "heldout", "--model", llama, "--select-on", dev, "--treebank", test,
                       "--ensemble-size", "3", "--candidates", "6")
    capsys.readouterr()
    chosen = [e for e in result["selection"]["ensembles"] if e["direction"] == "causal"]
    assert [e["relation"] for e in chosen] == ["dobj", "det", "pobj", "poss"]  # one per relation, after the classic
    expected = reference_causal_ensembles(llama, test, chosen)
    reported = [e for e in result["trees"]["ensembles"] if e["direction"] == "causal"]
    assert [e["correct"] for e in reported] == expected["correct"]
    trees = result["trees"]["causal_ensemble_trees"]
    assert (trees["uas"], trees["uuas"], trees["words"]) == (expected["uas"], expected["uuas"], expected["words"])
    heldout = result["heldout"]["causal_ensemble_trees"]["uuas"]
    assert heldout["correct"] == expected["uuas"] and heldout["interval"][0] <= heldout["accuracy"]


def test_averaged_causal_ensembles_count_and_combine_as_the_reference():
    """Ensembles of several members (the search on a tiny random model keeps one), counted on a pass."""
    from probing.analyses.trees.accumulator import TreesAccumulator
    from probing.data.inputs import InputSource
    from probing.engine.passes import run_pass

    path = tiny_model("llama", num_layers=2, num_heads=4)
    ensembles = [
        {"relation": "det", "direction": "causal", "members": [{"layer": 0, "head": 1}, {"layer": 1, "head": 3}],
         "correct": 30, "single": {"layer": 0, "head": 1}, "single_correct": 20, "total": 40},
        {"relation": "nsubj", "direction": "causal", "members": [{"layer": 1, "head": 0}, {"layer": 0, "head": 2},
                                                                 {"layer": 1, "head": 2}],
         "correct": 10, "single": {"layer": 1, "head": 0}, "single_correct": 9, "total": 30},
        {"relation": "det", "direction": "dep_to_head", "members": [{"layer": 0, "head": 0}],  # not in the causal tree
         "correct": 39, "single": {"layer": 0, "head": 0}, "single_correct": 39, "total": 40},
    ]
    loaded = load_model(path)
    trees = TreesAccumulator(loaded.num_layers, loaded.num_heads, causal=True, evaluate=True,
                             selection={"ensembles": ensembles, "probes": {}, "digest": "planted"})
    run_pass(loaded, InputSource.treebank(str(sample_path()), limit=LIMIT), [trees])
    counted = trees.ensembles.result()
    expected = reference_causal_ensembles(path, sample_path(), ensembles[:2], limit=LIMIT)
    assert [e["heldout"]["correct"] for e in counted["ensembles"][:2]] == expected["correct"]
    found = counted["causal_trees"]
    assert (found["uas"], found["uuas"], found["words"]) == (expected["uas"], expected["uuas"], expected["words"])
    assert found["uuas"] > 0


def test_an_encoders_result_has_no_causal_reading(tmp_path, capsys):
    from probing.analyses.trees.report import LEADERBOARD_CAUSAL_NOTE, leaderboard_table
    from probing.results.schema.validation import validate
    from probing.testing import tiny_bert

    dev, test = sample_split()
    result = run_trees(tmp_path, "encoder", "--model", tiny_bert(), "--select-on", dev, "--treebank", test)
    assert "later->earlier" not in capsys.readouterr().out
    assert not result["model"]["is_causal"]
    assert "causal" not in result["trees"] and "causal_best_heads" not in result["selection"]
    assert "causal_best_heads" not in result["heldout"] and "causal_ensemble_trees" not in result["heldout"]
    assert {e["direction"] for e in result["selection"]["ensembles"]} == {"dep_to_head", "head_to_dep"}
    table = leaderboard_table([result])
    assert LEADERBOARD_CAUSAL_NOTE not in table.notes
    assert not any(row.model.endswith("(causal reading)") for row in table.rows)
    # and a causal block forged into an encoder's result is refused
    result["trees"]["causal"] = {**{d: {"uas": [[0]], "uuas": [[0]], "best_uas": None, "best_uuas": None}
                                    for d in ("max", "mst")}, "head_first": 0}
    with pytest.raises(Exception, match="not causal"):
        validate(result, source="r.json")


def test_the_leaderboard_shows_a_decoders_causal_row(llama, tmp_path, capsys):
    from probing.analyses.trees.report import LEADERBOARD_CAUSAL_NOTE, leaderboard_table

    dev, test = sample_split()
    result = run_trees(tmp_path, "heldout", "--model", llama, "--select-on", dev, "--treebank", test)
    capsys.readouterr()
    table = leaderboard_table([result])
    rows = [row for row in table.rows if row.model.endswith("(causal reading)")]
    assert len(rows) == 1 and LEADERBOARD_CAUSAL_NOTE in table.notes
    chosen = result["heldout"]["causal_best_heads"]["mst"]["uas"]
    assert rows[0].cells["MST UAS"].accuracy == chosen["accuracy"]
    assert rows[0].cells["MST UAS"].direction == "causal"


def test_a_decoders_test_shards_merge_into_the_run_that_chose_again(llama, tmp_path, capsys):
    dev, test = sample_split()
    run_trees(tmp_path, "dev", "--model", llama, "--treebank", dev)
    whole = run_trees(tmp_path, "whole", "--model", llama, "--select-on", str(tmp_path / "dev.json"), "--treebank", test)
    for index in range(2):
        run_trees(tmp_path, f"part{index}", "--model", llama, "--select-on", str(tmp_path / "dev.json"),
                  "--treebank", test, "--shard", f"{index}/2")
    merged = tmp_path / "merged.json"
    assert main(["merge", str(tmp_path / "part0.json"), str(tmp_path / "part1.json"), "--output", str(merged)]) == 0
    capsys.readouterr()
    merged = json.loads(merged.read_text(encoding="utf-8"))
    assert merged["trees"]["causal"] == whole["trees"]["causal"] and merged["state"] == whole["state"]
    assert merged["heldout"]["causal_best_heads"] == whole["heldout"]["causal_best_heads"]
    assert merged["heldout"]["causal_ensemble_trees"] == whole["heldout"]["causal_ensemble_trees"]


@pytest.mark.real_data
@pytest.mark.slow
def test_smollm2_causal_tree_counts_on_en_ewt_dev_equal_the_reference(tmp_path, capsys):
    from conftest import real_model, real_treebank

    path, treebank = real_model("smollm2"), real_treebank("en_ewt", "dev")
    result = run_trees(tmp_path, "smollm2", "--model", path, "--treebank", str(treebank), "--limit", "8")
    capsys.readouterr()
    expected = reference_causal_counts(path, treebank, 8)
    assert result["trees"]["words"] == expected["words"]
    for decoding in ("max", "mst"):
        for metric in ("uas", "uuas"):
            assert result["trees"]["causal"][decoding][metric] == expected["counts"][decoding][metric], (decoding, metric)
