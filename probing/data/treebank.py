"""Read a dependency treebank (CoNLL-U or CoNLL-X) one sentence at a time.

Only syntactic words are kept: lines whose ID is an integer. Multiword-token
ranges (``1-2``) and empty nodes (``8.1``) are skipped, never an error
(docs/scoring.md section 1). Every problem in the text is a
:class:`~probing.errors.ProbingError` that names the file and the exact line,
on one line; reading text never raises any other exception.

The format, as this reader holds it:

- UTF-8 text; lines end with LF or CRLF. A byte-order mark is accepted only
  as the file's first character.
- A blank line ends a sentence. Comment lines start with ``#`` and come
  before the sentence's first token line.
- A token line has ten columns (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL
  DEPS MISC; CoNLL-X has ten too) separated by TAB characters only. Spaces
  inside a column are text (a FORM may be ``New York``); a column is never
  empty (``_`` means no value) and never begins or ends with whitespace.
- Word IDs run 1..n in order; a multiword range ``a-b`` (a < b) comes just
  before word a and stays inside the sentence; an empty node ``i.k``
  (k >= 1) follows word i (``0.k`` before word 1).
- HEAD is an integer in 0..n, never the word itself; exactly one word has
  HEAD 0 (the root); every word reaches the root (no cycle).

The columns are split here rather than by the ``conllu`` library: its parser
splits on runs of two or more spaces as well as on TABs, which contradicts
the format (a FORM like ``New  York`` broke the sentence into the wrong
columns), and its errors do not carry the file's line.

>>> import io
>>> text = "1\\tDogs\\tdog\\tNOUN\\tNNS\\t_\\t2\\tnsubj\\t_\\t_\\n2\\tbark\\tbark\\tVERB\\tVBP\\t_\\t0\\troot\\t_\\t_\\n\\n"
>>> [s.words for s in read_sentences(io.StringIO(text), source="x.conllu")]
[('Dogs', 'bark')]
>>> next(read_sentences(io.StringIO(text))).heads   # 0-based; ROOT is -1
(1, -1)
>>> next(read_sentences(io.StringIO(text.replace("2\\tnsubj", "3\\tnsubj"), newline=""), source="x.conllu"))
Traceback (most recent call last):
probing.errors.ProbingError: x.conllu:1: HEAD 3 is out of range for a sentence of 2 words
"""

from __future__ import annotations

import itertools
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, NoReturn

from probing.errors import ProbingError

ROOT = -1
"""Head index of a word attached to the artificial root."""

COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
"""The ten columns of CoNLL-U (CoNLL-X names them differently but has ten too)."""

_BOM = "\ufeff"
_NUMBER = r"(0|[1-9][0-9]*)"  # ASCII digits, no leading zero
_RANGE_ID = re.compile(rf"{_NUMBER}-{_NUMBER}")
_EMPTY_NODE_ID = re.compile(rf"{_NUMBER}\.{_NUMBER}")
_INTEGER = re.compile(_NUMBER)
_MAX_DIGITS = 9  # more digits than any sentence length; int() of huge strings is refused by Python
_SENT_ID = re.compile(r"#\s*sent_id\s*=\s*(.*?)\s*")
_NEWDOC = re.compile(r"#\s*newdoc(?:\s.*)?")
_NEWDOC_ID = re.compile(r"#\s*newdoc\s+id\s*=\s*(.*?)\s*")
_SHOWN_CHARS = 40  # how much of a bad value an error message quotes


