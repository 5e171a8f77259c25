"""Structural checks on the project's own sample treebank, data/sample.conllu.

The file is hand-written, so these tests guard the properties the probe relies
on: well-formed trees, enough instances of each probed relation, and the UD edge
cases (multiword tokens, empty nodes) that a reader has to skip correctly.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import conllu
import pytest

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.conllu"

# sent_id prefixes used by UD_English-EWT and UD_English-GUM; the sample must
# not reuse them, since none of its sentences come from those corpora.
UD_CORPUS_PREFIXES = ("weblog", "email", "answers", "reviews", "newsgroup", "GUM_")

MIN_SENTENCES = 60
MIN_RELATION_COUNT = 25


def _is_word(token) -> bool:
    return isinstance(token["id"], int)


def _is_range(token) -> bool:
    return isinstance(token["id"], tuple) and token["id"][1] == "-"


def _is_empty_node(token) -> bool:
    return isinstance(token["id"], tuple) and token["id"][1] == "."


@pytest.fixture(scope="module")
def sentences():
    assert SAMPLE.is_file(), f"missing sample treebank: {SAMPLE}"
    with SAMPLE.open(encoding="utf-8") as handle:
        return list(conllu.parse_incr(handle))


def _sid(sentence) -> str:
    return sentence.metadata.get("sent_id", "<no sent_id>")


def test_enough_sentences(sentences):
    assert len(sentences) >= MIN_SENTENCES


def test_metadata_present_and_sent_ids_unique(sentences):
    ids = []
    for sentence in sentences:
        assert sentence.metadata.get("sent_id"), "sentence without # sent_id"
        assert sentence.metadata.get("text"), f"{_sid(sentence)}: no # text"
        ids.append(sentence.metadata["sent_id"])
    duplicates = [sid for sid, n in Counter(ids).items() if n > 1]
    assert not duplicates, f"duplicate sent_ids: {duplicates}"


def test_no_ud_corpus_sent_ids(sentences):
    offending = [
        _sid(s) for s in sentences if _sid(s).startswith(UD_CORPUS_PREFIXES)
    ]
    assert not offending, f"sent_ids with UD corpus prefixes: {offending}"


def test_ids_consecutive(sentences):
    for sentence in sentences:
        ids = [t["id"] for t in sentence if _is_word(t)]
        assert ids == list(range(1, len(ids) + 1)), f"{_sid(sentence)}: IDs {ids}"


def test_exactly_one_root(sentences):
    for sentence in sentences:
        words = [t for t in sentence if _is_word(t)]
        roots = [t for t in words if t["head"] == 0]
        assert len(roots) == 1, f"{_sid(sentence)}: {len(roots)} words with HEAD 0"
        assert roots[0]["deprel"] == "root", f"{_sid(sentence)}: HEAD 0 not 'root'"
        others = [t["form"] for t in words if t["deprel"] == "root" and t["head"] != 0]
        assert not others, f"{_sid(sentence)}: deprel root with HEAD != 0: {others}"


def test_heads_in_range(sentences):
    for sentence in sentences:
        words = [t for t in sentence if _is_word(t)]
        n = len(words)
        for t in words:
            assert isinstance(t["head"], int), f"{_sid(sentence)}: HEAD {t['head']!r}"
            assert 0 <= t["head"] <= n, f"{_sid(sentence)}: HEAD {t['head']} > {n}"
            assert t["head"] != t["id"], f"{_sid(sentence)}: word {t['id']} heads itself"


def test_no_cycles(sentences):
    for sentence in sentences:
        words = [t for t in sentence if _is_word(t)]
        head_of = {t["id"]: t["head"] for t in words}
        n = len(words)
        for start in head_of:
            node, steps = start, 0
            while node != 0 and steps <= n:
                node = head_of[node]
                steps += 1
            assert node == 0, f"{_sid(sentence)}: word {start} never reaches the root"


def test_text_matches_tokens(sentences):
    """# text is the surface tokens joined, honouring SpaceAfter=No."""
    for sentence in sentences:
        pieces, covered_until = [], 0
        for t in sentence:
            if _is_empty_node(t):
                continue
            if _is_range(t):
                covered_until = t["id"][2]
            elif t["id"] <= covered_until:
                continue
            misc = t["misc"] or {}
            pieces.append(t["form"] + ("" if misc.get("SpaceAfter") == "No" else " "))
        rebuilt = "".join(pieces).rstrip(" ")
        assert rebuilt == sentence.metadata["text"], _sid(sentence)


def _relation_counts(sentences) -> Counter:
    counts = Counter()
    for sentence in sentences:
        for t in sentence:
            if not _is_word(t):
                continue
            deprel = t["deprel"]
            base = deprel.split(":")[0]
            if base == "obj":
                counts["obj"] += 1
            if deprel == "det":
                counts["det"] += 1
            if deprel == "nmod:poss":
                counts["nmod:poss"] += 1
            if base == "case" and t["upos"] == "ADP":
                counts["case+ADP"] += 1
    return counts


@pytest.mark.parametrize("relation", ["obj", "det", "nmod:poss", "case+ADP"])
def test_relation_counts(sentences, relation):
    counts = _relation_counts(sentences)
    assert counts[relation] >= MIN_RELATION_COUNT, dict(counts)


def test_possessive_clitics(sentences):
    """'s is a separate PART/case word right after the possessor it attaches to."""
    clitics = 0
    for sentence in sentences:
        by_id = {t["id"]: t for t in sentence if _is_word(t)}
        for t in by_id.values():
            if t["form"] == "'s" and t["upos"] == "PART":
                clitics += 1
                assert t["deprel"] == "case", _sid(sentence)
                assert t["head"] == t["id"] - 1, _sid(sentence)
                assert by_id[t["head"]]["deprel"] == "nmod:poss", _sid(sentence)
    assert clitics >= 8


def test_multiword_tokens_and_empty_nodes(sentences):
    ranges = [t for s in sentences for t in s if _is_range(t)]
    empties = [t for s in sentences for t in s if _is_empty_node(t)]
    assert ranges, "no multiword token range lines"
    assert empties, "no empty nodes"
    for t in empties:
        assert t["deps"], f"empty node {t['id']} without enhanced DEPS"
