"""Coreference mentions from the CorefUD ``Entity=`` annotation of a CoNLL-U file's MISC column.

The treebank reader (probing.data.treebank) gives sentences; this module groups
them into documents and reads the entity brackets on their words:

- A **document** runs from one ``# newdoc`` comment to the next (the start of
  the file opens one too).
- ``Entity=`` (one item of MISC, whose items are separated by ``|``) holds
  brackets, read left to right: ``(EID-etype-...`` opens a mention of entity
  EID on this word, ``EID)`` closes the innermost open mention of EID, and
  ``(EID-etype-...)`` is a one-word mention. Several may follow each other on
  one word: ``Entity=7)6)5)4)`` closes four mentions,
  ``Entity=(7-abstract-new(3-abstract-giv)`` opens one and makes another.
- The header ``# global.Entity = GRP-etype-infstat-...`` names the fields of
  an opening bracket. EID is always the first; the entity type is the field
  named ``etype`` (the second when no header names the fields). No other
  field is read. A header holds until the next one.
- A mention's span is its words, from its opening bracket's word to its
  closing one's (a span may cross sentences); its **head word** is the span's
  word whose syntactic HEAD lies outside the span (ROOT included), the first
  such in word order.
- Its **type** comes from the head word's UPOS: ``PRON`` is a pronoun,
  ``PROPN`` a proper name, anything else a nominal.

Malformed annotation is a one-line :class:`~probing.errors.ProbingError`
naming the file and line: a bracket that cannot be read, a closing bracket
of an entity with no open mention, a mention still open when its document
ends (located at the line that opened it), two ``Entity=`` items on one word.
Discontinuous mentions (CorefUD's ``EID[1/2]`` parts) are refused by name:
they are not part of the rules this module implements.

>>> import io
>>> from probing.data.treebank import read_sentences
>>> text = (
...     "# newdoc id = d1\\n"
...     "1\\tKim\\tKim\\tPROPN\\t_\\tNumber=Sing\\t2\\tnsubj\\t_\\tEntity=(1-person-new)\\n"
...     "2\\tsaw\\tsee\\tVERB\\t_\\t_\\t0\\troot\\t_\\t_\\n"
...     "3\\ther\\ther\\tPRON\\t_\\t_\\t4\\tnmod:poss\\t_\\tEntity=(2-person-new(1-person-giv)\\n"
...     "4\\tdog\\tdog\\tNOUN\\t_\\t_\\t2\\tobj\\t_\\tEntity=2)\\n\\n"
... )
>>> (document,) = documents_of(read_sentences(io.StringIO(text), source="d.conllu"), source="d.conllu")
>>> [(m.entity, m.text, m.head_form, m.type) for m in document.mentions]
[('1', 'Kim', 'Kim', 'proper'), ('1', 'her', 'her', 'pronoun'), ('2', 'her dog', 'dog', 'nominal')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from probing.data.treebank import ROOT, Sentence
from probing.errors import ProbingError

TYPES = ("pronoun", "proper", "nominal")
"""Mention types, by the head word's UPOS (PRON, PROPN, anything else)."""

DEFAULT_FIELDS = ("eid", "etype")
"""The fields of an opening bracket when no ``# global.Entity`` header names them (CorefUD's default order)."""

_HEADER = re.compile(r"#\s*global\.Entity\s*=\s*(\S+)\s*")
_BRACKET = re.compile(r"\((?P<open>[^()]+)(?P<one_word>\))?|(?P<close>[^()]+)\)")
"""One bracket: ``(BODY`` or ``(BODY)`` (an opening, one-word when closed at once) or ``EID)``."""
_SHOWN = 40


@dataclass(frozen=True)
class Bracket:
    """One bracket of an ``Entity=`` value: ``kind`` is ``open``, ``one_word`` or ``close``."""

    kind: str
    entity: str
    fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mention:
    """One mention of an entity in a document.

    Positions are ``(sentence, word)``: the sentence's index within its
    document and the word's within its sentence, both from 0. ``text`` is the
    span's words joined by single spaces; ``head_form``, ``head_upos`` and
    ``head_feats`` (raw FEATS, ``_`` when empty) are the head word's; ``line``
    is the file line of the word whose bracket opened the mention.
    """

    entity: str
    etype: str | None
    start: tuple[int, int]
    end: tuple[int, int]
    head: tuple[int, int]
    text: str
    head_form: str
    head_upos: str
    head_feats: str
    line: int

    @property
    def type(self) -> str:
        """``pronoun``, ``proper`` or ``nominal``, by the head word's UPOS."""
        return mention_type(self.head_upos)


