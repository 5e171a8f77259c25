"""The reader on hostile input: each rule of the format, its error and the line it names.

Every error must be a ProbingError whose ``source`` is the file and whose
``line`` is the line at fault, on one line of text. The tables give, for each
broken text, the 1-based line that is at fault (counted by hand from the text)
and a fragment of the message.
"""

from __future__ import annotations

import io
import os
import socket
import stat
import sys

import pytest

from probing.data.datasets.resolution import resolve_treebank
from probing.data.treebank import ROOT, Sentence, read_sentences, read_treebank
from probing.errors import ProbingError


def row(*columns: str) -> str:
    """One token line from its ten columns, joined by TABs (columns may hold spaces)."""
    assert len(columns) == 10
    return "\t".join(columns)


def word(i: int, form: str, head: int, *, lemma: str = "_", upos: str = "X", feats: str = "_", misc: str = "_") -> str:
    return row(str(i), form, lemma, upos, "_", feats, str(head), "root" if head == 0 else "dep", "_", misc)


def text_of(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


def read_text(tmp_path, text: str | bytes, name: str = "t.conllu") -> list[Sentence]:
    path = tmp_path / name
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return list(read_treebank(path))


def error_of(tmp_path, text: str | bytes) -> ProbingError:
    path = tmp_path / "t.conllu"
    with pytest.raises(ProbingError) as caught:
        read_text(tmp_path, text)
    error = caught.value
    assert error.source == str(path)
    assert len(str(error).splitlines()) == 1
    assert str(error).startswith(f"{path}:{error.line}: ")
    return error


# --- 1. Columns are separated by TABs only -------------------------------------------------

def test_spaces_inside_columns_are_text(tmp_path):
    """conllu split on runs of spaces; a FORM like 'New  York' must stay one column."""
    text = text_of(
        row("1", "New  York", "New  York", "PRO PN", "NN  P", "_", "2", "nsubj", "_", "Entity=(1-place)|Note=a b"),
        row("2", "sleeps", "sleep", "VERB", "VBZ", "_", "0", "root", "_", "_"),
        "",
    )
    (sentence,) = read_text(tmp_path, text)
    assert sentence.words == ("New  York", "sleeps")
    assert sentence.upos == ("PRO PN", "VERB")
    assert sentence.heads == (1, ROOT)
    assert sentence.misc[0] == "Entity=(1-place)|Note=a b"


@pytest.mark.parametrize(
    "line, fragment",
    [
        ("1 a a X _ _ 0 root _ _", "expected 10 tab-separated columns, found 1"),  # spaces only
        ("1\ta  a\tX\t_\t_\t0\troot\t_\t_", "found 9"),  # 2+ spaces are not a separator
        (row("1", "a", "a", "X", "_", "_", "0", "root", "_", "_") + "\t", "found 11"),
        (row("1", "", "a", "X", "_", "_", "0", "root", "_", "_"), "column FORM is empty"),
        (row("1", " a", "a", "X", "_", "_", "0", "root", "_", "_"), "column FORM begins or ends with whitespace"),
        (row("1", "a", "a", "X ", "_", "_", "0", "root", "_", "_"), "column UPOS begins or ends"),
        (row("1", "a", "a", "X", "_", "_", "0", "root", "_", "_\u00a0"), "column MISC begins or ends"),
        (row(" 1", "a", "a", "X", "_", "_", "0", "root", "_", "_"), "column ID begins or ends"),
        (row("1", "a", "a", "X", "_", "_", "0 ", "root", "_", "_"), "column HEAD begins or ends"),
    ],
    ids=["spaces", "double-space", "trailing-tab", "empty-form", "form-space", "upos-space", "misc-nbsp", "id-space", "head-space"],
)
def test_column_errors_name_the_line(tmp_path, line, fragment):
    text = text_of("# sent_id = 1", line, "")
    error = error_of(tmp_path, text)
    assert error.line == 2
    assert fragment in str(error)


# --- 2. Word IDs run 1..n; duplicates are blamed on the duplicate ---------------------------

@pytest.mark.parametrize(
    "ids_and_heads, line, fragment",
    [
        # 1,2,2,3: accepted silently before
        ([("1", "0"), ("2", "1"), ("2", "1"), ("3", "1")], 4, "duplicate word ID 2; it is already on line 3"),
        # 1,2,3,3 with a HEAD out of range: was an IndexError
        ([("1", "0"), ("2", "1"), ("3", "1"), ("3", "9")], 5, "duplicate word ID 3; it is already on line 4"),
        # 1,1,2: was blamed on the wrong line
        ([("1", "0"), ("1", "1"), ("2", "1")], 3, "duplicate word ID 1; it is already on line 2"),
        ([("1", "0"), ("3", "1")], 3, "found '3' where 2 was expected"),
        ([("2", "0"), ("1", "2")], 2, "found '2' where 1 was expected"),
        ([("1", "0"), ("x", "1")], 3, "ID is not an integer, range or empty node: 'x'"),
        ([("1", "0"), ("02", "1")], 3, "(no leading zeros)"),
        ([("1", "0"), ("9" * 5000, "1")], 3, "where 2 was expected"),  # int() refuses 5000 digits
    ],
    ids=["1223", "1233-bad-head", "112", "gap", "starts-at-2", "not-int", "leading-zero", "huge"],
)
def test_word_ids(tmp_path, ids_and_heads, line, fragment):
    rows = [row(i, "w", "w", "X", "_", "_", h, "dep", "_", "_") for i, h in ids_and_heads]
    error = error_of(tmp_path, text_of("# sent_id = ids", *rows, ""))
    assert error.line == line
    assert fragment in str(error)


# --- 3. Exactly one root ---------------------------------------------------------------------

def test_second_root_is_blamed_on_its_line(tmp_path):
    text = text_of("# sent_id = r", word(1, "a", 0), word(2, "b", 1), word(3, "c", 0), "")
    error = error_of(tmp_path, text)
    assert error.line == 4
    assert "a second root (HEAD 0); the first is on line 2" in str(error)


def test_no_root_is_blamed_on_the_first_word_line_not_the_comment(tmp_path):
    text = text_of(word(1, "ok", 0), "", "# sent_id = r", "# text = a b", word(1, "a", 2), word(2, "b", 1), "")
    error = error_of(tmp_path, text)
    assert error.line == 5  # block starts on line 3; its first word is on line 5
    assert "no root" in str(error)


@pytest.mark.parametrize(
    "rows, line, fragment",
    [
        ([word(1, "a", 0), word(2, "b", "one")], 2, "HEAD is not an integer: 'one'"),
        ([word(1, "a", 0), word(2, "b", "01")], 2, "HEAD is not an integer: '01' (no leading zeros)"),
        ([word(1, "a", 0), word(2, "b", "-1")], 2, "HEAD is not an integer: '-1'"),
        ([word(1, "a", 0), word(2, "b", "\u0661")], 2, "HEAD is not an integer"),  # an Arabic-Indic digit one
        ([word(1, "a", 0), word(2, "b", 3)], 2, "HEAD 3 is out of range for a sentence of 2 words"),
        ([word(1, "a", 0), word(2, "b", "9" * 5000)], 2, "is out of range"),
        ([word(1, "a", 0), word(2, "b", 2)], 2, "word 2 is its own head"),
        ([word(1, "a", 0), word(2, "b", 3), word(3, "c", 2)], 2, "cycle through word 2"),
    ],
    ids=["not-int", "leading-zero", "negative", "non-ascii-digit", "out-of-range", "huge", "self", "cycle"],
)
def test_heads(tmp_path, rows, line, fragment):
    error = error_of(tmp_path, text_of(*rows, ""))
    assert error.line == line
    assert fragment in str(error)


# --- 4. Multiword ranges and empty nodes --------------------------------------------------------

def test_valid_ranges_and_empty_nodes_are_skipped(tmp_path):
    text = text_of(
        row("1-2", "don't", "_", "_", "_", "_", "_", "_", "_", "_"),
        word(1, "do", 3),
        word(2, "n't", 3),
        row("2.1", "x", "x", "X", "_", "_", "_", "_", "1:dep", "_"),
        word(3, "go", 0),
        row("3.1", "y", "y", "X", "_", "_", "_", "_", "3:dep", "_"),
        row("3.2", "z", "z", "X", "_", "_", "_", "_", "3:dep", "_"),
        "",
    )
    (sentence,) = read_text(tmp_path, text)
    assert sentence.words == ("do", "n't", "go")
    assert sentence.word_lines == (2, 3, 5)


def test_an_empty_node_may_precede_the_first_word(tmp_path):
    (sentence,) = read_text(tmp_path, text_of(row("0.1", "e", "e", "X", "_", "_", "_", "_", "1:dep", "_"), word(1, "a", 0), ""))
    assert sentence.words == ("a",)


def _token(token_id: str) -> str:
    return row(token_id, "t", "_", "_", "_", "_", "_", "_", "_", "_")


@pytest.mark.parametrize(
    "rows, line, fragment",
    [
        ([word(1, "a", 0), word(2, "b", 1), _token("3-2"), word(3, "c", 1)], 3, "multiword range 3-2 must cover two or more words"),
        ([word(1, "a", 0), _token("2-2"), word(2, "b", 1)], 2, "must cover two or more words"),
        ([word(1, "a", 0), word(2, "b", 1), _token("2.0")], 3, "empty node 2.0: the part after the dot counts from 1"),
        ([word(1, "a", 0), _token("2.1"), word(2, "b", 1)], 2, "empty node 2.1 must follow word 2"),
        ([word(1, "a", 0), _token("3-4"), word(2, "b", 1)], 2, "must come just before word 3; the next word is 2"),
        ([_token("1-3"), word(1, "a", 0), _token("2-3"), word(2, "b", 1), word(3, "c", 1)], 3,
         "multiword range 2-3 overlaps the range on line 3"),
        ([_token("1-3"), word(1, "a", 0), word(2, "b", 1)], 1, "past the sentence's last word 2"),
        ([word(1, "a", 0), _token("2-" + "9" * 5000)], 2, "runs past the end"),
        ([_token("0.1"), _token("0.2")], 1, "the sentence has no word"),
    ],
    ids=["range-backwards", "range-of-one", "empty-node-0", "empty-node-misplaced", "range-misplaced", "range-overlap",
         "range-past-end", "range-huge", "no-word"],
)
def test_bad_ranges_and_empty_nodes_are_blamed_on_their_own_line(tmp_path, rows, line, fragment):
    good = text_of(word(1, "ok", 0), "")
    error = error_of(tmp_path, good + text_of(*rows, ""))
    assert error.line == line + 2  # the good sentence takes lines 1-2
    assert fragment in str(error)


# --- 5. Encoding: BOM, decoding errors, line ends ---------------------------------------------

GOOD = text_of("# sent_id = a", word(1, "café", 0), "", "# sent_id = b", word(1, "b", 0), "")


def test_a_bom_at_the_start_is_ignored(tmp_path):
    with_bom = read_text(tmp_path, b"\xef\xbb\xbf" + GOOD.encode())
    assert [(s.words, s.sent_id) for s in with_bom] == [(("café",), "a"), (("b",), "b")]
    # a text stream opened without utf-8-sig hands the BOM over as the first character
    from_text = read_sentences(io.StringIO("\ufeff" + GOOD), source="s.conllu")
    assert [(s.words, s.sent_id) for s in from_text] == [(("café",), "a"), (("b",), "b")]


@pytest.mark.parametrize(
    "data, line, fragment",
    [
        (GOOD.replace("# sent_id = b", "\ufeff# sent_id = b"), 4, "byte-order mark (U+FEFF) at column 1"),
        (GOOD.replace("café", "ca\ufefffé"), 2, "byte-order mark (U+FEFF) at column 5"),
        ("\ufeff\ufeff" + GOOD, 1, "byte-order mark (U+FEFF) at column 2"),
        # line 2 is "1<TAB>café<TAB>...": 'é' is two bytes, so the byte after it is character 7 but byte 8
        (GOOD.encode().replace(b"caf\xc3\xa9\t", b"caf\xc3\xa9\xff\t"), 2, "invalid start byte 0xff at column 7 (byte 8 of the line)"),
        # the file cut inside 'é': its first byte is character 6 and byte 6
        (GOOD.encode()[: GOOD.encode().index(b"\xa9")], 2, "unexpected end of data 0xc3 at column 6 (byte 6 of the line)"),
        (GOOD.encode().replace(b"# sent_id = b", b"# sent_id = \xed\xa0\x80"), 4, "invalid continuation byte 0xed"),
        (GOOD.replace("# sent_id = b", "# sent\rid = b"), 4, "carriage return (CR) at column 7"),
        (GOOD + "\r", 7, "carriage return (CR) at column 1"),  # a CR ends a line only before LF
    ],
    ids=["bom-line-start", "bom-in-form", "two-boms", "bad-byte", "truncated-char", "surrogate", "lone-cr", "final-cr"],
)
def test_encoding_errors_name_line_and_column(tmp_path, data, line, fragment):
    error = error_of(tmp_path, data)
    assert error.line == line
    assert fragment in str(error)


def test_crlf_line_ends_read_like_lf(tmp_path):
    lf = read_text(tmp_path, GOOD, "lf.conllu")
    crlf = read_text(tmp_path, GOOD.replace("\n", "\r\n"), "crlf.conllu")
    assert [(s.words, s.heads, s.sent_id, s.comments) for s in crlf] == [(s.words, s.heads, s.sent_id, s.comments) for s in lf]


def test_read_sentences_decodes_a_binary_stream_and_names_the_line(tmp_path):
    data = GOOD.encode().replace(b"# sent_id = b", b"# sent_id = \xff")
    with pytest.raises(ProbingError, match=r"^s\.conllu:4: not UTF-8 text: invalid start byte 0xff at column 13 "):
        list(read_sentences(io.BytesIO(data), source="s.conllu"))


def test_a_text_stream_decoding_error_is_still_a_probing_error(tmp_path):
    """A text stream is decoded a chunk at a time by its owner: the reader names the first unread line."""
    path = tmp_path / "t.conllu"
    path.write_bytes(GOOD.encode() + b"# bad \xff\n")
    with path.open(encoding="utf-8") as stream, pytest.raises(ProbingError) as caught:
        list(read_sentences(stream, source="t.conllu"))
    # the bad byte is on line 7; the stream may have decoded it while handing over an earlier line
    assert caught.value.source == "t.conllu" and 1 <= caught.value.line <= 7
    assert "not UTF-8 text (invalid start byte) on this line or soon after" in str(caught.value)


def test_a_comment_after_token_lines_is_an_error(tmp_path):
    error = error_of(tmp_path, text_of(word(1, "a", 0), "# late", ""))
    assert error.line == 2 and "comment line must come before" in str(error)


def test_whitespace_only_lines_end_a_sentence(tmp_path):
    sentences = read_text(tmp_path, text_of(word(1, "a", 0), " \t ", word(1, "b", 0)))
    assert [s.words for s in sentences] == [("a",), ("b",)]
    assert [s.line for s in sentences] == [1, 3]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "\ufeff"], ids=["empty", "blank", "comment", "bom"])
