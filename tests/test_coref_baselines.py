"""Scored mentions and the three baselines on hand-made documents whose answers are worked out by hand.

Each case is a small CoNLL-U document with Entity= brackets, read through the
reader and cut into windows as ``probing coref`` does; the expected answers
are in the comments. Positions are word positions in the window, from 0.
"""

from __future__ import annotations

import io

from probing.analyses.coref.antecedents import BASELINES, SIEVES, agree, scored_mentions
from probing.data.entities import documents_of
from probing.data.treebank import read_sentences
from probing.data.windows import WindowRule

ROOMY = WindowRule(length=1000, measure=len)


def word(index, form, upos, head, entity="", feats="_"):
    label = "root" if head == 0 else "dep"
    return "\t".join([str(index), form, form.lower(), upos, "_", feats, str(head), label, "_",
                      f"Entity={entity}" if entity else "_"])


def windows(*sentences, rule=ROOMY):
    """Windows of one document made of ``sentences`` (lists of ``word`` rows)."""
    text = "# newdoc id = d\n" + "".join("\n".join(rows) + "\n\n" for rows in sentences)
    documents = documents_of(read_sentences(io.StringIO(text), source="hand.conllu"), source="hand.conllu")
    return list(rule.windows(documents))


def answers(window):
    """Per scored mention: (head, type, antecedents, nearest, head match, rule-based predictions, sieve)."""
    return [(s.head, s.type, sorted(s.antecedents), *s.predicted, SIEVES[s.sieve]) for s in scored_mentions(window.mentions)]


def correct(window):
    return [dict(zip(BASELINES, s.correct)) for s in scored_mentions(window.mentions)]


def test_same_text_beats_a_nearer_mention_and_head_match_is_fooled():
    # The dog saw a dog . The dog ran .   mentions: [The dog]1 (head 1), [a dog]2 (4), [The dog]1 (7)
    (window,) = windows(
        [word(1, "The", "DET", 2, "(1-animal"), word(2, "dog", "NOUN", 3, "1)"), word(3, "saw", "VERB", 0),
         word(4, "a", "DET", 5, "(2-animal"), word(5, "dog", "NOUN", 3, "2)"), word(6, ".", "PUNCT", 3)],
        [word(1, "The", "DET", 2, "(1-animal"), word(2, "dog", "NOUN", 3, "1)"), word(3, "ran", "VERB", 0),
         word(4, ".", "PUNCT", 3)],
    )
    # only the second "The dog" has an antecedent; nearest: a dog (4, wrong); head match: the nearest
    # "dog", a dog (4, wrong); rule-based: sieve 1 (same text) finds The dog (1, right)
    assert answers(window) == [(7, "nominal", [1], 4, 4, 1, "same_text")]
    assert correct(window) == [{"nearest": False, "head_match": False, "rule_based": True}]


def test_head_match_finds_the_same_head_word_in_another_text():
    # Kim bought a car . The car broke .
    (window,) = windows(
        [word(1, "Kim", "PROPN", 2, "(1-person)"), word(2, "bought", "VERB", 0), word(3, "a", "DET", 4, "(2-object"),
         word(4, "car", "NOUN", 2, "2)"), word(5, ".", "PUNCT", 2)],
        [word(1, "The", "DET", 2, "(2-object"), word(2, "Car", "NOUN", 3, "2)"), word(3, "broke", "VERB", 0),
         word(4, ".", "PUNCT", 3)],
    )
    # The Car (head 6): nearest car (3, right); head match "car" = "Car" lowercased (3, right);
    # rule-based: no same text, same head word -> car (3, right)
    assert answers(window) == [(6, "nominal", [3], 3, 3, 3, "same_head")]
    assert correct(window) == [{"nearest": True, "head_match": True, "rule_based": True}]


def test_agreement_skips_a_nearer_plural_and_a_missing_feature_agrees():
    # Kim saw the boats . She left .   Kim has no Gender: a missing feature agrees
    (window,) = windows(
        [word(1, "Kim", "PROPN", 2, "(1-person)", "Number=Sing"), word(2, "saw", "VERB", 0),
         word(3, "the", "DET", 4, "(2-object"), word(4, "boats", "NOUN", 2, "2)", "Number=Plur"),
         word(5, ".", "PUNCT", 2)],
        [word(1, "She", "PRON", 2, "(1-person)", "Gender=Fem|Number=Sing|Person=3"), word(2, "left", "VERB", 0)],
    )
    # She (5): nearest boats (3, wrong); head match: no "she" (None, wrong); rule-based: no same text
    # or head, agreement -> Kim (0, right)
    assert answers(window) == [(5, "pronoun", [0], 3, None, 0, "agreement")]
    assert correct(window) == [{"nearest": False, "head_match": False, "rule_based": True}]


