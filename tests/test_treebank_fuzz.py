"""Fuzzing the reader: real sentences from data/sample.conllu, randomly damaged.

The property: reading a damaged file either gives the sentences that the
format's rules say it holds, or raises a ProbingError whose text is one line
starting with ``file:line:`` (a line of the file); never another exception.
Most damage breaks a rule, and then the result must be a ProbingError; some
leaves the words and heads as they were (a space inside LEMMA, a BOM at the
very start, a duplicated comment), and some makes a different valid
treebank (a changed HEAD, the last word deleted, a space inside a FORM).

What the rules say is decided by ``expected_reading`` below: a deliberately
plain, non-streaming restatement of the rules in the reader's docstring,
written from those rules and not from the reader's code. The undamaged sample
must read the same through both (checked first), and so must a real treebank.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from probing.data.treebank import read_sentences, read_treebank
from probing.errors import ProbingError

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.conllu"
SENTENCES = [block + "\n\n" for block in SAMPLE.read_text(encoding="utf-8").strip("\n").split("\n\n")]

Reading = list[tuple[tuple[str, ...], tuple[int, ...]]]  # per sentence: words, 0-based heads (ROOT = -1)

_WORD_ID = re.compile(r"[1-9][0-9]{0,5}")
_RANGE = re.compile(r"([1-9][0-9]{0,5})-([1-9][0-9]{0,5})")
_EMPTY_NODE = re.compile(r"(0|[1-9][0-9]{0,5})\.([1-9][0-9]{0,5})")
_HEAD = re.compile(r"0|[1-9][0-9]{0,5}")  # six digits: more than any sentence here, and int() stays cheap


def expected_reading(data: bytes) -> Reading | None:
    """The (words, heads) of each sentence the rules find in ``data``, or None if a rule is broken."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = text.removeprefix("\ufeff")
    if "\ufeff" in text:
        return None
    *ended, last = text.split("\n")
    lines = [line.removesuffix("\r") for line in ended] + [last]  # CR counts as a line end only before LF
    if any("\r" in line for line in lines):
        return None
    sentences: Reading = []
    block: list[str] = []
    for line in lines + [""]:
        if line.strip():
            block.append(line)
            continue
        if block:
            sentence = _expected_sentence(block)
            if sentence is False:
                return None
            if sentence is not None:
                sentences.append(sentence)
        block = []
    return sentences


def _expected_sentence(block: list[str]):
    """(words, heads), None for a block of comments only, False when a rule is broken."""
    token_lines = [line for line in block if not line.startswith("#")]
    if not token_lines:
        return None
    first_token = block.index(token_lines[0])
    if any(line.startswith("#") for line in block[first_token:]):
        return False  # comments come before the token lines
    words: list[str] = []
    heads: list[int] = []
    range_ends: list[int] = []
    for line in token_lines:
        columns = line.split("\t")
        if len(columns) != 10 or any(c == "" or c != c.strip() for c in columns):
            return False
        token_id = columns[0]
        if _WORD_ID.fullmatch(token_id):
            if int(token_id) != len(words) + 1 or not _HEAD.fullmatch(columns[6]):
                return False
            words.append(columns[1])
            heads.append(int(columns[6]))
        elif match := _RANGE.fullmatch(token_id):
            start, end = int(match.group(1)), int(match.group(2))
            if start != len(words) + 1 or start >= end or (range_ends and range_ends[-1] >= start):
                return False
            range_ends.append(end)
        elif match := _EMPTY_NODE.fullmatch(token_id):
            if int(match.group(1)) != len(words):
                return False
        else:
            return False
    n = len(words)
    if n == 0 or any(end > n for end in range_ends):
        return False
    if any(not 0 <= head <= n or head == i + 1 for i, head in enumerate(heads)) or heads.count(0) != 1:
        return False
    for start in range(1, n + 1):  # every word reaches the root within n steps, or there is a cycle
        node, steps = start, 0
        while node != 0 and steps <= n:
            node, steps = heads[node - 1], steps + 1
        if node != 0:
            return False
    return tuple(words), tuple(head - 1 for head in heads)


