"""Windows: whole consecutive sentences of one document while they fit; a too-long sentence alone."""

from __future__ import annotations

import pytest
from coref_data import coref_treebank_path

from probing.data.entities import Document, Mention, read_documents
from probing.data.inputs import InputSource, Unit
from probing.data.treebank import Sentence
from probing.data.windows import WindowRule
from probing.engine.batching import batches_of_chunk, encode_units, window_rule
from probing.results.pass_statistics import BatchStats
from probing.testing import tiny_wordpiece_tokenizer


def sentence(*words: str) -> Sentence:
    return Sentence(words=words, heads=(-1,) + (0,) * (len(words) - 1), labels=("x",) * len(words),
                    upos=("NOUN",) * len(words), feats=("_",) * len(words))


def mention(entity: str, head: tuple[int, int]) -> Mention:
    return Mention(entity, None, head, head, head, "w", "w", "NOUN", "_", 1)


PLUS_TWO = WindowRule(length=8, measure=lambda words: len(words) + 2)  # [CLS] ... [SEP]


def test_sentences_are_added_while_they_fit():
    doc = Document("d", (sentence("a", "b"), sentence("c", "d", "e"), sentence("f"), sentence("g", "h")), ())
    assert [w.words for w in PLUS_TWO.windows([doc])] == [("a", "b", "c", "d", "e", "f"), ("g", "h")]


def test_a_sentence_longer_than_the_window_is_alone_and_no_window_reaches_across_it():
    long = sentence(*"abcdefg")  # 7 words + 2 specials > 8
    doc = Document("d", (sentence("x"), long, sentence("y")), ())
    windows = list(PLUS_TWO.windows([doc]))
    assert [w.words for w in windows] == [("x",), tuple("abcdefg"), ("y",)]
    assert [w.index for w in windows] == [0, 1, 2]


def test_a_sentence_that_fits_exactly_is_kept():
    assert [w.words for w in PLUS_TWO.windows([Document("d", (sentence(*"abcdef"),), ())])] == [tuple("abcdef")]


def test_windows_never_cross_documents_and_are_numbered_across_them():
    first = Document("a", (sentence("x"),), ())
    second = Document("b", (sentence("y"), sentence("z")), ())
    windows = list(PLUS_TWO.windows([first, second]))
    assert [(w.index, w.document, w.words) for w in windows] == [(0, "a", ("x",)), (1, "b", ("y", "z"))]


def test_a_window_holds_the_mentions_whose_head_word_it_holds_at_their_positions():
    sentences = (sentence("a", "b", "c", "d", "e"), sentence("f", "g"), sentence("h", "i", "j", "k", "l"))
    mentions = (mention("1", (1, 1)), mention("2", (0, 4)), mention("3", (2, 0)), mention("1", (0, 1)))
    rule = WindowRule(length=10, measure=PLUS_TWO.measure)
    first, second = rule.windows([Document("d", sentences, mentions)])
    assert first.words == tuple("abcdefg") and second.words == tuple("hijkl")
    assert [(m.entity, m.head) for m in first.mentions] == [("1", 1), ("2", 4), ("1", 6)]  # by head position
    assert [(m.entity, m.head) for m in second.mentions] == [("3", 0)]
    assert first.sentences == sentences[:2] and second.sentences == sentences[2:]


def test_windows_measured_with_a_tokenizer_fit_and_cannot_grow():
    """Every window fits its length, and the next sentence of its document would not have fitted; the
    batcher, given the window length as its maximum, skips exactly the sentences that fit nowhere."""
    tokenizer = tiny_wordpiece_tokenizer()
    length = 40
    rule = window_rule(tokenizer, length)
    documents = list(read_documents(coref_treebank_path()))
    windows = list(rule.windows(documents))
    by_document = {}
    for window in windows:
        by_document.setdefault(window.document, []).append(window)

    def size(words) -> int:
        return len(encode_units(tokenizer, [Unit(0, tuple(words))])[0])

    alone = 0
    for document in documents:
        mine = by_document[document.id]
        assert sum(len(w.sentences) for w in mine) == len(document.sentences)
        for window, following in zip(mine, mine[1:] + [None]):
            if size(window.words) > length:
                assert len(window.sentences) == 1
                alone += 1
                continue
            if following is not None and size(following.words[: len(following.sentences[0])]) <= length:
                assert size(window.words + following.sentences[0].words) > length
    assert alone > 0 and len(windows) > len(documents)
    stats = BatchStats()
    kept = [unit for batch in batches_of_chunk(windows, tokenizer, batch_size=8, max_length=length, stats=stats)
            for unit in batch.units]
    assert stats.too_long == alone and len(kept) == len(windows) - alone


def test_a_documents_source_reads_windows_once_it_has_its_rule():
    source = InputSource.documents(str(coref_treebank_path()))
    with pytest.raises(ValueError, match="window rule"):
        list(source.units())
    source.windows = PLUS_TWO
    units = list(source.units())
    assert source.kind == "documents" and source.units_total == len(units) > 19
    assert source.describe()["kind"] == "documents"