def test_when_nothing_agrees_the_last_sieve_takes_the_nearest_mention():
    # I met Kim . They laughed .   They (Plur) refers to I (Sing): no candidate agrees
    (window,) = windows(
        [word(1, "I", "PRON", 2, "(1-person)", "Number=Sing|Person=1"), word(2, "met", "VERB", 0),
         word(3, "Kim", "PROPN", 2, "(2-person)", "Number=Sing"), word(4, ".", "PUNCT", 2)],
        [word(1, "They", "PRON", 2, "(1-person)", "Number=Plur|Person=3"), word(2, "laughed", "VERB", 0)],
    )
    assert answers(window) == [(4, "pronoun", [0], 2, None, 2, "any")]
    assert correct(window) == [{"nearest": False, "head_match": False, "rule_based": False}]


def test_every_earlier_mention_of_the_entity_is_an_antecedent():
    # Kim ... Kim ... she: the pronoun's antecedents are both Kims; nearest is the second Kim
    (window,) = windows(
        [word(1, "Kim", "PROPN", 2, "(1-person)"), word(2, "called", "VERB", 0), word(3, "Kim", "PROPN", 2, "(1-person)")],
        [word(1, "she", "PRON", 2, "(1-person)"), word(2, "said", "VERB", 0)],
    )
    assert answers(window) == [(2, "proper", [0], 0, 0, 0, "same_text"),
                               (3, "pronoun", [0, 2], 2, None, 2, "agreement")]


def test_mentions_sharing_a_head_word_are_never_candidates():
    # [the [president]] : two mentions of entity 1 with head word "president"; neither is scored
    (window,) = windows([word(1, "the", "DET", 2, "(1-person"), word(2, "president", "NOUN", 3, "(1-person)1)"),
                         word(3, "spoke", "VERB", 0)])
    assert answers(window) == []
    # with an earlier mention of entity 1, both are scored, and neither is the other's candidate
    (window,) = windows([word(1, "Lee", "PROPN", 4, "(1-person)"), word(2, "the", "DET", 3, "(1-person"),
                         word(3, "president", "NOUN", 1, "(1-person)1)"), word(4, "spoke", "VERB", 0)])
    assert [(head, antecedents, nearest) for head, _, antecedents, nearest, *_ in answers(window)] == [
        (2, [0], 0), (2, [0], 0)]


def test_a_baseline_is_right_when_its_word_heads_an_antecedent_even_if_it_picked_another_entity():
    # Word 0 heads two mentions (entities 1 and 2); the scored mention of entity 1 at word 2 has the
    # nearest preceding word 0: right, whichever of the two mentions "nearest" means
    (window,) = windows([word(1, "Kim", "PROPN", 2, "(1-person)(2-person)"), word(2, "and", "CCONJ", 0),
                         word(3, "Kim", "PROPN", 2, "(1-person)")])
    assert answers(window) == [(2, "proper", [0], 0, 0, 0, "same_text")]
    assert correct(window) == [{"nearest": True, "head_match": True, "rule_based": True}]


def test_an_antecedent_in_an_earlier_window_does_not_count():
    rule = WindowRule(length=3, measure=len)
    first, second = windows(
        [word(1, "Kim", "PROPN", 2, "(1-person)"), word(2, "slept", "VERB", 0)],
        [word(1, "Kim", "PROPN", 2, "(1-person)"), word(2, "woke", "VERB", 0)],
        rule=rule,
    )
    assert answers(first) == answers(second) == []


def test_agreement_compares_number_gender_and_person_only():
    assert agree("Number=Sing|Person=3|Case=Nom", "Number=Sing|Person=3|Case=Acc")
    assert not agree("Gender=Masc", "Gender=Fem")
    assert not agree("Person=1", "Person=3")
    assert agree("_", "Number=Plur")
