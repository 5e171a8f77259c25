"""The streaming CoNLL-U reader: words only, real UD edge cases, and located errors."""

from __future__ import annotations

import pytest
from conftest import conllu_rows

from probing.data.treebank import ROOT, read_treebank
from probing.errors import ProbingError

EDGE_CASES = conllu_rows(
    "# sent_id = edge-1",
    "# text = I don't know.",
    "1 I I PRON PRP _ 4 nsubj _ _",
    "2-3 don't _ _ _ _ _ _ _ _",
    "2 do do AUX VBP _ 4 aux _ _",
    "3 n't not PART RB _ 4 advmod _ _",
    "4 know know VERB VB _ 0 root _ _",
    "4.1 knows know VERB VBZ _ _ _ 4:conj _",
    "5 . . PUNCT . _ 4 punct _ _",
) + conllu_rows(
    "1 Yes yes INTJ UH _ 0 root _ _",
)


def test_reader_keeps_syntactic_words_and_skips_ranges_and_empty_nodes(write_conllu):
    sentences = list(read_treebank(write_conllu(EDGE_CASES)))
    assert len(sentences) == 2
    first = sentences[0]
    assert first.words == ("I", "do", "n't", "know", ".")
    assert first.heads == (3, 3, 3, ROOT, 3)
    assert first.labels == ("nsubj", "aux", "advmod", "root", "punct")
    assert first.upos[2] == "PART"
    assert first.sent_id == "edge-1"
    assert [s.index for s in sentences] == [0, 1]
    assert sentences[1].words == ("Yes",)


def test_conll_x_files_are_read(write_conllu):
    conllx = conllu_rows("1 Dogs dog NNS NNS _ 2 nsubj _ _", "2 bark bark VBP VBP _ 0 ROOT _ _")
    (sentence,) = read_treebank(write_conllu(conllx, "t.conllx"))
    assert sentence.heads == (1, ROOT)


def test_reader_streams(write_conllu):
    """The reader is lazy: a later malformed sentence does not stop earlier ones."""
    text = conllu_rows("1 a a X _ _ 0 root _ _") + "1\tbroken\n\n"
    sentences = read_treebank(write_conllu(text))
    assert next(sentences).words == ("a",)
    with pytest.raises(ProbingError):
        next(sentences)


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("1\tThe\tthe\tDET\n\n", 1, "expected 10 tab-separated columns, found 4"),
        (conllu_rows("1 a a X _ _ 0 root _ _", "2 b b X _ _ one dep _ _"), 2, "HEAD is not an integer: 'one'"),
        (conllu_rows("1 a a X _ _ 0 root _ _", "2 b b X _ _ 7 dep _ _"), 2, "HEAD 7 is out of range"),
        (conllu_rows("1 a a X _ _ 2 dep _ _", "2 b b X _ _ 3 dep _ _", "3 c c X _ _ 1 dep _ _"), 1, "no root"),
        (conllu_rows("1 a a X _ _ 0 root _ _", "2 b b X _ _ 3 dep _ _", "3 c c X _ _ 2 dep _ _"), 2, "cycle"),
        (conllu_rows("1 a a X _ _ 0 root _ _", "3 b b X _ _ 1 dep _ _"), 2, "word IDs must run 1..n"),
        (conllu_rows("1 a a X _ _ 1 root _ _"), 1, "its own head"),
    ],
    ids=["columns", "head-not-int", "head-out-of-range", "no-root", "cycle", "ids", "self-head"],
)
def test_malformed_lines_name_file_and_line(write_conllu, text, line, fragment):
    # Put one good sentence first so that the reported line is not trivially 1.
    good = conllu_rows("# sent_id = ok", "1 fine fine ADJ _ _ 0 root _ _")
    path = write_conllu(good + text)
    with pytest.raises(ProbingError) as caught:
        list(read_treebank(path))
    assert f"{path}:{line + 3}:" in str(caught.value)  # the good sentence takes lines 1-3
    assert fragment in str(caught.value)


def test_empty_and_missing_files(write_conllu, tmp_path):
    with pytest.raises(ProbingError, match="holds no sentence"):
        list(read_treebank(write_conllu("# just a comment\n\n")))
    with pytest.raises(ProbingError, match="treebank file not found"):
        list(read_treebank(tmp_path / "nope.conllu"))