def test_a_file_without_sentences_is_an_error(tmp_path, text):
    path = tmp_path / "t.conllu"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProbingError, match="holds no sentence") as caught:
        list(read_treebank(path))
    assert caught.value.source == str(path)


# --- 7. Input paths ------------------------------------------------------------------------------

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, sockets and /dev/null are POSIX")


@posix_only
def test_a_fifo_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "pipe.conllu"
    os.mkfifo(fifo)
    for call in (read_treebank, resolve_treebank):
        with pytest.raises(ProbingError) as caught:
            call(str(fifo))  # must neither block nor say "not found"
        assert str(caught.value) == f"{fifo}: the treebank path is a FIFO (named pipe), not a regular file"


@posix_only
def test_a_socket_and_a_device_are_not_regular_files(tmp_path):
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(sock_path))
        assert stat.S_ISSOCK(os.stat(sock_path).st_mode)
        with pytest.raises(ProbingError, match="is a socket, not a regular file"):
            resolve_treebank(str(sock_path))
        with pytest.raises(ProbingError, match="is a socket, not a regular file"):
            read_treebank(sock_path)
    with pytest.raises(ProbingError, match="is a character device, not a regular file"):
        read_treebank(os.devnull)
    with pytest.raises(ProbingError, match="is a character device, not a regular file"):
        resolve_treebank(os.devnull)


