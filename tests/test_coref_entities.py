"""The CorefUD Entity= reader: bracket grammar, documents, head words, types, located errors."""

from __future__ import annotations

import io

import pytest

from probing.data.entities import Bracket, documents_of, parse_brackets, read_documents
from probing.data.treebank import read_sentences
from probing.errors import ProbingError


def row(index, form, head, misc="_", upos="NOUN", feats="_", label="dep"):
    return "\t".join([str(index), form, form.lower(), upos, "_", feats, str(head), label, "_", misc])


def documents(*blocks: str, source: str = "c.conllu"):
    text = "\n".join(blocks) + "\n"
    return list(documents_of(read_sentences(io.StringIO(text), source=source), source=source))


def spans(document):
    return sorted((m.entity, m.start, m.end) for m in document.mentions)


# --- the grammar of one Entity= value ----------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("(1-person-new)", [Bracket("one_word", "1", ("1", "person", "new"))]),
    ("(e12-place", [Bracket("open", "e12", ("e12", "place"))]),
    ("e12)", [Bracket("close", "e12")]),
    ("(7", [Bracket("open", "7", ("7",))]),                       # an opening with EID only
    ("7)6)5)4)", [Bracket("close", e) for e in "7654"]),
    ("(7-abstract-new(3-abstract-giv)", [Bracket("open", "7", ("7", "abstract", "new")),
                                         Bracket("one_word", "3", ("3", "abstract", "giv"))]),
    ("(3-a)7)", [Bracket("one_word", "3", ("3", "a")), Bracket("close", "7")]),
    ("2)(5-event-new", [Bracket("close", "2"), Bracket("open", "5", ("5", "event", "new"))]),
    ("(6-abstract-new-nnnnn-cf3-2,4-sgl", [Bracket("open", "6", ("6", "abstract", "new", "nnnnn", "cf3", "2,4", "sgl"))]),
])
def test_brackets_are_read_left_to_right(value, expected):
    assert parse_brackets(value) == expected


@pytest.mark.parametrize("value", ["", "3", "3-x", "()", "(", ")", "(-person)", "(1-a)x", "1-a)", "( 1-a)",
                                   "(1-a)(", " 1)", "(1-a))"])
def test_an_unreadable_value_is_an_error_at_its_line(value):
    with pytest.raises(ProbingError) as error:
        parse_brackets(value, source="f.conllu", line=12)
    assert str(error.value).startswith("f.conllu:12: cannot read Entity=")
    assert "\n" not in str(error.value)


def test_discontinuous_mentions_are_refused_by_name():
    with pytest.raises(ProbingError, match=r"f.conllu:3: discontinuous mention 'e5\[1/2\]'"):
        parse_brackets("(e5[1/2]-person", source="f.conllu", line=3)


# --- documents and mentions -------------------------------------------------------------------

def test_nested_multi_word_and_one_word_mentions():
    (document,) = documents(
        "# newdoc id = d",
        row(1, "Maria", 3, "Entity=(1-object-new(2-person-new)", upos="PROPN", label="nmod:poss"),
        row(2, "'s", 1, upos="PART", label="case"),
        row(3, "brother", 4, "Entity=1)", label="nsubj"),
        row(4, "left", 0, upos="VERB", label="root"),
        "",
    )
    assert spans(document) == [("1", (0, 0), (0, 2)), ("2", (0, 0), (0, 0))]
    by_entity = {m.entity: m for m in document.mentions}
    assert by_entity["1"].text == "Maria 's brother" and by_entity["1"].head == (0, 2)
    assert by_entity["1"].etype == "object" and by_entity["2"].etype == "person"
    assert (by_entity["1"].type, by_entity["2"].type) == ("nominal", "proper")


def test_a_closing_bracket_closes_the_innermost_open_mention_of_its_entity():
    # 1 opens twice; the first 1) ends the inner one, the second the outer one; 2 crosses them
    (document,) = documents(
        row(1, "a", 0, "Entity=(1-x(2-y", label="root"),
        row(2, "b", 1, "Entity=(1-x"),
        row(3, "c", 1, "Entity=1)"),
        row(4, "d", 1, "Entity=2)"),
        row(5, "e", 1, "Entity=1)"),
        "",
    )
    assert spans(document) == [("1", (0, 0), (0, 4)), ("1", (0, 1), (0, 2)), ("2", (0, 0), (0, 3))]