@dataclass(frozen=True)
class Sentence:
    """One sentence's syntactic words and their tree.

    ``heads[i]`` is the 0-based index of word i's head, or ``ROOT`` (-1).
    ``index`` counts sentences from 0 in file order; it seeds the bootstrap
    weights and decides shard membership, so it must not depend on batching.
    ``line`` is the file line where the sentence's block (comments included)
    starts.

    The fields after ``line`` keep what the coreference and tree analyses
    read; they default to empty so that code building a Sentence by hand
    (tests, toy examples) need not fill them:

    - ``feats[i]`` / ``misc[i]``: word i's FEATS and MISC columns as raw text
      (``"_"`` when empty), e.g. ``"Entity=(e1-person-new)|SpaceAfter=No"``;
    - ``word_lines[i]``: the file line of word i;
    - ``comments``: the sentence's comment lines, raw, ``#`` included, in
      file order (comments in a block without words are not kept);
    - ``doc_id``: the ``X`` of the latest ``# newdoc id = X`` at or before
      this sentence; a bare ``# newdoc`` starts an unnamed document
      (``None``), as does the start of a file without ``# newdoc``;
    - ``starts_document``: True when a ``# newdoc`` comment stands in this
      sentence's block or in a word-less block since the previous sentence;
    - ``lemmas[i]``: word i's LEMMA column (``"_"`` when empty), which the
      agreement pairs made from a treebank read (probing.data.pair_sets);
    - ``multiword``: each multiword token as (first word, last word, FORM,
      MISC), its words 0-based: the token that the running text writes for
      them (``du`` for ``de le``).

    >>> s = Sentence(words=("Hi",), heads=(ROOT,), labels=("root",), upos=("INTJ",))
    >>> s.feats, s.doc_id, s.starts_document, len(s)
    ((), None, False, 1)
    """

    words: tuple[str, ...]
    heads: tuple[int, ...]
    labels: tuple[str, ...]
    upos: tuple[str, ...]
    index: int = 0
    sent_id: str | None = None
    line: int = 1
    feats: tuple[str, ...] = ()
    misc: tuple[str, ...] = ()
    word_lines: tuple[int, ...] = ()
    comments: tuple[str, ...] = ()
    doc_id: str | None = None
    starts_document: bool = False
    lemmas: tuple[str, ...] = ()
    multiword: tuple[tuple[int, int, str, str], ...] = ()

    def __len__(self) -> int:
        return len(self.words)

    @property
    def text(self) -> str:
        """The sentence as written: its tokens (a multiword token's FORM in place of its words) joined by one
        space, none after a token whose MISC says ``SpaceAfter=No`` (a multiword token's own MISC decides after
        it); no space after the last token. ``# text`` is not read: it may differ from the tokens.

        >>> Sentence(words=("de", "le", "chat", "dort", "."), heads=(2, 2, 3, ROOT, 3),
        ...          labels=("case", "det", "nsubj", "root", "punct"), upos=("ADP", "DET", "NOUN", "VERB", "PUNCT"),
        ...          misc=("_", "_", "_", "SpaceAfter=No", "_"), multiword=((0, 1, "Du", "_"),)).text
        'Du chat dort.'
        """
        return self.written()

    def written(self, replace: dict[int, str] | None = None) -> str:
        """:attr:`text`, some words (by 0-based index, outside multiword tokens) written otherwise: ``replace``.

        >>> Sentence(words=("Dogs", "bark"), heads=(1, ROOT), labels=("nsubj", "root"), upos=("NOUN", "VERB")
        ...          ).written({1: "barks"})
        'Dogs barks'
        """
        return "".join(form + (" " if space else "") for form, space in self.tokens(replace)).rstrip(" ")

    def tokens(self, replace: dict[int, str] | None = None) -> list[tuple[str, bool]]:
        """The running text's tokens in order, each (form, space after): a multiword token stands for its words;
        ``replace`` gives another form to some words (by 0-based index) outside multiword tokens.

        >>> Sentence(words=("Hi", "!"), heads=(ROOT, 0), labels=("root", "punct"), upos=("INTJ", "PUNCT"),
        ...          misc=("SpaceAfter=No", "_")).tokens({0: "Ho"})
        [('Ho', False), ('!', True)]
        """
        replace = replace or {}
        spaces = self.space_after
        starts = {first: (last, form, misc) for first, last, form, misc in self.multiword}
        tokens, index = [], 0
        while index < len(self.words):
            if index in starts:
                last, form, misc = starts[index]
                tokens.append((form, "SpaceAfter=No" not in misc.split("|")))
                index = last + 1
                continue
            tokens.append((replace.get(index, self.words[index]), spaces[index]))
            index += 1
        return tokens

    def in_multiword(self, index: int) -> bool:
        """Whether word ``index`` (0-based) is one of a multiword token's words."""
        return any(first <= index <= last for first, last, _, _ in self.multiword)

    @property
    def space_after(self) -> tuple[bool, ...]:
        """Whether the running text has a space after each word: not where MISC holds ``SpaceAfter=No``
        (a sentence built without MISC has a space after every word).

        >>> Sentence(words=("Hi", "!"), heads=(ROOT, 0), labels=("root", "punct"), upos=("INTJ", "PUNCT"),
        ...          misc=("SpaceAfter=No", "_")).space_after
        (False, True)
        """
        if not self.misc:
            return (True,) * len(self.words)
        return tuple("SpaceAfter=No" not in misc.split("|") for misc in self.misc)