def test_a_folder_and_a_missing_file(tmp_path):
    for call in (read_treebank, resolve_treebank):
        with pytest.raises(ProbingError, match="the treebank path is a folder, not a regular file"):
            call(str(tmp_path))
        with pytest.raises(ProbingError, match="treebank file not found: .*nope.conllu"):
            call(str(tmp_path / "nope.conllu"))


def test_the_path_is_checked_before_the_first_sentence_is_asked_for(tmp_path):
    with pytest.raises(ProbingError, match="not found"):
        read_treebank(tmp_path / "nope.conllu")  # no list(): the check is eager


# --- 8. What the coreference and tree analyses read ------------------------------------------------

def test_raw_columns_lines_and_comments(tmp_path):
    text = text_of(
        "# sent_id = s1",
        "# text = Kim sleeps",
        word(1, "Kim", 2, feats="Number=Sing", misc="Entity=(1-person-new)|SpaceAfter=No"),
        word(2, "sleeps", 0),
        "",
    )
    (sentence,) = read_text(tmp_path, text)
    assert sentence.feats == ("Number=Sing", "_")
    assert sentence.misc == ("Entity=(1-person-new)|SpaceAfter=No", "_")
    assert sentence.word_lines == (3, 4)
    assert sentence.comments == ("# sent_id = s1", "# text = Kim sleeps")
    assert sentence.sent_id == "s1" and sentence.line == 1