@dataclass(frozen=True)
class Document:
    """The sentences of one document and its mentions, in the order their spans close."""

    id: str | None
    sentences: tuple[Sentence, ...]
    mentions: tuple[Mention, ...]


def mention_type(upos: str) -> str:
    """The mention type of a head word's UPOS.

    >>> mention_type("PRON"), mention_type("PROPN"), mention_type("DET")
    ('pronoun', 'proper', 'nominal')
    """
    return {"PRON": "pronoun", "PROPN": "proper"}.get(upos, "nominal")


def parse_brackets(value: str, *, source: str | None = None, line: int | None = None) -> list[Bracket]:
    """The brackets of one ``Entity=`` value, in order; an unreadable value is an error at ``source:line``.

    >>> [(b.kind, b.entity) for b in parse_brackets("7)6)(8-place-new(9-person-giv)")]
    [('close', '7'), ('close', '6'), ('open', '8'), ('one_word', '9')]
    >>> parse_brackets("(3-person", source="x.conllu", line=4)[0].fields
    ('3', 'person')
    >>> parse_brackets("3-person", source="x.conllu", line=4)
    Traceback (most recent call last):
    probing.errors.ProbingError: x.conllu:4: cannot read Entity='3-person': expected brackets such as (EID-etype..., (EID-etype...) or EID)
    """
    brackets: list[Bracket] = []
    position = 0
    while position < len(value):
        match = _BRACKET.match(value, position)
        if match is None:
            raise _unreadable(value, source, line)
        position = match.end()
        if match.group("close") is not None:
            entity = match.group("close")
            if "-" in entity or not entity.strip() or entity != entity.strip():
                raise _unreadable(value, source, line)
            brackets.append(Bracket("close", _checked_entity(entity, value, source, line)))
            continue
        fields = tuple(match.group("open").split("-"))
        if not fields[0] or fields[0] != fields[0].strip():
            raise _unreadable(value, source, line)
        entity = _checked_entity(fields[0], value, source, line)
        brackets.append(Bracket("one_word" if match.group("one_word") else "open", entity, fields))
    if not brackets:
        raise _unreadable(value, source, line)
    return brackets


def _checked_entity(entity: str, value: str, source: str | None, line: int | None) -> str:
    if "[" in entity or "]" in entity:
        raise ProbingError(f"discontinuous mention {_shown(entity)} in Entity={_shown(value)}: mentions in parts "
                           "are not supported", source=source, line=line)
    return entity


def _unreadable(value: str, source: str | None, line: int | None) -> ProbingError:
    return ProbingError(f"cannot read Entity={_shown(value)}: expected brackets such as (EID-etype..., "
                        "(EID-etype...) or EID)", source=source, line=line)


def _shown(text: str) -> str:
    return repr(text) if len(text) <= _SHOWN else repr(text[:_SHOWN]) + "..."


def entity_value(misc: str, *, source: str | None = None, line: int | None = None) -> str | None:
    """The value of the ``Entity=`` item of a MISC column, or None when it has none.

    MISC is split here rather than by conllu's field parser (which reads FEATS, in
    probing.analyses.coref.antecedents): that parser keeps the last of two ``Entity=`` items without a word,
    where two are an error, and cuts a value at its second ``=``.

    >>> entity_value("SpaceAfter=No|Entity=(1-person)|MSeg=a-b"), entity_value("_")
    ('(1-person)', None)
    """
    if "Entity=" not in misc:
        return None
    values = [item[len("Entity="):] for item in misc.split("|") if item.startswith("Entity=")]
    if len(values) > 1:
        raise ProbingError("MISC holds two Entity= items; merge them into one", source=source, line=line)
    return values[0] if values else None


def header_fields(comment: str) -> tuple[str, ...] | None:
    """The field names a ``# global.Entity`` comment declares, lowercased; None for any other comment.

    >>> header_fields("# global.Entity = GRP-etype-infstat-salience")
    ('grp', 'etype', 'infstat', 'salience')
    """
    match = _HEADER.fullmatch(comment)
    return None if match is None else tuple(name.lower() for name in match.group(1).split("-"))