def read_sentences(
    stream: IO[str] | IO[bytes] | Iterable[str] | Iterable[bytes],
    *,
    source: str = "<treebank>",
    start_index: int = 0,
    lazy: bool = False,
) -> Iterator[Sentence | PendingSentence]:
    """Yield the sentences of an open CoNLL-U/CoNLL-X stream, validated.

    Memory is one sentence: the stream is read line by line. A binary stream
    (lines of bytes) is decoded here, so a decoding error names its line and
    column; a text stream was decoded by its owner, who reports such errors
    only by chunk, so they are blamed on the first line not yet read.
    ``start_index`` is the ``index`` of the first sentence. ``lazy``: see
    :func:`read_treebank`.

    >>> import io
    >>> next(read_sentences(io.BytesIO(b"1\\tcaf\\xc3\\tx\\tX\\t_\\t_\\t0\\troot\\t_\\t_\\n"), source="b.conllu"))
    Traceback (most recent call last):
    probing.errors.ProbingError: b.conllu:1: not UTF-8 text: invalid continuation byte 0xc3 at column 6 (byte 6 of the line)
    """
    return _sentences(_lines(stream, source), source, start_index, lazy)


def read_treebank(path: str | os.PathLike[str], *, lazy: bool = False) -> Iterator[Sentence | PendingSentence]:
    """Yield the sentences of a treebank file; errors name the file and line.

    The path is checked at once (missing, a folder, a FIFO or a device are
    errors before anything is read); the file is opened and read lazily. An
    empty file (no sentence at all) is an error, not an empty result.

    ``lazy``: each sentence comes as a :class:`PendingSentence`, its lines
    split out of the file but not yet parsed or checked (its ``parsed()`` does
    both). The lines themselves are still checked (encoding, BOM, CR), and the
    sentences are numbered and given their documents as here, so a worker
    process can skip parsing the sentences another worker will parse.
    """
    path = Path(path)
    check_input_file(path)
    return _read_file(path, lazy)


def check_input_file(path: str | Path, *, what: str = "treebank", not_found_hint: str = "") -> Path:
    """Raise a one-line ProbingError unless ``path`` is an existing regular file; return it.

    A FIFO, socket or device is refused by name: reading one would block or
    never end, and "not found" would be untrue. ``what`` names the file in
    messages (treebank, text, labels).

    >>> check_input_file(Path("no/such.conllu"))
    Traceback (most recent call last):
    probing.errors.ProbingError: treebank file not found: no/such.conllu
    """
    path = Path(path).expanduser()
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise ProbingError(f"{what} file not found: {path}{not_found_hint}") from None
    except (OSError, ValueError) as error:  # permission, name too long, NUL in the name, a loop of links
        raise ProbingError(f"cannot inspect the {what} path ({_reason(error)})", source=str(path)) from None
    kind = _non_regular_kind(mode)
    if kind is not None:
        raise ProbingError(f"the {what} path is {kind}, not a regular file", source=str(path))
    return path


