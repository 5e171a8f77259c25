"""The causal direction of a decoder's heads against an independent implementation of its rule.

The rule (docs/scoring.md, the causal direction): for a pair (dependent d, head h) the later word of
the two is scored; it is right when its strongest attention among earlier words (itself excluded) is
the earlier word. Accuracy is over all the relation's pairs; ``head_first`` counts the pairs whose head
precedes the dependent. The reference below is written from that rule alone: transformers' own
``output_attentions`` of an eager model, one sentence at a time, pooled to words with plain loops
(sum of a word's piece columns, mean of its piece rows, special tokens dropped) and scored with plain
loops. Only the pieces a sentence becomes (which word each piece belongs to, and the sink token a
causal stack is given) come from the tool, since that alignment is tested on its own elsewhere.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from helpers import tiny_model
from transformers import AutoModelForCausalLM

from probing.analyses.probe.api import score
from probing.data.relations import dependent_pairs
from probing.data.treebank import read_treebank
from probing.model.alignment import SPECIAL, align_words
from probing.model.loading import load_model
from probing.testing import sample_path

RELATIONS = ("dobj", "det", "pobj", "poss", "all", "nsubj", "amod")


def word_attention(attention: list[list[float]], word_of_token: list[int], num_words: int) -> list[list[float]]:
    """W[i][j] = mean over the pieces t of word i of the sum over the pieces u of word j of A[t][u]."""
    pieces = {word: [t for t, owner in enumerate(word_of_token) if owner == word] for word in range(num_words)}
    return [[sum(sum(attention[t][u] for u in pieces[j]) for t in pieces[i]) / len(pieces[i])
             for j in range(num_words)] for i in range(num_words)]


def strongest_earlier(row: list[float], word: int) -> int | None:
    """The earlier word that ``word`` attends to most (ties: the lowest index); None for the first word."""
    best = None
    for j in range(word):
        if best is None or row[j] > row[best]:
            best = j
    return best


def reference_counts(path: str, treebank, limit: int, relations=RELATIONS):
    """{relation: (total, head_first, [layer][head] correct)} by the rule, one sentence at a time."""
    loaded = load_model(path)
    model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager").eval()
    layers, heads = model.config.num_hidden_layers, model.config.num_attention_heads
    counts = {name: [0, 0, [[0] * heads for _ in range(layers)]] for name in relations}
    for sentence in itertools.islice(read_treebank(treebank), limit):
        aligned = align_words(loaded.tokenizer, [sentence.words], prepend=loaded.prepend_token_id,
                              spaces=[sentence.space_after])[0]
        with torch.no_grad():
            output = model(input_ids=torch.tensor([aligned.input_ids]), output_attentions=True)
        owners = [owner if owner != SPECIAL else -1 for owner in aligned.word_of_token]
        for layer in range(layers):
            for head in range(heads):
                attention = output.attentions[layer][0, head].tolist()  # [query token][key token]
                W = word_attention(attention, owners, len(sentence.words))
                for name in relations:
                    for dependent, head_word in dependent_pairs(name, sentence):
                        if layer == 0 and head == 0:
                            counts[name][0] += 1
                            counts[name][1] += int(0 <= head_word < dependent)
                        if head_word < 0:
                            continue  # ROOT is never predicted
                        later, earlier = max(dependent, head_word), min(dependent, head_word)
                        counts[name][2][layer][head] += int(strongest_earlier(W[later], later) == earlier)
    return counts


def assert_equal_counts(result: dict, expected: dict) -> None:
    for name, (total, head_first, grid) in expected.items():
        entry = result["relations"][name]
        assert entry["total"] == total, name
        assert entry["causal"]["head_first"] == head_first, name
        assert entry["causal"]["heads"] == grid, name


def test_tiny_decoder_causal_counts_equal_the_reference():
    path = tiny_model("llama")
    result = score(model=path, treebank=str(sample_path()), limit=12, relations=RELATIONS, bootstrap=0, batch_size=5)
    assert result["model"]["is_causal"]
    expected = reference_counts(path, sample_path(), 12)
    assert any(count for _, _, grid in expected.values() for row in grid for count in row)  # something to check
    assert_equal_counts(result, expected)


def test_causal_direction_reaches_every_pair_the_classic_ones_split():
    """Each classic direction reaches one side only; head_first is exactly what dep->head can reach."""
    result = score(model=tiny_model("llama"), limit=12, relations=RELATIONS, bootstrap=0)
    for name, entry in result["relations"].items():
        assert entry["reachable"]["dep_to_head"] == entry["causal"]["head_first"], name
        assert entry["causal"]["best"] is None or 0 <= entry["causal"]["best"]["accuracy"] <= 1


def test_encoders_get_no_causal_direction(tmp_path):
    from probing.testing import tiny_bert

    result = score(model=tiny_bert(), limit=3, bootstrap=0)
    assert not any("causal" in entry for entry in result["relations"].values())


def test_heldout_chooses_the_causal_head_on_dev_and_reports_it_on_test():
    from probing.analyses.probe.config import ScoreConfig
    from probing.analyses.probe.heldout import score_heldout
    from probing.testing import sample_split

    dev, test = sample_split()
    config = ScoreConfig.from_fields(model=tiny_model("llama"), treebank=test, limit=20, bootstrap=30, relations=("det", "all"))
    result = score_heldout(config, dev)
    for name, entry in result["heldout"]["relations"].items():
        chosen, test_counts = entry["causal"]["heldout"], result["relations"][name]
        assert (chosen["layer"], chosen["head"]) == (entry["causal"]["dev"]["layer"], entry["causal"]["dev"]["head"])
        assert chosen["accuracy"] == test_counts["causal"]["heads"][chosen["layer"]][chosen["head"]] / test_counts["total"]
        low, high = chosen["interval"]
        assert low <= high


@pytest.mark.slow  # a real checkpoint over a whole treebank split: well over 10 s
@pytest.mark.real_data
def test_smollm2_causal_counts_on_en_ewt_dev_equal_the_reference(request):
    from conftest import real_model, real_treebank

    path, treebank = real_model("smollm2"), real_treebank("en_ewt", "dev")
    relations = ("nsubj", "obj", "det", "amod", "poss")
    result = score(model=path, treebank=str(treebank), limit=30, relations=relations, bootstrap=0)
    expected = reference_counts(path, treebank, 30, relations)
    assert_equal_counts(result, expected)


def test_leaderboard_shows_a_decoders_causal_row_and_no_encoders():
    from probing.analyses.probe.leaderboard import CAUSAL_NOTE, relation_table
    from probing.testing import tiny_bert

    decoder = score(model=tiny_model("llama"), limit=8, relations=("det", "all"), bootstrap=0)
    encoder = score(model=tiny_bert(), limit=8, relations=("det", "all"), bootstrap=0)
    table = relation_table([decoder, encoder])
    causal = [row for row in table.rows if row.model.endswith("(causal direction)")]
    assert len(causal) == 1 and CAUSAL_NOTE in table.notes
    best = decoder["relations"]["det"]["causal"]["best"]
    assert causal[0].cells["det"].accuracy == best["accuracy"] and causal[0].cells["det"].direction == "causal"
    assert CAUSAL_NOTE not in relation_table([encoder]).notes


def test_a_decoders_held_out_result_is_written_and_read_back_validated(tmp_path, capsys):
    from probing.cli import main
    from probing.results.io import read_result
    from probing.testing import sample_split

    dev, test = sample_split()
    output = tmp_path / "decoder.json"
    assert main(["score", "--quiet", "--model", tiny_model("llama"), "--treebank", test, "--select-on", dev,
                 "--bootstrap", "20", "--output", str(output)]) == 0
    capsys.readouterr()
    result = read_result(output)
    assert result["relations"]["det"]["causal"]["best"]["direction"] == "causal"
    assert result["heldout"]["relations"]["det"]["causal"]["heldout"]["direction"] == "causal"
