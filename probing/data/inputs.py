"""What the model reads: treebank sentences, plain-text lines, or segment pairs, as units.

A *unit* is one model input. Every command names its input the same way:
``--treebank FILE|NAME:SPLIT`` (CoNLL-U or CoNLL-X; its words are given to
the tokenizer pre-split, so every piece belongs to one word) or ``--text
FILE`` (one sentence per line, a blank line ends a document). A treebank read
as ``documents`` (``probing coref``) gives windows of consecutive sentences of
one document instead of single sentences (probing.data.windows). With
``--pairs``, consecutive sentences of a document become segments A and B
(``[CLS] A [SEP] B [SEP]`` for BERT, the model's own tokens otherwise), as in
BERT's pre-training. Units are numbered from 0 in file order; the number
decides shard membership and seeds the bootstrap, so it never depends on
batching.

A one-split treebank can be read by halves (``ko_pud:even``, ``ko_pud:odd``: docs/languages.md): the
first ``limit`` sentences of the file, then those whose 0-based index in the file is even (or odd),
numbered again from 0 so that shards and the bootstrap treat a half like any file.

>>> import io
>>> [(u.first, u.second) for u in units_from_lines(io.StringIO("One.\\nTwo.\\n\\nThree.\\n"), pairs=True)]
[('One.', 'Two.'), ('Three.', None)]
>>> source = InputSource.treebank(str(sample_treebank_path()), limit=2)
>>> [len(unit.words) for unit in source.units()], source.units_total
([11, 10], 75)
>>> odd = InputSource(source.path, "treebank", limit=4, half="odd")
>>> [(unit.index, unit.sentence.index) for unit in odd.units()]   # (number in the half, index in the file)
[(0, 1), (1, 3)]
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from probing.data.datasets.names import HALVES
from probing.data.treebank import ROOT, PendingSentence, Sentence, _decoding_message, check_input_file, read_treebank
from probing.errors import ProbingError


@dataclass(frozen=True)
class Unit:
    """One model input: one sentence, or two as segments A and B.

    A segment is a tuple of words (pre-split, from a treebank) or a raw string
    (plain text). ``sentences`` holds the trees behind the words: one for a
    probe unit, several for a window of a document.
    """

    index: int
    first: tuple[str, ...] | str
    second: tuple[str, ...] | str | None = None
    sentences: tuple[Sentence, ...] = ()
    label: str | None = None

    @property
    def is_split(self) -> bool:
        """Whether the unit is given as words (from a treebank) rather than raw text."""
        return not isinstance(self.first, str)

    @property
    def words(self) -> tuple[str, ...]:
        """All words of a pre-split unit, segment A's then B's."""
        if not self.is_split:
            return ()
        return tuple(self.first) + tuple(self.second or ())

    @property
    def sentence(self) -> Sentence:
        """The sentence of a one-sentence treebank unit (what the probe scores)."""
        if len(self.sentences) != 1:
            raise ValueError(f"unit {self.index} holds {len(self.sentences)} sentences, not one")
        return self.sentences[0]

    def parsed(self) -> "Unit":
        """The unit itself: it is read already (a :class:`PendingUnit` is not)."""
        return self


@dataclass(frozen=True)
class PendingUnit:
    """A treebank unit whose sentences are split out of the file but not parsed (``InputSource.units(lazy=True)``);
    ``parsed()`` is the :class:`Unit` an eager read gives, or the first file:line error in its sentences."""

    index: int
    pending: tuple[PendingSentence, ...]

    def parsed(self) -> Unit:
        return _unit(self.index, tuple(sentence.parsed() for sentence in self.pending))


@dataclass
class InputSource:
    """A file of units that can be read more than once (several passes, resumed runs).

    ``units_total`` is known once a full pass has read the whole file (every
    pass does, after ``limit``, so that a malformed line at the end is still
    found before anything is written).
    """

    path: Path
    kind: str
    pairs: bool = False
    limit: int | None = None
    given_as: str = ""
    half: str | None = None
    """``"even"`` or ``"odd"``: only the sentences of that half of the file are read (after ``limit``)."""
    units_total: int | None = None
    windows: object | None = None
    """For ``documents``: the probing.data.windows.WindowRule that cuts documents into windows; it
    measures with the model's tokenizer, so it is set once the model is loaded."""
    _sha256: str | None = field(default=None, repr=False)

    @classmethod
    def treebank(cls, spec: str, *, pairs: bool = False, limit: int | None = None,
                 option: str | None = "--treebank") -> "InputSource":
        """A treebank file, or a name such as ``en_ewt:dev`` (fetched into the cache if needed).

        ``option`` is what errors call the file (the command-line option that gave it).
        """
        from probing.data.datasets.names import treebank_half
        from probing.data.datasets.resolution import resolve_treebank

        with given_by(option):
            path = resolve_treebank(spec)
        half = treebank_half(spec)
        if half is not None and pairs:
            raise ProbingError("segment pairs are consecutive sentences; a half has none", source=option)
        return cls(path=path, kind="treebank", pairs=pairs, limit=limit, given_as=spec, half=half)

    @classmethod
    def documents(cls, spec: str, *, limit: int | None = None, option: str | None = "--treebank") -> "InputSource":
        """A treebank read as documents cut into windows (coreference); set ``windows`` before reading."""
        source = cls.treebank(spec, limit=limit, option=option)
        if source.half is not None:
            raise ProbingError(f"a half ({spec}) has no whole documents; name the whole file ({spec.rsplit(':', 1)[0]}"
                               ":test)", source=option)
        source.kind = "documents"
        return source

    @classmethod
    def text(cls, spec: str, *, pairs: bool = False, limit: int | None = None,
             option: str | None = "--text") -> "InputSource":
        """A UTF-8 text file with one sentence per line."""
        with given_by(option):
            path = check_input_file(spec, what="text")
        return cls(path=path, kind="text", pairs=pairs, limit=limit, given_as=spec)

    @classmethod
    def words(cls, spec: str, *, limit: int | None = None, option: str | None = "--text") -> "InputSource":
        """A UTF-8 text file with one sentence per line, read as words without a parse (:func:`words_of`):
        for what needs words but no tree, such as the explore page's sentence views of any head."""
        source = cls.text(spec, limit=limit, option=option)
        source.kind = "words"
        return source

    @classmethod
    def labelled(cls, spec: str, *, limit: int | None = None, option: str | None = "--labels") -> "InputSource":
        """A CSV with ``text`` and ``label`` columns (a sequence classifier's test set)."""
        with given_by(option):
            path = check_input_file(spec, what="labels")
        return cls(path=path, kind="labelled", limit=limit, given_as=spec)

    @property
    def sha256(self) -> str:
        if self._sha256 is None:
            from probing.data.datasets.cache import sha256_of

            self._sha256 = sha256_of(self.path)
        return self._sha256

    def units(self, *, lazy: bool = False) -> Iterator[Unit | PendingUnit]:
        """Every unit of the file in order; ``units_total`` is set when the file has been read to its end.

        Units beyond ``limit`` or outside ``half`` are read (and so validated) but not yielded. ``lazy``: a
        treebank's units come as :class:`PendingUnit` (its sentences parsed by whoever needs them; those not
        yielded are parsed here, so every line is still checked); other kinds of input are read as usual, and so
        are segment pairs (an eager read parses the sentence after a pair's first before it yields the pair
        alone at a document's end, so an error there stops it a unit earlier than a lazy read would).
        """
        count = 0
        parity = None if self.half is None else HALVES.index(self.half)
        for unit in self._all_units(lazy and self.kind == "treebank" and not self.pairs):
            count += 1
            if (self.limit is not None and unit.index >= self.limit) or (parity is not None
                                                                         and unit.index % 2 != parity):
                unit.parsed()  # checked, not yielded
            elif parity is None:
                yield unit
            else:
                yield dataclasses.replace(unit, index=unit.index // 2)
        self._set_total(count)

    def validate(self) -> None:
        """Read the whole file once, now: a malformed line anywhere in it is its file:line error here, before
        a pass starts, and ``units_total`` (a progress bar's total) is known after it.

        Windows of ``documents`` are cut with the model's tokenizer, so for them only the sentences are
        read (every line checked) and the total waits for the first pass.

        >>> source = InputSource.treebank(str(sample_treebank_path()), limit=2)
        >>> source.validate(); source.units_total
        75
        """
        if self.kind == "documents":
            for _ in read_treebank(self.path):
                pass
            return
        self._set_total(sum(1 for _ in self._all_units()))

    def _set_total(self, count: int) -> None:
        if count == 0:
            raise ProbingError(f"the {self.kind} file holds no sentence", source=str(self.path))
        self.units_total = count

    def planned_units(self, shard: tuple[int, int] | None = None) -> int | None:
        """How many units a pass over this input (after ``limit``, in ``shard``) reads; None until known.

        >>> source = InputSource.treebank(str(sample_treebank_path()), limit=10)
        >>> source.planned_units(), source.validate(), source.planned_units(), source.planned_units((1, 4))
        (None, None, 10, 3)
        """
        if self.units_total is None:
            return None
        read = self.units_total if self.limit is None else min(self.limit, self.units_total)
        if self.half is not None:  # the even or odd units of those, numbered again from 0
            read = len(range(HALVES.index(self.half), read, 2))
        return read if shard is None else len(range(shard[0], read, shard[1]))

    def _all_units(self, lazy: bool = False) -> Iterator[Unit | PendingUnit]:
        if self.kind == "treebank":
            return units_from_sentences(read_treebank(self.path, lazy=lazy), pairs=self.pairs)
        if self.kind == "labelled":
            return units_from_csv(self.path)
        if self.kind == "documents":
            if self.windows is None:
                raise ValueError("a documents source needs its window rule (source.windows) before it is read")
            return self.windows.units(read_treebank(self.path), source=str(self.path))
        if self.kind == "words":
            return (_unit(unit.index, (unparsed(unit.first, unit.index),)) for unit in self._text_units())
        return self._text_units()

    def _text_units(self) -> Iterator[Unit]:
        with self.path.open(encoding="utf-8", errors="strict", newline="") as stream:
            try:
                yield from units_from_lines(stream, pairs=self.pairs)
            except UnicodeDecodeError:
                raise undecodable(self.path) from None

    @property
    def recorded_path(self) -> str:
        """How result files name the input: a public treebank by its name (``en_ewt:test``), a file as the
        user gave it. The sha256 identifies the bytes; a machine's folders are no part of a result."""
        from probing.data.datasets.names import is_treebank_name

        if self.given_as and is_treebank_name(self.given_as):
            return self.given_as
        return self.given_as or str(self.path)

    def describe(self) -> dict:
        """The ``input`` block of a result file (counts are filled in by the run)."""
        described = {
            "path": self.recorded_path,
            "file": self.path.name,
            "sha256": self.sha256,
            "kind": self.kind,
            "pairs": self.pairs,
        }
        if self.half is not None:
            described["half"] = self.half_rule()
        return described

    def half_rule(self) -> dict | None:
        """What a result records of a half: which one, and the rule in words (None when the whole file is read)."""
        if self.half is None:
            return None
        first = "the whole file" if self.limit is None else f"the first {self.limit} sentences of the file"
        return {"half": self.half, "limit": self.limit,
                "rule": f"of {first}, the sentences with an {self.half} 0-based index, numbered again from 0"}


def units_from_sentences(sentences: Iterable[Sentence | PendingSentence], *,
                         pairs: bool = False) -> Iterator[Unit | PendingUnit]:
    """Treebank sentences as word units; with ``pairs``, sentences 0+1, 2+3, ... of a document pair up.
    Pending sentences (``read_treebank(..., lazy=True)``) make pending units."""
    if not pairs:
        for index, sentence in enumerate(sentences):
            yield _unit(index, (sentence,))
        return
    index, pending = 0, None
    for sentence in sentences:
        if pending is not None and sentence.starts_document:
            yield _unit(index, (pending,))
            index, pending = index + 1, None
        if pending is None:
            pending = sentence
            continue
        yield _unit(index, (pending, sentence))
        index, pending = index + 1, None
    if pending is not None:
        yield _unit(index, (pending,))


def _unit(index: int, sentences: tuple) -> Unit | PendingUnit:
    """The unit of one sentence, or of a pair as segments A and B; pending if its sentences are."""
    if isinstance(sentences[0], PendingSentence):
        return PendingUnit(index, sentences)
    return Unit(index, sentences[0].words, sentences[1].words if len(sentences) > 1 else None, sentences=sentences)


WORD = re.compile(r"\w+(?:['\u2019.-]\w+)*|[^\w\s]")
"""A word of running text: letters and digits (with inner apostrophes, dots and hyphens), or one mark."""

NO_LABEL = "_"
"""The relation label of a word of unparsed text: none (it is the root of nothing, no relation has it)."""


def words_of(text: str) -> tuple[str, ...]:
    """The words of a line of running text, split at spaces and around punctuation.

    >>> words_of("A sentence, isn't it?")
    ('A', 'sentence', ',', "isn't", 'it', '?')
    """
    return tuple(WORD.findall(text))


def unparsed(text: str, index: int) -> Sentence:
    """A line of text as a sentence of words without a tree: every word its own root, no label, no part of
    speech, so that it holds no pair of any relation.

    >>> sentence = unparsed("Hi there.", 3)
    >>> sentence.words, sentence.heads, sentence.index
    (('Hi', 'there', '.'), (-1, -1, -1), 3)
    """
    words = words_of(text)
    return Sentence(words=words, heads=(ROOT,) * len(words), labels=(NO_LABEL,) * len(words),
                    upos=(NO_LABEL,) * len(words), index=index)


def units_from_lines(stream: IO[str], *, pairs: bool = False) -> Iterator[Unit]:
    """One sentence per line; a blank line ends a document, and pairs never cross it."""
    index, pending = 0, None
    for line in stream:
        text = line.strip()
        if not text:
            if pending is not None:
                yield Unit(index, pending)
                index, pending = index + 1, None
            continue
        if not pairs:
            yield Unit(index, text)
            index += 1
        elif pending is None:
            pending = text
        else:
            yield Unit(index, pending, text)
            index, pending = index + 1, None
    if pending is not None:
        yield Unit(index, pending)


def units_from_csv(path: Path) -> Iterator[Unit]:
    """Rows of a CSV with ``text`` and ``label`` columns as labelled text units (the header is line 1)."""
    import csv

    try:
        with path.open(encoding="utf-8", newline="") as stream:
            reader = csv.DictReader(stream)
            if not reader.fieldnames or not {"text", "label"} <= set(reader.fieldnames):
                raise ProbingError(f"needs a header with text and label columns, got {reader.fieldnames}",
                                   source=str(path), line=1)
            for index, row in enumerate(reader):
                yield Unit(index, row["text"] or "", label=row["label"] or "")
    except UnicodeDecodeError:
        raise undecodable(path) from None
    except csv.Error as error:
        raise ProbingError(f"not a readable CSV file ({error})", source=str(path)) from None


@contextlib.contextmanager
def given_by(option: str | None) -> Iterator[None]:
    """An input file that cannot be opened is named with the option that gave it.

    >>> with given_by("--text"):
    ...     check_input_file("no/such.txt", what="text")
    Traceback (most recent call last):
    probing.errors.ProbingError: --text: text file not found: no/such.txt
    """
    try:
        yield
    except ProbingError as error:
        if option is None:
            raise
        source = option if error.source is None else f"{option} {error.source}"
        raise ProbingError(error.message, source=source, line=error.line) from None


def undecodable(path: Path) -> ProbingError:
    """The error for a text file that is not UTF-8, at the line and column of its first bad byte.

    A text stream decodes a block at a time, so its error cannot say where; the
    file is read again as bytes, line by line (a newline byte never occurs inside
    a UTF-8 character), only once the error has happened.
    """
    with path.open("rb") as stream:
        for number, line in enumerate(stream, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as error:
                return ProbingError(_decoding_message(line, error), source=str(path), line=number)
    return ProbingError("not UTF-8 text", source=str(path))


def sample_treebank_path() -> Path:
    """The project's own sample treebank (75 original sentences, CC BY 4.0): the offline default input."""
    package = Path(__file__).resolve().parents[1]  # probing/
    packaged = package / "_data" / "sample.conllu"  # where a wheel puts it (pyproject.toml, force-include)
    if packaged.is_file():
        return packaged
    return package.parent / "data" / "sample.conllu"  # a source checkout


def open_input(treebank: str | None = None, text: str | None = None, *, pairs: bool = False,
               limit: int | None = None, words: bool = False) -> InputSource:
    """The input a command names: ``--treebank`` or ``--text`` (not both; ``words``: the text read as words,
    :meth:`InputSource.words`); the sample treebank by default."""
    if treebank is not None and text is not None:
        raise ProbingError("give --treebank or --text, not both", source="--text")
    if limit is not None and limit < 1:
        raise ProbingError(f"must be a positive integer, got {limit}", source="--limit")
    if text is not None:
        return InputSource.words(text, limit=limit) if words else InputSource.text(text, pairs=pairs, limit=limit)
    return InputSource.treebank(treebank or str(sample_treebank_path()), pairs=pairs, limit=limit)