def test_documents_run_from_one_newdoc_to_the_next(tmp_path):
    one = word(1, "w", 0)
    text = text_of(
        one, "",                                   # before any newdoc: no document named
        "# newdoc id = d1", "# sent_id = 2", one, "",
        "# sent_id = 3", one, "",                  # still d1
        "# newdoc", one, "",                       # a bare newdoc: a new, unnamed document
        one, "",
        "# newdoc id = d3", "", "# global.x = y", "", one, "",  # newdoc in word-less blocks
        "# newdocs are not a newdoc", one, "",
    )
    got = [(s.doc_id, s.starts_document) for s in read_text(tmp_path, text)]
    assert got == [(None, False), ("d1", True), ("d1", False), (None, True), (None, False), ("d3", True), ("d3", False)]


@pytest.mark.real_data
def test_gum_documents_and_entities():
    """GUM dev: one document per '# newdoc id' line, and Entity annotations reach MISC intact."""
    from conftest import real_treebank

    path = real_treebank("en_gum", "dev")
    raw = path.read_text(encoding="utf-8").splitlines()
    newdoc_ids = [line.split("=", 1)[1].strip() for line in raw if line.startswith("# newdoc id")]
    word_rows = [line.split("\t") for line in raw if line.split("\t")[0].isdigit()]
    entity_words = sum(1 for columns in word_rows if "Entity=" in columns[9])
    sentences = list(read_treebank(path))
    starts = [s.doc_id for s in sentences if s.starts_document]
    assert starts == newdoc_ids
    assert sum("Entity=" in m for s in sentences for m in s.misc) == entity_words > 0
    for s in sentences:
        assert len(s.feats) == len(s.misc) == len(s.word_lines) == len(s.words)
        assert raw[s.word_lines[0] - 1].split("\t")[1] == s.words[0]
