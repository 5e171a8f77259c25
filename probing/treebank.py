"""Read a dependency treebank (CoNLL-U or CoNLL-X) one sentence at a time.

Only syntactic words are kept: lines whose ID is an integer. Multiword-token
ranges (``1-2``) and empty nodes (``8.1``) are skipped, never an error
(spec/scoring.md section 1). Every structural problem is a
:class:`~probing.errors.ProbingError` that names the file and line.

>>> import io
>>> text = "1\\tDogs\\tdog\\tNOUN\\tNNS\\t_\\t2\\tnsubj\\t_\\t_\\n2\\tbark\\tbark\\tVERB\\tVBP\\t_\\t0\\troot\\t_\\t_\\n\\n"
>>> [s.words for s in read_sentences(io.StringIO(text), source="x.conllu")]
[('Dogs', 'bark')]
>>> next(read_sentences(io.StringIO(text))).heads   # 0-based; ROOT is -1
(1, -1)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import conllu

from .errors import ProbingError

ROOT = -1
"""Head index of a word attached to the artificial root."""

_INTEGER_ID = re.compile(r"^[0-9]+$")
_RANGE_ID = re.compile(r"^[0-9]+-[0-9]+$")
_EMPTY_NODE_ID = re.compile(r"^[0-9]+\.[0-9]+$")
_COLUMNS = 10  # CoNLL-U and CoNLL-X both have ten tab-separated columns
# FEATS, DEPS and MISC are never used by the probe; parsing them into dicts was
# a third of the reader's time (benchmarks/RESULTS.md), so they stay raw text.
_UNUSED_COLUMNS_RAW = {name: (lambda line, i: line[i]) for name in ("feats", "deps", "misc")}


@dataclass(frozen=True)
class Sentence:
    """One sentence's syntactic words and their tree.

    ``heads[i]`` is the 0-based index of word i's head, or ``ROOT`` (-1).
    ``index`` counts sentences from 0 in file order; it seeds the bootstrap
    weights and decides shard membership, so it must not depend on batching.
    """

    words: tuple[str, ...]
    heads: tuple[int, ...]
    labels: tuple[str, ...]
    upos: tuple[str, ...]
    index: int = 0
    sent_id: str | None = None
    line: int = 1

    def __len__(self) -> int:
        return len(self.words)


def read_sentences(stream: IO[str], *, source: str = "<treebank>", start_index: int = 0) -> Iterator[Sentence]:
    """Yield the sentences of an open CoNLL-U/CoNLL-X text stream, validated.

    Memory is one sentence: the stream is read line by line.
    """
    index = start_index
    for first_line, lines in _blocks(stream):
        sentence = _parse_block(lines, first_line, source, index)
        if sentence is not None:
            yield sentence
            index += 1


def read_treebank(path: str | Path) -> Iterator[Sentence]:
    """Yield the sentences of a treebank file; errors name the file and line.

    An empty file (no sentence at all) is an error, not an empty result.
    """
    path = Path(path)
    if not path.is_file():
        raise ProbingError(f"treebank file not found: {path}")
    count = 0
    with path.open(encoding="utf-8", newline="") as stream:
        try:
            for sentence in read_sentences(stream, source=str(path)):
                count += 1
                yield sentence
        except UnicodeDecodeError as error:
            raise ProbingError(f"not UTF-8 text ({error.reason} at byte {error.start})", source=str(path)) from None
    if count == 0:
        raise ProbingError("the treebank holds no sentence", source=str(path))


def _blocks(stream: Iterable[str]) -> Iterator[tuple[int, list[str]]]:
    """Split a stream into sentence blocks, keeping each block's first line number."""
    block: list[str] = []
    first_line = 1
    for number, raw in enumerate(stream, start=1):
        line = raw.rstrip("\r\n")
        if line.strip():
            if not block:
                first_line = number
            block.append(line)
        elif block:
            yield first_line, block
            block = []
    if block:
        yield first_line, block


def _parse_block(lines: list[str], first_line: int, source: str, index: int) -> Sentence | None:
    """Validate one block's columns with line numbers, then let conllu parse it."""
    word_lines: dict[int, int] = {}  # word ID -> file line, for tree errors
    for offset, line in enumerate(lines):
        if line.startswith("#"):
            continue
        number = first_line + offset
        columns = line.split("\t")
        if len(columns) != _COLUMNS:
            raise ProbingError(
                f"expected {_COLUMNS} tab-separated columns, found {len(columns)}", source=source, line=number
            )
        token_id, head = columns[0], columns[6]
        if _RANGE_ID.match(token_id) or _EMPTY_NODE_ID.match(token_id):
            continue  # multiword-token ranges and empty nodes are not words
        if not _INTEGER_ID.match(token_id):
            raise ProbingError(f"ID is not an integer, range or empty node: {token_id!r}", source=source, line=number)
        if not _INTEGER_ID.match(head):
            raise ProbingError(f"HEAD is not an integer: {head!r}", source=source, line=number)
        word_lines[int(token_id)] = number
    if not word_lines:
        return None  # a block of comments only (e.g. a file-level header)
    expected = list(range(1, len(word_lines) + 1))
    if list(word_lines) != expected:
        bad = next(i for i, (got, want) in enumerate(zip(word_lines, expected)) if got != want)
        raise ProbingError(
            f"word IDs must run 1..n in order; found {list(word_lines)[bad]} where {expected[bad]} was expected",
            source=source,
            line=list(word_lines.values())[bad],
        )

    try:
        tokens = conllu.parse_token_and_metadata("\n".join(lines), field_parsers=_UNUSED_COLUMNS_RAW)
    except conllu.exceptions.ParseException as error:
        raise ProbingError(f"malformed sentence: {error}", source=source, line=first_line) from None
    words = [token for token in tokens if isinstance(token["id"], int)]
    heads = tuple(int(token["head"]) - 1 for token in words)  # 1-based with 0 = ROOT -> 0-based with -1
    _check_tree(heads, list(word_lines.values()), source)
    return Sentence(
        words=tuple(token["form"] for token in words),
        heads=heads,
        labels=tuple(token["deprel"] for token in words),
        upos=tuple(token["upos"] for token in words),
        index=index,
        sent_id=tokens.metadata.get("sent_id"),
        line=first_line,
    )


def _check_tree(heads: tuple[int, ...], lines: list[int], source: str) -> None:
    """Heads in range, at least one root, and no cycle (every word reaches ROOT)."""
    n = len(heads)
    for i, head in enumerate(heads):
        if not ROOT <= head < n:
            raise ProbingError(f"HEAD {head + 1} is out of range for a sentence of {n} words", source=source, line=lines[i])
        if head == i:
            raise ProbingError(f"word {i + 1} is its own head", source=source, line=lines[i])
    if ROOT not in heads:
        raise ProbingError("sentence has no root (no word with HEAD 0)", source=source, line=lines[0])
    reaches_root = [False] * n
    for start in range(n):
        path, node = [], start
        while node != ROOT and not reaches_root[node]:
            if node in path:
                raise ProbingError(
                    f"the heads form a cycle through word {node + 1}", source=source, line=lines[node]
                )
            path.append(node)
            node = heads[node]
        for visited in path:
            reaches_root[visited] = True