def test_several_closings_on_one_word_and_a_mention_across_sentences():
    (document,) = documents(
        "# newdoc id = d",
        row(1, "w", 0, "Entity=(4-a(5-b(6-c", label="root"),
        "",
        row(1, "x", 2, "Entity=(7-d"),
        row(2, "y", 0, "Entity=7)6)5)4)", label="root"),
        "",
    )
    assert spans(document) == [("4", (0, 0), (1, 1)), ("5", (0, 0), (1, 1)), ("6", (0, 0), (1, 1)),
                               ("7", (1, 0), (1, 1))]
    assert [m.entity for m in document.mentions] == ["7", "6", "5", "4"]  # in the order they close
    across = next(m for m in document.mentions if m.entity == "4")
    assert across.text == "w x y" and across.head == (0, 0)  # the first root in the span


def test_documents_run_from_one_newdoc_to_the_next_and_entities_do_not_leak():
    first, second = documents(
        "# newdoc id = a", row(1, "x", 0, "Entity=(1-p", label="root"), row(2, "y", 1, "Entity=1)"), "",
        "# newdoc id = b", row(1, "z", 0, "Entity=(1-q)", label="root"), "",
    )
    assert (first.id, second.id) == ("a", "b")
    assert spans(first) == [("1", (0, 0), (0, 1))] and spans(second) == [("1", (0, 0), (0, 0))]
    assert len(first.sentences) == len(second.sentences) == 1


def test_the_header_names_the_fields_and_holds_until_the_next_one():
    first, second = documents(
        "# newdoc id = a", "# global.Entity = GRP-infstat-etype", row(1, "x", 0, "Entity=(1-new-person)", label="root"), "",
        row(1, "y", 0, "Entity=(2-giv-place)", label="root"), "",
        "# newdoc id = b", "# global.Entity = eid-etype", row(1, "z", 0, "Entity=(3-event-new)", label="root"), "",
    )
    assert [m.etype for m in first.mentions] == ["person", "place"]
    assert [m.etype for m in second.mentions] == ["event"]


def test_without_a_header_etype_is_the_second_field_and_may_be_missing():
    (document,) = documents(row(1, "x", 0, "Entity=(1-person)(2)", label="root"), "")
    assert sorted((m.entity, m.etype) for m in document.mentions) == [("1", "person"), ("2", None)]


def test_other_misc_items_are_ignored():
    (document,) = documents(row(1, "x", 0, "SpaceAfter=No|Entity=(1-p)|MSeg=x-y", label="root"), "")
    assert spans(document) == [("1", (0, 0), (0, 0))]


# --- head words and types ---------------------------------------------------------------------

def head_of(*words, span):
    """The head word (0-based) of a mention over ``span`` (first, last) in a sentence of ``words``
    given as (form, HEAD 1-based, UPOS)."""
    first, last = span
    lines = []
    for index, (form, head, upos) in enumerate(words, start=1):
        value = ""
        if index == first + 1:
            value += "(1-x" + (")" if first == last else "")
        if index == last + 1 and first != last:
            value += "1)"
        lines.append(row(index, form, head, f"Entity={value}" if value else "_", upos=upos,
                         label="root" if head == 0 else "dep"))
    (document,) = documents(*lines, "")
    (mention,) = document.mentions
    return mention.head[1], mention.type


def test_the_head_word_is_the_span_word_whose_head_lies_outside():
    # "the old bicycle": the and old depend on bicycle, bicycle on the verb
    sentence = [("repaired", 0, "VERB"), ("the", 4, "DET"), ("old", 4, "ADJ"), ("bicycle", 1, "NOUN")]
    assert head_of(*sentence, span=(1, 3)) == (3, "nominal")


