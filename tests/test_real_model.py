"""all-MiniLM-L6-v2 (a real pretrained BERT) on a slice of en_ewt dev."""

from __future__ import annotations

import itertools

import pytest

from probing.analyses.probe.api import score
from probing.data.relations import DEFAULT_RELATIONS, relation_pairs
from probing.data.treebank import read_treebank

SENTENCES = 300


pytestmark = pytest.mark.real_data


@pytest.fixture(scope="module")
def result(minilm, ewt_dev):
    return score(model=minilm, treebank=str(ewt_dev), limit=SENTENCES, bootstrap=0)


def test_counts_are_consistent_with_the_treebank(result, ewt_dev):
    sentences = list(itertools.islice(read_treebank(ewt_dev), SENTENCES))
    assert result["treebank"]["sentences_scored"] + result["treebank"]["skipped"]["too_long"] == SENTENCES
    assert result["treebank"]["skipped"]["too_long"] == 0  # en_ewt dev's longest sentence needs 90 tokens
    assert (result["model"]["num_layers"], result["model"]["num_heads"]) == (6, 12)
    for name in DEFAULT_RELATIONS:
        entry = result["relations"][name]
        assert entry["total"] == sum(len(relation_pairs(name, s)) for s in sentences)
        for grid in entry["heads"].values():
            assert all(0 <= count <= entry["total"] for row in grid for count in row)
        assert all(0 <= count <= entry["total"] for count in entry["baselines"].values())


def test_best_det_head_clearly_beats_the_best_offset(result):
    det = result["relations"]["det"]
    assert det["total"] > 150
    assert det["best"]["accuracy"] >= det["best_baseline"]["accuracy"] + 0.10