def _non_regular_kind(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "an unknown kind of file"  # pragma: no cover - no other kind on common systems


def _read_file(path: Path, lazy: bool = False) -> Iterator[Sentence | PendingSentence]:
    source = str(path)
    # O_NONBLOCK: if the path was swapped for a FIFO since the check, opening
    # it must not wait for a writer; fstat then refuses it (no race).
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as error:
        raise ProbingError(f"cannot open the treebank ({_reason(error)})", source=source) from None
    with os.fdopen(fd, "rb") as stream:
        kind = _non_regular_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise ProbingError(f"the treebank path is {kind}, not a regular file", source=source)
        count = 0
        for sentence in read_sentences(stream, source=source, lazy=lazy):
            count += 1
            yield sentence
    if count == 0:
        raise ProbingError("the treebank holds no sentence", source=source)


def _lines(stream: Iterable[str] | Iterable[bytes], source: str) -> Iterator[str]:
    """The stream's lines, decoded, without their line ends; a BOM or CR inside a line is an error."""
    number = 0
    bom_offset = 0  # columns count from the file's first byte, a leading BOM included
    try:
        for line in stream:
            number += 1
            if line.__class__ is bytes:  # a binary stream: decode here to locate errors exactly
                try:
                    line = line.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise ProbingError(_decoding_message(line, error), source=source, line=number) from None
            if line.endswith("\n"):
                line = line[:-1]
                if line.endswith("\r"):
                    line = line[:-1]
            if number == 1 and line.startswith(_BOM):
                line = line[1:]  # a BOM as the file's first character only marks the encoding
                bom_offset = 1
            if _BOM in line:
                raise ProbingError(
                    f"byte-order mark (U+FEFF) at column {line.index(_BOM) + 1 + bom_offset}; "
                    "one is allowed only at the start of the file",
                    source=source,
                    line=number,
                )
            if "\r" in line:
                column = line.index("\r") + 1 + bom_offset
                raise ProbingError(
                    f"carriage return (CR) at column {column}; lines end with LF or CRLF",
                    source=source,
                    line=number,
                )
            bom_offset = 0
            yield line
    except UnicodeDecodeError as error:
        # Decoded by the stream's owner a chunk at a time: the bad byte is on
        # this line or a later one, and the offset is the chunk's, not the line's.
        raise ProbingError(
            f"not UTF-8 text ({error.reason}) on this line or soon after; "
            "read the file as bytes (read_treebank does) to locate it exactly",
            source=source,
            line=number + 1,
        ) from None
    except OSError as error:
        raise ProbingError(f"cannot read the treebank ({_reason(error)})", source=source, line=number + 1) from None


def _decoding_message(line: bytes, error: UnicodeDecodeError) -> str:
    # error.start is a byte offset within this line; the bytes before it are valid UTF-8.
    column = len(line[: error.start].decode("utf-8", errors="replace")) + 1
    return (
        f"not UTF-8 text: {error.reason} 0x{line[error.start]:02x} "
        f"at column {column} (byte {error.start + 1} of the line)"
    )


def _sentences(lines: Iterable[str], source: str, start_index: int,
               lazy: bool = False) -> Iterator[Sentence | PendingSentence]:
    """Group lines into blocks and parse each (``lazy``: leave each for later); carry the document across blocks."""
    index = start_index
    doc_id: str | None = None
    starts_document = False  # a "# newdoc" seen and not yet given to a sentence
    for block, first_line in _blocks(lines):
        if lazy:
            comments = list(itertools.takewhile(_is_comment, block))
            newdoc, newdoc_id = _newdoc(comments)
            # comments come first in a block, so one that is not all comments has token lines: a sentence, or an
            # error that parsing it will find
            has_words = len(comments) < len(block)
        else:
            parsed = _Block(block, first_line, source)
            newdoc, newdoc_id, has_words = parsed.newdoc, parsed.newdoc_id, parsed.has_words
        if newdoc:
            doc_id, starts_document = newdoc_id, True
        if has_words:
            if lazy:
                yield PendingSentence(block, first_line, source, index, doc_id, starts_document)
            else:
                yield parsed.sentence(index, doc_id, starts_document)
            index += 1
            starts_document = False


def _blocks(lines: Iterable[str]) -> Iterator[tuple[list[str], int]]:
    """Each block of consecutive non-blank lines, with the number of its first line."""
    block: list[str] = []
    first_line = 1
    for number, line in enumerate(lines, start=1):
        if line and not line.isspace():
            if not block:
                first_line = number
            block.append(line)
        elif block:
            yield block, first_line
            block = []
    if block:
        yield block, first_line


def _is_comment(line: str) -> bool:
    return line[0] == "#"


def _newdoc(comments: Iterable[str]) -> tuple[bool, str | None]:
    """Whether a ``# newdoc`` comment starts a document, and its id (None: unnamed)."""
    newdoc, newdoc_id = False, None
    for comment in comments:
        if _NEWDOC.fullmatch(comment):
            newdoc = True
            named = _NEWDOC_ID.fullmatch(comment)
            newdoc_id = (named.group(1) or None) if named else None  # "id =" with no name: unnamed
    return newdoc, newdoc_id


@dataclass(frozen=True)
class PendingSentence:
    """A sentence's block of lines, split out of the file and numbered but not yet parsed (``read_treebank(...,
    lazy=True)``): ``parsed()`` is the Sentence the eager reader gives, or its file:line error.

    >>> pending = PendingSentence(["1\\tHi\\thi\\tX\\t_\\t_\\t0\\troot\\t_\\t_"], 3, "t.conllu", 0, None, False)
    >>> pending.parsed().words, pending.parsed().line
    (('Hi',), 3)
    """

    lines: list[str]
    first_line: int
    source: str
    index: int
    doc_id: str | None
    starts_document: bool

    def parsed(self) -> Sentence:
        return _Block(self.lines, self.first_line, self.source).sentence(self.index, self.doc_id,
                                                                               self.starts_document)


class _Block:
    """One block of consecutive non-blank lines: comments, then token lines.

    Parsing validates every line as it goes, so an error names the first bad
    line; tree-wide checks (HEAD in range, a root, no cycle) come after.
    """

    __slots__ = ("source", "first_line", "comments", "newdoc", "newdoc_id", "rows", "heads", "word_lines",
                 "multiword")

    def __init__(self, lines: list[str], first_line: int, source: str):
        self.source = source
        self.first_line = first_line
        self.comments: list[str] = []
        self.newdoc = False
        self.newdoc_id: str | None = None
        rows: list[list[str]] = []  # the ten columns of each word, transposed once at the end
        heads: list[int] = []
        word_lines: list[int] = []
        self.rows, self.heads, self.word_lines = rows, heads, word_lines
        self.multiword: list[tuple[int, int, str, str]] = []  # (first word, last word, FORM, MISC), 0-based

        next_id = "1"  # the ID the next word must have, as text: no int() on untrusted digits
        root_line = 0
        ranges: list[tuple[int, int]] = []  # (last word covered, line) of each multiword range
        tokens_started = False
        number = first_line - 1
        for line in lines:
            number += 1
            if line[0] == "#":
                if tokens_started:
                    self._fail("a comment line must come before the sentence's token lines", number)
                self.comments.append(line)
                continue
            tokens_started = True
            columns = line.split("\t")
            if len(columns) != 10:
                self._fail(f"expected 10 tab-separated columns, found {len(columns)}", number)
            # str.split() cuts at every whitespace run and drops empty pieces, so it
            # equals the TAB split unless a column is empty or holds whitespace: a
            # cheap test that sends only those lines to the column-by-column check.
            if columns != line.split():
                self._check_column_edges(columns, number)
            if columns[0] != next_id:
                self._non_word(columns[0], len(rows), word_lines, ranges, number)
                if ranges and ranges[-1][1] == number:  # a multiword range: kept for the running text
                    self.multiword.append((len(rows), ranges[-1][0] - 1, columns[1], columns[9]))
                continue  # a multiword range or an empty node: not a word
            head = columns[6]
            if head == "0":
                if root_line:
                    self._fail(f"a second root (HEAD 0); the first is on line {root_line}", number)
                root_line = number
                heads.append(ROOT)
            elif not (head.isdigit() and head.isascii()) or head[0] == "0":
                self._fail(f"HEAD is not an integer: {_shown(head)}{_leading_zero(head)}", number)
            elif len(head) > _MAX_DIGITS:
                self._fail(f"HEAD {_shown(head)} is out of range", number)
            else:
                if head == next_id:
                    self._fail(f"word {next_id} is its own head", number)
                heads.append(int(head) - 1)  # 1-based with 0 = ROOT -> 0-based with -1
            rows.append(columns)
            word_lines.append(number)
            next_id = str(len(rows) + 1)

        self._read_newdoc()
        if rows:
            self._check_tree(ranges, root_line)
        elif tokens_started:
            self._fail("the sentence has no word (only multiword ranges or empty nodes)", first_line)
        # else comments only, e.g. a file header or a "# newdoc" on its own

    def _read_newdoc(self) -> None:
        """Whether a ``# newdoc`` comment starts a document here, and its id."""
        self.newdoc, self.newdoc_id = _newdoc(self.comments)

    def _check_tree(self, ranges: list[tuple[int, int]], root_line: int) -> None:
        """The checks that need the whole sentence: ranges and HEADs within it, one root, no cycle."""
        n = len(self.rows)
        for last, line_number in ranges:
            if last > n:
                self._fail(f"multiword range ends at word {last}, past the sentence's last word {n}", line_number)
        for i, head_index in enumerate(self.heads):
            if head_index >= n:
                self._fail(f"HEAD {head_index + 1} is out of range for a sentence of {n} words", self.word_lines[i])
        if not root_line:
            self._fail("the sentence has no root (no word with HEAD 0)", self.word_lines[0])
        _check_acyclic(self.heads, self.word_lines, self.source)

    @property
    def has_words(self) -> bool:
        return bool(self.rows)

    def _check_column_edges(self, columns: list[str], number: int) -> None:
        for name, column in zip(COLUMNS, columns):
            if not column:
                self._fail(f"column {name} is empty; write _ for no value", number)
            if column != column.strip():
                self._fail(f"column {name} begins or ends with whitespace: {_shown(column)}", number)

    def _non_word(self, token_id: str, n: int, word_lines: list[int], ranges: list[tuple[int, int]], number: int) -> None:
        """Accept a well-placed multiword range or empty node; anything else is an error."""
        match = _RANGE_ID.fullmatch(token_id)
        if match is not None:
            start, end = match.group(1), match.group(2)
            if start != str(n + 1):
                self._fail(f"multiword range {token_id} must come just before word {start}; the next word is {n + 1}", number)
            if len(end) > _MAX_DIGITS:
                self._fail(f"multiword range {token_id} runs past the end of any sentence", number)
            if int(start) >= int(end):
                self._fail(f"multiword range {token_id} must cover two or more words (start < end)", number)
            if ranges and ranges[-1][0] >= int(start):
                self._fail(f"multiword range {token_id} overlaps the range on line {ranges[-1][1]}", number)
            ranges.append((int(end), number))
            return
        match = _EMPTY_NODE_ID.fullmatch(token_id)
        if match is not None:
            word, sub = match.group(1), match.group(2)
            if sub == "0":
                self._fail(f"empty node {token_id}: the part after the dot counts from 1", number)
            if word != str(n):
                self._fail(f"empty node {token_id} must follow word {word}; the last word is {n}", number)
            return
        if _INTEGER.fullmatch(token_id) is None:
            self._fail(f"ID is not an integer, range or empty node: {_shown(token_id)}{_leading_zero(token_id)}", number)
        if len(token_id) <= _MAX_DIGITS and 1 <= int(token_id) <= n:
            self._fail(f"duplicate word ID {token_id}; it is already on line {word_lines[int(token_id) - 1]}", number)
        self._fail(f"word IDs must run 1..n in order; found {_shown(token_id)} where {n + 1} was expected", number)

    def _fail(self, message: str, line: int) -> NoReturn:
        raise ProbingError(message, source=self.source, line=line)

    def sentence(self, index: int, doc_id: str | None, starts_document: bool) -> Sentence:
        sent_id = None
        for comment in self.comments:
            match = _SENT_ID.fullmatch(comment)
            if match is not None:
                sent_id = match.group(1)  # the last one wins, as in the conllu library
        # [word, column] -> [column, word] in one C-level pass
        _id, forms, lemmas, upos, _xpos, feats, _head, labels, _deps, misc = zip(*self.rows)
        return Sentence(
            words=forms,
            heads=tuple(self.heads),
            labels=labels,
            upos=upos,
            index=index,
            sent_id=sent_id,
            line=self.first_line,
            feats=feats,
            misc=misc,
            word_lines=tuple(self.word_lines),
            comments=tuple(self.comments),
            doc_id=doc_id,
            starts_document=starts_document,
            lemmas=lemmas,
            multiword=tuple(self.multiword),
        )


def _check_acyclic(heads: list[int], lines: list[int], source: str) -> None:
    """Every word reaches ROOT by following heads (heads already in range)."""
    n = len(heads)
    state = [0] * n  # 0 not seen, 1 on the path being followed, 2 reaches ROOT
    for start in range(n):
        path, node = [], start
        while node != ROOT and state[node] == 0:
            state[node] = 1
            path.append(node)
            node = heads[node]
        if node != ROOT and state[node] == 1:
            raise ProbingError(f"the heads form a cycle through word {node + 1}", source=source, line=lines[node])
        for visited in path:
            state[visited] = 2


def _shown(text: str) -> str:
    """A user value quoted for a one-line message, cut if long."""
    if len(text) > _SHOWN_CHARS:
        return repr(text[:_SHOWN_CHARS]) + "..."
    return repr(text)


def _leading_zero(text: str) -> str:
    """A hint for digits that would be a number but for a leading zero (``01``)."""
    return " (no leading zeros)" if len(text) > 1 and text.isdigit() and text.isascii() else ""


def _reason(error: Exception) -> str:
    """An OS error's own words ("Permission denied"), without the path it repeats."""
    text = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return " ".join(text.split())  # one line, whatever the platform put in it
