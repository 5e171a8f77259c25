"""Fuzzing the Entity= reader: random documents with random mentions, written as CorefUD brackets,
then randomly damaged.

The property: reading gives the mentions that the rules say the text holds,
or raises a ProbingError whose text is one line starting with ``file:line:``
at the very line the rules blame; never another exception. What the rules
say is decided by ``expected_reading`` below: a plain, non-streaming
restatement of the rules in probing/data/entities.py's docstring, written
from those rules (a character scanner, not the reader's regular expression).
Undamaged text must also give back exactly the mentions that were written.
"""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from probing.data.entities import documents_of
from probing.data.treebank import read_sentences
from probing.errors import ProbingError

SOURCE = "fuzz.conllu"
Position = tuple[int, int]  # (sentence within its document, word within its sentence)


# --- the rules, restated ------------------------------------------------------------------------

class Broken(Exception):
    def __init__(self, line: int):
        self.line = line


def scan(value: str, line: int) -> list[tuple[str, str]]:
    """(kind, EID) of each bracket of an Entity= value, by the rules: ``(EID-...``, ``(EID-...)``, ``EID)``."""
    found, i = [], 0
    if not value:
        raise Broken(line)
    while i < len(value):
        if value[i] == "(":
            j = i + 1
            while j < len(value) and value[j] not in "()":
                j += 1
            eid = value[i + 1:j].split("-")[0]
            if not eid or eid != eid.strip() or "[" in eid or "]" in eid:
                raise Broken(line)
            if j < len(value) and value[j] == ")":
                found.append(("one", eid))
                i = j + 1
            else:
                found.append(("open", eid))
                i = j
        else:
            j = i
            while j < len(value) and value[j] not in "()":
                j += 1
            eid = value[i:j]
            if j == len(value) or value[j] == "(" or not eid or "-" in eid or eid != eid.strip() or "[" in eid or "]" in eid:
                raise Broken(line)
            found.append(("close", eid))
            i = j + 1
    return found


def expected_reading(text: str):
    """Per document, the sorted (entity, start, end, head) of its mentions; or Broken(line)."""
    documents, current = [], None
    sentence, line_number = None, 0
    for line_number, line in enumerate(text.split("\n"), start=1):
        if line.startswith("# newdoc"):
            if current is not None and current["sentences"]:
                documents.append(current)
                current = None
            current = current or {"sentences": []}
        elif line and not line.startswith("#"):
            columns = line.split("\t")
            if not columns[0].isdigit():
                continue  # a multiword token or an empty node: not a word
            if current is None:
                current = {"sentences": []}
            if sentence is None:
                sentence = []
                current["sentences"].append(sentence)
            sentence.append((int(columns[6]) - 1, columns[9], line_number))
        elif not line:
            sentence = None
    if current is not None and current["sentences"]:
        documents.append(current)
    try:
        return [_document_mentions(document["sentences"]) for document in documents]
    except Broken as broken:
        return broken


def _document_mentions(sentences) -> list:
    stacks: dict[str, list[tuple[Position, int]]] = {}
    mentions = []
    for s, words in enumerate(sentences):
        for w, (_, misc, line) in enumerate(words):
            values = [item[7:] for item in misc.split("|") if item.startswith("Entity=")]
            if not values:
                continue
            for kind, eid in scan(values[0], line):
                if kind == "open":
                    stacks.setdefault(eid, []).append(((s, w), line))
                elif kind == "one":
                    mentions.append((eid, (s, w), (s, w)))
                else:
                    if not stacks.get(eid):
                        raise Broken(line)
                    start, _ = stacks[eid].pop()
                    mentions.append((eid, start, (s, w)))
    opened = [line for stack in stacks.values() for _, line in stack]
    if opened:
        raise Broken(min(opened))
    return sorted((eid, start, end, _head(sentences, start, end)) for eid, start, end in mentions)


def _head(sentences, start: Position, end: Position) -> Position:
    """The first word of the span whose HEAD (-1: ROOT) lies outside it."""
    for s in range(start[0], end[0] + 1):
        for w in range(len(sentences[s])):
            if not start <= (s, w) <= end:
                continue
            head = sentences[s][w][0]
            if head < 0 or not start <= (s, head) <= end:
                return s, w
    raise AssertionError("a span always has a word whose head lies outside it")


# --- random documents ---------------------------------------------------------------------------

EIDS = ("1", "2", "3", "e4")


@st.composite
def document_texts(draw):
    """(text, the mentions written): 1-3 documents of 1-3 sentences of 1-5 words (random trees)
    and random mentions; spans of one entity nest or are disjoint, spans of two entities may cross."""
    lines, written = [], []
    for d in range(draw(st.integers(1, 3))):
        lengths = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
        heads = [[-1] + [draw(st.integers(0, i - 1)) for i in range(1, n)] for n in lengths]
        positions = [(s, w) for s, n in enumerate(lengths) for w in range(n)]
        mentions: list[tuple[str, Position, Position]] = []
        for _ in range(draw(st.integers(0, 6))):
            a, b = sorted(draw(st.lists(st.sampled_from(positions), min_size=2, max_size=2)))
            eid = draw(st.sampled_from(EIDS))
            if all(not _cross((a, b), (start, end)) for other, start, end in mentions if other == eid):
                mentions.append((eid, a, b))
        lines += [f"# newdoc id = d{d}", "# global.Entity = eid-etype-infstat"]
        for s, n in enumerate(lengths):
            lines.append(f"# sent_id = d{d}-{s}")
            for w in range(n):
                value = _brackets(mentions, (s, w))
                extra = draw(st.sampled_from(["", "SpaceAfter=No|"]))
                misc = f"{extra}Entity={value}" if value else (extra.rstrip("|") or "_")
                head = heads[s][w] + 1
                lines.append("\t".join([str(w + 1), f"w{w}", "_", "X", "_", "_", str(head),
                                        "root" if head == 0 else "dep", "_", misc]))
            lines.append("")
        sentences = [[(heads[s][w], "", 0) for w in range(n)] for s, n in enumerate(lengths)]
        written.append(sorted((eid, a, b, _head(sentences, a, b)) for eid, a, b in mentions))
    return "\n".join(lines) + "\n", written