def test_the_head_word_may_come_first_in_the_span():
    # "Kim and Lee": Lee depends on Kim, and on Lee; Kim on the verb
    sentence = [("Kim", 4, "PROPN"), ("and", 3, "CCONJ"), ("Lee", 1, "PROPN"), ("left", 0, "VERB")]
    assert head_of(*sentence, span=(0, 2)) == (0, "proper")


def test_of_several_words_whose_head_is_outside_the_first_is_the_head_word():
    # "saw the": saw is the root, the depends on dog outside the span
    sentence = [("I", 2, "PRON"), ("saw", 0, "VERB"), ("the", 4, "DET"), ("dog", 2, "NOUN")]
    assert head_of(*sentence, span=(1, 2)) == (1, "nominal")
    assert head_of(*sentence, span=(2, 3)) == (3, "nominal")
    assert head_of(*sentence, span=(0, 0)) == (0, "pronoun")


def test_the_root_word_is_the_head_of_a_span_that_holds_the_whole_sentence():
    sentence = [("It", 2, "PRON"), ("rains", 0, "VERB")]
    assert head_of(*sentence, span=(0, 1)) == (1, "nominal")


# --- malformed annotation: one line, the right line ---------------------------------------------

def error_of(*blocks: str) -> ProbingError:
    with pytest.raises(ProbingError) as caught:
        documents(*blocks)
    message = str(caught.value)
    assert "\n" not in message
    return caught.value


def test_closing_an_entity_that_is_not_open_names_its_line():
    error = error_of("# newdoc id = d", row(1, "x", 0, "Entity=(1-p)", label="root"), row(2, "y", 1, "Entity=1)"), "")
    assert error.line == 3 and "closes entity 1, which has no open mention" in str(error)
    assert str(error).startswith("c.conllu:3: ")


def test_a_mention_left_open_at_the_end_of_a_document_names_the_line_that_opened_it():
    error = error_of(
        "# newdoc id = first", row(1, "x", 0, "Entity=(1-p", label="root"), row(2, "y", 1, "Entity=(2-q"),
        row(3, "z", 1, "Entity=2)"), "",
        "# newdoc id = second", row(1, "w", 0, "Entity=1)", label="root"), "",
    )
    assert error.line == 2 and "still open at the end of document first" in str(error)


def test_an_unreadable_bracket_names_its_line():
    error = error_of(row(1, "x", 0, label="root"), row(2, "y", 1, "Entity=(1-p)x"), "")
    assert error.line == 2 and "cannot read Entity='(1-p)x'" in str(error)


def test_two_entity_items_on_one_word_are_an_error():
    error = error_of(row(1, "x", 0, "Entity=(1-p)|Entity=(2-q)", label="root"), "")
    assert error.line == 1 and "two Entity= items" in str(error)


def test_read_documents_names_the_file(tmp_path):
    path = tmp_path / "bad.conllu"
    path.write_text(row(1, "x", 0, "Entity=3)", label="root") + "\n\n", encoding="utf-8")
    with pytest.raises(ProbingError, match=r"bad.conllu:1: Entity '3\)' closes entity 3"):
        list(read_documents(path))


# --- the real treebank ----------------------------------------------------------------------------

@pytest.mark.real_data
@pytest.mark.parametrize("split", ["dev", "test"])
def test_gum_reads_whole_with_a_mention_for_every_opening_bracket(split):
    """Every opening bracket of GUM (counted on the raw text) becomes one mention; one document per
    '# newdoc id'; every type occurs."""
    import re

    from conftest import real_treebank

    path = real_treebank("en_gum", split)
    raw = path.read_text(encoding="utf-8")
    openings = sum(value.count("(") for value in re.findall(r"Entity=([^|\t\n]*)", raw))
    docs = list(read_documents(path))
    assert len(docs) == raw.count("# newdoc id") == 30
    mentions = [m for d in docs for m in d.mentions]
    assert len(mentions) == openings > 7000
    assert {m.type for m in mentions} == {"pronoun", "proper", "nominal"}
    assert all(m.etype for m in mentions)