def documents_of(sentences: Iterable[Sentence], *, source: str = "<treebank>") -> Iterator[Document]:
    """Group sentences into documents (a ``# newdoc`` starts one) and read each one's mentions.

    A document is read whole before it is yielded: a mention may close in a
    later sentence than the one that opened it.
    """
    fields = DEFAULT_FIELDS
    pending: list[Sentence] = []
    for sentence in sentences:
        if pending and sentence.starts_document:
            document, fields = _document(pending, fields, source)
            yield document
            pending = []
        pending.append(sentence)
    if pending:
        document, _ = _document(pending, fields, source)
        yield document


def _document(sentences: Sequence[Sentence], fields: tuple[str, ...], source: str) -> tuple[Document, tuple[str, ...]]:
    """The document of ``sentences`` and the header fields in force after it."""
    open_mentions: dict[str, list[tuple[tuple[int, int], str | None, int]]] = {}  # EID -> stack of openings
    mentions: list[Mention] = []
    for number, sentence in enumerate(sentences):
        for comment in sentence.comments:
            declared = header_fields(comment)
            if declared is not None:
                fields = declared
        etype_at = fields.index("etype") if "etype" in fields else None
        for word, misc in enumerate(sentence.misc):
            line = sentence.word_lines[word] if sentence.word_lines else None
            value = entity_value(misc, source=source, line=line)
            if value is None:
                continue
            for bracket in parse_brackets(value, source=source, line=line):
                here = (number, word)
                if bracket.kind == "close":
                    stack = open_mentions.get(bracket.entity)
                    if not stack:
                        raise ProbingError(f"Entity {_shown(value)} closes entity {bracket.entity}, which has no "
                                           "open mention here", source=source, line=line)
                    start, etype, opened = stack.pop()
                    mentions.append(_mention(sentences, bracket.entity, etype, start, here, opened))
                    continue
                etype = bracket.fields[etype_at] if etype_at is not None and etype_at < len(bracket.fields) else None
                if bracket.kind == "one_word":
                    mentions.append(_mention(sentences, bracket.entity, etype, here, here, line))
                else:
                    open_mentions.setdefault(bracket.entity, []).append((here, etype, line))
    still_open = [(opened, entity) for entity, stack in open_mentions.items() for _, _, opened in stack]
    if still_open:
        opened, entity = min(still_open, key=lambda item: (item[0] or 0))
        name = f"document {sentences[0].doc_id}" if sentences[0].doc_id else "its document"
        raise ProbingError(f"a mention of entity {entity} opens here and is still open at the end of {name}",
                           source=source, line=opened)
    return Document(sentences[0].doc_id, tuple(sentences), tuple(mentions)), fields


def _mention(sentences: Sequence[Sentence], entity: str, etype: str | None, start: tuple[int, int],
             end: tuple[int, int], line: int | None) -> Mention:
    words = list(_span(sentences, start, end))
    head = next(position for position in words if _outside(sentences, position, start, end))
    sentence = sentences[head[0]]
    feats = sentence.feats[head[1]] if sentence.feats else "_"
    return Mention(
        entity=entity,
        etype=etype,
        start=start,
        end=end,
        head=head,
        text=" ".join(sentences[s].words[w] for s, w in words),
        head_form=sentence.words[head[1]],
        head_upos=sentence.upos[head[1]],
        head_feats=feats,
        line=line or 0,
    )


def _span(sentences: Sequence[Sentence], start: tuple[int, int], end: tuple[int, int]) -> Iterator[tuple[int, int]]:
    """Every (sentence, word) position from ``start`` to ``end``, both included, in word order."""
    for number in range(start[0], end[0] + 1):
        first = start[1] if number == start[0] else 0
        last = end[1] if number == end[0] else len(sentences[number]) - 1
        for word in range(first, last + 1):
            yield number, word


def _outside(sentences: Sequence[Sentence], position: tuple[int, int], start, end) -> bool:
    """Whether the word at ``position`` has its HEAD outside the span ``start..end`` (ROOT is outside)."""
    number, word = position
    head = sentences[number].heads[word]
    return head == ROOT or not start <= (number, head) <= end


def read_documents(path) -> Iterator[Document]:
    """The documents of a CoNLL-U file with their mentions (errors name the file and line)."""
    from probing.data.treebank import read_treebank

    return documents_of(read_treebank(path), source=str(path))