# --- Damage ------------------------------------------------------------------------------------

ODD_VALUES = st.one_of(
    st.just("0"),  # a second root, or the root moved
    st.integers(1, 14).map(str),
    st.sampled_from(["1-2", "3-2", "2-2", "2.0", "8.1", "0.1", "01", "-1", "_", "", " 1", "1 ", "1.5.2", "9" * 40, "\u0663"]),
    # a small alphabet: st.text()'s default one costs seconds to build, and these characters are the risky ones
    st.text(st.sampled_from("0123456789-._ \t#x\u00a0\u00e9\ufeff"), max_size=3),
)
BAD_BYTES = st.sampled_from([b"\xff", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xe2\x82"])


def _near_ids(token_id: bytes) -> st.SearchStrategy[str]:
    """IDs near word k's own: multiword ranges and empty nodes in and out of place, neighbours."""
    k = int(token_id) if token_id.isdigit() and len(token_id) < 4 else 1
    return st.sampled_from([
        str(k - 1), str(k + 1),                                       # a duplicate, a gap
        f"{k}-{k + 1}", f"{k}-{k + 9}", f"{k}-{k}", f"{k}-{k - 1}", f"{k + 1}-{k + 2}",  # ranges before word k
        f"{k - 1}.1", f"{k - 1}.2", f"{k - 1}.0", f"{k}.1",                               # empty nodes before word k
    ])


def _token_line(draw, lines: list[bytes]) -> int:
    """A line to damage, mostly a token line (one with a TAB), sometimes any line."""
    token_lines = [i for i, line in enumerate(lines) if b"\t" in line]
    if token_lines and draw(st.integers(0, 3)):
        return draw(st.sampled_from(token_lines))
    return draw(st.integers(0, len(lines) - 1))


def _lines_op(draw, data: bytes, kind: str) -> bytes:
    lines = data.split(b"\n")
    i = _token_line(draw, lines)
    if kind == "delete line":
        del lines[i]
    elif kind == "duplicate line":
        lines.insert(i, lines[i])
    elif kind == "insert token line":  # a range or empty node (or a stray word) next to word k
        token_id = draw(_near_ids(lines[i].split(b"\t")[0]))
        lines.insert(i, "\t".join([token_id, "x", "_", "_", "_", "_", "_", "_", "_", "_"]).encode())
    else:  # swap lines
        j = _token_line(draw, lines)
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def _column_op(draw, data: bytes, kind: str) -> bytes:
    lines = data.split(b"\n")
    i = _token_line(draw, lines)
    columns = lines[i].split(b"\t")
    k = draw(st.integers(0, len(columns) - 1))
    if kind == "delete column":
        del columns[k]
    elif kind == "duplicate column":
        columns.insert(k, columns[k])
    elif kind == "swap columns":
        j = draw(st.integers(0, len(columns) - 1))
        columns[k], columns[j] = columns[j], columns[k]
    else:  # a random ID or HEAD
        k = 0 if kind == "set ID" else 6
        if len(columns) <= k:
            return data
        # (drawn in two steps: a one_of built afresh per call is slow to check for emptiness)
        near = k == 0 and draw(st.booleans())
        columns[k] = draw(_near_ids(columns[0]) if near else ODD_VALUES).encode("utf-8")
    lines[i] = b"\t".join(columns)
    return b"\n".join(lines)


def _insert_op(draw, data: bytes, kind: str) -> bytes:
    at = draw(st.integers(0, len(data)))
    if kind == "truncate":
        return data[:at]
    inserted = {
        "insert spaces": lambda: b" " * draw(st.integers(1, 2)),
        "insert tab": lambda: b"\t",
        "insert CR": lambda: b"\r",
        "insert BOM": lambda: b"\xef\xbb\xbf",
        "insert bad bytes": lambda: draw(BAD_BYTES),
    }[kind]()
    if kind == "insert BOM" and draw(st.booleans()):
        at = 0  # the one place where a BOM is allowed: give it a fair chance
    return data[:at] + inserted + data[at:]


OPERATIONS = {
    **dict.fromkeys(["delete line", "duplicate line", "swap lines", "insert token line"], _lines_op),
    **dict.fromkeys(["delete column", "duplicate column", "swap columns", "set ID", "set HEAD"], _column_op),
    **dict.fromkeys(["insert spaces", "insert tab", "insert CR", "insert BOM", "insert bad bytes", "truncate"], _insert_op),
}


TREE_DAMAGE = ["set ID", "set HEAD", "insert token line", "delete line", "duplicate line"]


@st.composite
def damaged_treebanks(
    draw, kinds: tuple[str, ...] = tuple(sorted(OPERATIONS)), most: int = 3
) -> tuple[bytes, bytes, list[str]]:
    """(original, damaged, what was done): up to ``most`` sample sentences and kinds of damage."""
    original = "".join(draw(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=most))).encode("utf-8")
    damaged, done = original, []
    for _ in range(draw(st.integers(1, most))):
        kind = draw(st.sampled_from(kinds))
        damaged = OPERATIONS[kind](draw, damaged, kind)
        done.append(kind)
    return original, damaged, done


def _read(path: Path) -> Reading:
    return [(s.words, s.heads) for s in read_treebank(path)]


@pytest.mark.real_data
def test_the_rules_restated_here_agree_with_the_reader_on_clean_files():
    from conftest import real_treebank

    for path in (SAMPLE, real_treebank("en_gum", "dev")):
        assert expected_reading(path.read_bytes()) == _read(path)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "damaged.conllu"


FUZZ_SETTINGS = settings(
    deadline=None,
    derandomize=True,  # the same examples on every run: CI stays stable
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@settings(FUZZ_SETTINGS, max_examples=300)
@given(case=damaged_treebanks())
def test_damaged_files_read_as_the_rules_say_or_fail_with_a_located_one_line_error(scratch, case):
    def read_file(data: bytes) -> Reading:
        scratch.write_bytes(data)
        return _read(scratch)

    check_damaged(case, str(scratch), read_file)


@settings(FUZZ_SETTINGS, max_examples=200)
@given(case=damaged_treebanks(kinds=tuple(TREE_DAMAGE), most=1))
def test_damaged_ids_and_heads(case):
    """One sentence, one change to its IDs or HEADs: each rule on ranges, empty nodes and roots is met alone.

    Read from memory (the same reader on a binary stream) to save a file
    write and open per example; the test above reads real files.
    """
    def read_stream(data: bytes) -> Reading:
        return [(s.words, s.heads) for s in read_sentences(io.BytesIO(data), source="damaged.conllu")]

    check_damaged(case, "damaged.conllu", read_stream)


def check_damaged(case: tuple[bytes, bytes, list[str]], source: str, read: Callable[[bytes], Reading]) -> None:
    original, damaged, done = case
    for kind in done:
        event(kind)  # --hypothesis-show-statistics shows how often each kind of damage was tried
    expected = expected_reading(damaged)
    try:
        got = read(damaged)
    except ProbingError as error:
        message = str(error)
        assert expected is None or expected == [], f"{done}: valid text refused: {message}"
        assert len(message.splitlines()) == 1 and "\n" not in message
        assert error.source == source
        if expected == []:  # no sentence left: the one error about the whole file, not one line
            assert error.line is None and message == f"{source}: the treebank holds no sentence", done
            event("no sentence left")
        else:
            assert message.startswith(f"{source}:{error.line}: "), done
            assert 1 <= error.line <= damaged.count(b"\n") + 1, done
            event("located error")
        return
    # Anything other than a ProbingError propagates and fails the test with its traceback.
    assert expected is not None, f"{done}: broken text accepted as {got}"
    assert got == expected, done
    event("same words and heads" if got == expected_reading(original) else "a different valid treebank")