def _cross(first, second) -> bool:
    (a1, b1), (a2, b2) = first, second
    return (a1 < a2 <= b1 < b2) or (a2 < a1 <= b2 < b1)


def _brackets(mentions, here: Position) -> str:
    opening = sorted((m for m in mentions if m[1] == here and m[2] > here), key=lambda m: m[2], reverse=True)
    one_word = [m for m in mentions if m[1] == m[2] == here]
    closing = sorted((m for m in mentions if m[2] == here and m[1] < here), key=lambda m: m[1], reverse=True)
    # Closings first: a closing written right after an opening would read as one one-word mention
    # ("(2-thing-new" + "1)" is "(2-thing-new1)"), so CorefUD writers never put one there.
    return ("".join(f"{eid})" for eid, _, _ in closing) + "".join(f"({eid}-thing-new" for eid, _, _ in opening)
            + "".join(f"({eid}-thing-new)" for eid, _, _ in one_word))


# --- damage -------------------------------------------------------------------------------------

GARBAGE = st.text(st.sampled_from("()-e12x[]/"), min_size=0, max_size=6)


@st.composite
def damaged(draw, text: str) -> tuple[str, str]:
    lines = text.split("\n")
    entity_lines = [i for i, line in enumerate(lines) if "Entity=" in line]
    token_lines = [i for i, line in enumerate(lines) if "\t" in line]
    newdocs = [i for i, line in enumerate(lines) if line.startswith("# newdoc")]
    kinds = ["garbage value", "add closing", "add opening"]
    if entity_lines:
        kinds += ["drop a bracket", "double a bracket", "swap two values"]
    if len(newdocs) > 1:
        kinds.append("drop a newdoc")
    kind = draw(st.sampled_from(kinds))
    if kind == "drop a newdoc":
        del lines[draw(st.sampled_from(newdocs[1:]))]
        return "\n".join(lines), kind
    if kind == "swap two values" and len(entity_lines) > 1:
        i, j = draw(st.lists(st.sampled_from(entity_lines), min_size=2, max_size=2, unique=True))
        ci, cj = lines[i].split("\t"), lines[j].split("\t")
        ci[9], cj[9] = cj[9], ci[9]
        lines[i], lines[j] = "\t".join(ci), "\t".join(cj)
        return "\n".join(lines), kind
    i = draw(st.sampled_from(entity_lines if kind in ("drop a bracket", "double a bracket") else token_lines))
    columns = lines[i].split("\t")
    value = columns[9].split("Entity=")[1] if "Entity=" in columns[9] else ""
    pieces = _pieces(value)
    if kind == "drop a bracket" and pieces:
        del pieces[draw(st.integers(0, len(pieces) - 1))]
    elif kind == "double a bracket" and pieces:
        k = draw(st.integers(0, len(pieces) - 1))
        pieces.insert(k, pieces[k])
    elif kind == "add closing":
        pieces.insert(draw(st.integers(0, len(pieces))), draw(st.sampled_from(EIDS)) + ")")
    elif kind == "add opening":
        pieces.insert(draw(st.integers(0, len(pieces))), f"({draw(st.sampled_from(EIDS))}-x")
    else:
        pieces = [draw(GARBAGE)]
    columns[9] = "Entity=" + "".join(pieces)
    lines[i] = "\t".join(columns)
    return "\n".join(lines), kind


def _pieces(value: str) -> list[str]:
    """Split a well-formed value into its brackets (the damage works on whole brackets)."""
    pieces, current = [], ""
    for char in value:
        if char == "(" and current:
            pieces.append(current)
            current = ""
        current += char
        if char == ")":
            pieces.append(current)
            current = ""
    return pieces + ([current] if current else [])


# --- the properties -------------------------------------------------------------------------------

def tool_reading(text: str):
    documents = documents_of(read_sentences(io.StringIO(text), source=SOURCE), source=SOURCE)
    return [sorted((m.entity, m.start, m.end, m.head) for m in document.mentions) for document in documents]


FUZZ = settings(deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])


@settings(FUZZ, max_examples=300)
@given(case=document_texts())
def test_written_mentions_read_back_exactly(case):
    text, written = case
    assert expected_reading(text) == written  # the restatement agrees with what was written
    assert tool_reading(text) == written


@settings(FUZZ, max_examples=400)
@given(data=st.data())
def test_damaged_brackets_read_as_the_rules_say_or_fail_at_the_line_they_blame(data):
    text, _ = data.draw(document_texts())
    text, kind = data.draw(damaged(text))
    event(kind)
    expected = expected_reading(text)
    try:
        got = tool_reading(text)
    except ProbingError as error:
        message = str(error)
        assert isinstance(expected, Broken), f"{kind}: valid text refused: {message}"
        assert "\n" not in message and message.startswith(f"{SOURCE}:{expected.line}: "), (kind, message)
        event("located error")
        return
    assert not isinstance(expected, Broken), f"{kind}: broken text accepted (the rules blame line {expected.line})"
    assert got == expected, kind
    event("read as the rules say")


@pytest.mark.real_data
@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_restatement_agrees_with_the_reader_on_gum(split):
    from conftest import real_treebank

    text = real_treebank("en_gum", split).read_text(encoding="utf-8")
    assert tool_reading(text) == expected_reading(text)
