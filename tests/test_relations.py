"""Relation pairs on hand-made sentences (spec/scoring.md section 4)."""

from __future__ import annotations

import pytest

from probing.data.relations import DEFAULT_RELATIONS, check_relation_names, relation_pairs
from probing.data.treebank import ROOT, Sentence
from probing.errors import ProbingError


def sentence(rows):
    """rows: (form, head 1-based with 0 = root, label, upos)."""
    forms, heads, labels, upos = zip(*rows)
    return Sentence(words=forms, heads=tuple(h - 1 for h in heads), labels=labels, upos=upos)


# "Maria 's brother fixed the bike in the garage ."
UD = sentence(
    [
        ("Maria", 3, "nmod:poss", "PROPN"),
        ("'s", 1, "case", "PART"),
        ("brother", 4, "nsubj", "NOUN"),
        ("fixed", 0, "root", "VERB"),
        ("the", 6, "det", "DET"),
        ("bike", 4, "obj", "NOUN"),
        ("in", 9, "case", "ADP"),
        ("the", 9, "det", "DET"),
        ("garage", 4, "obl", "NOUN"),
        ("his", 11, "nmod:poss", "PRON"),
        ("way", 4, "obl:npmod", "NOUN"),
    ]
)


def test_paper_relations_on_ud():
    assert relation_pairs("dobj", UD) == [(5, 3)]
    assert relation_pairs("det", UD) == [(4, 5), (7, 8)]
    # The clitic 's (index 1) is scored in place of its possessor; "his" has no clitic.
    assert relation_pairs("poss", UD) == [(1, 2), (9, 10)]
    # UD case arcs of an ADP are turned around: garage (8) depends on "in" (6).
    assert relation_pairs("pobj", UD) == [(8, 6)]
    assert relation_pairs("all", UD) == [(i, h) for i, h in enumerate(UD.heads) if h != ROOT]


def test_case_of_a_non_adp_is_not_pobj():
    """The possessive 's is case but PART, so it yields no pobj pair."""
    assert all(head != 1 for _, head in relation_pairs("pobj", UD))


def test_stanford_labels():
    sd = sentence(
        [
            ("John", 3, "poss", "NNP"),
            ("'s", 1, "possessive", "POS"),
            ("dog", 4, "nsubj", "NN"),
            ("ate", 0, "root", "VBD"),
            ("food", 4, "dobj", "NN"),
            ("from", 4, "prep", "IN"),
            ("bowls", 6, "pobj", "NNS"),
        ]
    )
    assert relation_pairs("dobj", sd) == [(4, 3)]
    assert relation_pairs("poss", sd) == [(1, 2)]
    assert relation_pairs("pobj", sd) == [(6, 5)]


def test_clitic_rule_needs_adjacency_form_label_and_head():
    # 's not attached to the possessor: no substitution.
    loose = sentence([("Ann", 3, "nmod:poss", "PROPN"), ("'s", 3, "case", "PART"), ("cat", 0, "root", "NOUN")])
    assert relation_pairs("poss", loose) == [(0, 2)]
    curly = sentence([("Ann", 3, "nmod:poss", "PROPN"), ("\u2019s", 1, "case", "PART"), ("cat", 0, "root", "NOUN")])
    assert relation_pairs("poss", curly) == [(1, 2)]
    plural = sentence([("kids", 3, "nmod:poss", "NOUN"), ("'", 1, "case", "PART"), ("toys", 0, "root", "NOUN")])
    assert relation_pairs("poss", plural) == [(1, 2)]
    wrong_label = sentence([("Ann", 3, "nmod:poss", "PROPN"), ("'s", 1, "dep", "PART"), ("cat", 0, "root", "NOUN")])
    assert relation_pairs("poss", wrong_label) == [(0, 2)]


def test_ud_labels_exact_with_subtype_and_by_base_without():
    s = sentence(
        [("it", 3, "nsubj:pass", "PRON"), ("was", 3, "aux:pass", "AUX"), ("made", 0, "root", "VERB"),
         ("we", 5, "nsubj", "PRON"), ("know", 3, "parataxis", "VERB")]
    )
    assert relation_pairs("nsubj", s) == [(0, 2), (3, 4)]
    assert relation_pairs("nsubj:pass", s) == [(0, 2)]
    assert relation_pairs("obj", s) == []  # matches nothing: an empty list, reported as count 0
    assert relation_pairs("root", s) == [(2, ROOT)]


def test_relation_names_are_checked():
    assert check_relation_names(list(DEFAULT_RELATIONS)) == DEFAULT_RELATIONS
    for bad in (["Dobj"], ["nsubj pass"], [], ["det", "det"]):
        with pytest.raises(ProbingError) as caught:
            check_relation_names(bad)
        assert "--relations" in str(caught.value)
    with pytest.raises(ProbingError, match="all, det, dobj, pobj, poss"):
        check_relation_names(["DOBJ"])


def test_a_batch_holds_each_sentences_pairs_and_none_across_sentences():
    """The pairs of a batch (one table of all its words) are each sentence's own, in sentence order: a possessor
    ending one sentence never takes the next sentence's first word as its clitic, whatever that word is."""
    from probing.analyses.probe.pairs import collect_pairs

    ends_in_possessor = sentence([("see", 0, "root", "VERB"), ("Ann", 1, "nmod:poss", "PROPN")])
    starts_with_clitic = sentence([("'s", 2, "case", "PART"), ("cat", 0, "root", "NOUN")])
    empty = Sentence(words=(), heads=(), labels=(), upos=())
    batch = [UD, ends_in_possessor, starts_with_clitic, empty, UD]
    relations = (*DEFAULT_RELATIONS, "case", "nmod:poss")
    pairs = collect_pairs(batch, relations)
    expected = [(row, query, head, r) for row, s in enumerate(batch) for r, name in enumerate(relations)
                for query, head in relation_pairs(name, s)]
    got = list(zip(pairs.row.tolist(), pairs.query.tolist(), pairs.target.tolist(), pairs.relation.tolist()))
    assert got == expected
    assert (1, 1, 0, relations.index("poss")) in got  # Ann is scored itself: the 's belongs to the next sentence
    assert pairs.dependent[pairs.relation == relations.index("poss")].tolist() == [0, 9, 1, 0, 9]
