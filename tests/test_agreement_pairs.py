"""Agreement pairs made from a treebank (docs/minimal-pairs.md, "Pairs made from a treebank"): each rule on
hand-written CoNLL-U sentences whose outcome is known, read by the project's own reader; and invariants on the real
PUD treebanks and fi_tdt, checked against the raw columns of the file, not against the generator's own helpers."""

from __future__ import annotations

import pytest
from conftest import real_treebank

from probing.data.pair_sets.agreement import FEATURES, REASONS, Lexicon, make_pairs
from probing.data.treebank import read_treebank
from probing.errors import ProbingError

FIN = "Mood=Ind|Person=3|VerbForm=Fin"


def conllu(sent_id: str, *rows: str) -> str:
    """A sentence: ``rows`` of ID FORM LEMMA UPOS FEATS HEAD DEPREL [MISC] separated by single spaces."""
    lines = [f"# sent_id = {sent_id}"]
    for row in rows:
        cells = row.split(" ")
        if "-" in cells[0]:  # a multiword token: ID and FORM, the rest empty
            lines.append("\t".join([cells[0], cells[1]] + ["_"] * 7 + [cells[2] if len(cells) > 2 else "_"]))
            continue
        word, form, lemma, upos, feats, head, deprel = cells[:7]
        misc = cells[7] if len(cells) > 7 else "_"
        lines.append("\t".join([word, form, lemma, upos, "_", feats, head, deprel, "_", misc]))
    return "\n".join(lines) + "\n\n"


def sing(extra: str = "") -> str:
    return f"{FIN.replace('Person=3', 'Number=Sing|Person=3')}{extra}"


def plur() -> str:
    return FIN.replace("Person=3", "Number=Plur|Person=3")


SENTENCES = {
    # Number: bellt <-> bellen (both in the file); Person: no other person of bellen's singular
    "s-number": ["1 Der der DET _ 2 det", "2 Hund Hund NOUN Number=Sing 3 nsubj",
                 f"3 bellt bellen VERB {sing()} 0 root SpaceAfter=No", "4 . . PUNCT _ 3 punct"],
    "s-plural": ["1 Hunde Hund NOUN Number=Plur 2 nsubj", f"2 bellen bellen VERB {plur()} 0 root SpaceAfter=No",
                 "3 . . PUNCT _ 2 punct"],
    # finite without VerbForm: a Mood is enough
    "s-mood": ["1 Katze Katze NOUN Number=Sing 2 nsubj", "2 schläft schlafen VERB Mood=Ind|Number=Sing|Person=3 0 root"],
    "s-mood-plural": ["1 Katzen Katze NOUN Number=Plur 2 nsubj",
                      "2 schlafen schlafen VERB Mood=Ind|Number=Plur|Person=3 0 root"],
    # a participle with a Mood is not finite, and has no finite aux or cop child
    "s-participle": ["1 Katze Katze NOUN Number=Sing 2 nsubj",
                     "2 geschlafen schlafen VERB Mood=Ind|Number=Sing|VerbForm=Part 0 root"],
    # p is an adjective: v is its finite cop child
    "s-cop": ["1 Der der DET _ 2 det", "2 Hund Hund NOUN Number=Sing 4 nsubj", f"3 ist sein AUX {sing()} 4 cop",
              "4 müde müde ADJ _ 0 root"],
    "s-cop-plural": ["1 Hunde Hund NOUN Number=Plur 3 nsubj", f"2 sind sein AUX {plur()} 3 cop",
                     "3 müde müde ADJ _ 0 root"],
    # two finite aux children as near to s (words 1 and 3 around s at 2): the earlier
    "s-aux-tie": [f"1 wird werden AUX {sing()} 4 aux", "2 Hund Hund NOUN Number=Sing 4 nsubj",
                  f"3 hat haben AUX {sing()} 4 aux", "4 gebellt bellen VERB VerbForm=Part 0 root"],
    # two finite aux children at distances 1 and 3: the nearer (werden, not haben)
    "s-aux-nearest": ["1 Hunde Hund NOUN Number=Plur 5 nsubj", f"2 werden werden AUX {plur()} 5 aux",
                      "3 schon schon ADV _ 5 advmod", f"4 haben haben AUX {plur()} 5 aux",
                      "5 gebellt bellen VERB VerbForm=Part 0 root"],
    # v inside a multiword token
    "s-mwt": ["1 Hund Hund NOUN Number=Sing 2 nsubj", "2-3 bellts", f"2 bellt bellen VERB {sing()} 0 root",
              "3 s es PRON _ 2 obj"],
    # no feature shared: s is first person plural, v third person singular
    "s-not-shared": ["1 Wir wir PRON Number=Plur|Person=1 2 nsubj", f"2 bellt bellen VERB {sing()} 0 root"],
    # schnarchen has one form only
    "s-no-form": ["1 Hund Hund NOUN Number=Sing 2 nsubj", f"2 schnarcht schnarchen VERB {sing()} 0 root"],
    # kann is first and third person singular: Person finds v's own form, Number none
    "s-syncretism": ["1 Hund Hund NOUN Number=Sing 2 nsubj", f"2 kann können AUX {sing()} 0 root"],
    "s-syncretism-first": ["1 Ich ich PRON Number=Sing|Person=1 2 nsubj",
                           "2 kann können AUX Mood=Ind|Number=Sing|Person=1|VerbForm=Fin 0 root"],
    # v's first letter is upper: so is w's
    "s-case": [f"1 Bellt bellen VERB {sing()} 0 root", "2 der der DET _ 3 det",
               "3 Hund Hund NOUN Number=Sing 1 nsubj SpaceAfter=No", "4 ? ? PUNCT _ 1 punct"],
    # gehen: the plural is gehen twice (once written Gehen) and gehn once: the most frequent, compared in lower case
    "s-freq": ["1 Leute Leute NOUN Number=Plur 2 nsubj", f"2 gehen gehen VERB {plur()} 0 root"],
    "s-freq-upper": ["1 Sie sie PRON Number=Plur|Person=3 2 nsubj", f"2 Gehen gehen VERB {plur()} 0 root"],
    "s-freq-rare": ["1 Leute Leute NOUN Number=Plur 2 nsubj", f"2 gehn gehen VERB {plur()} 0 root"],
    "s-freq-sing": ["1 Mann Mann NOUN Number=Sing 2 nsubj", f"2 geht gehen VERB {sing()} 0 root"],
    # laufen: laufn and laufen once each, laufn first in the file: the tie goes to laufen (code point order)
    "s-tie-first": ["1 Leute Leute NOUN Number=Plur 2 nsubj", f"2 laufn laufen VERB {plur()} 0 root"],
    "s-tie-second": ["1 Leute Leute NOUN Number=Plur 2 nsubj", f"2 laufen laufen VERB {plur()} 0 root"],
    "s-tie-sing": ["1 Mann Mann NOUN Number=Sing 2 nsubj", f"2 läuft laufen VERB {sing()} 0 root"],
    # two subjects of one verb (nsubj:outer and nsubj, both cop-linked to ist): one pair, kept once
    "s-repeat": ["1 Ziel Ziel NOUN Number=Sing 4 nsubj:outer", f"2 ist sein AUX {sing()} 4 cop",
                 "3 Hund Hund NOUN Number=Sing 4 nsubj", "4 müde müde ADJ _ 0 root"],
}


@pytest.fixture(scope="module")
def hand_treebank(tmp_path_factory):
    path = tmp_path_factory.mktemp("agreement") / "hand.conllu"
    path.write_text("".join(conllu(sent_id, *rows) for sent_id, rows in SENTENCES.items()), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def made(hand_treebank):
    sentences = list(read_treebank(hand_treebank))
    lexicon = Lexicon.of(sentences)
    by_id = {}
    for sentence in sentences:  # each sentence alone against the whole file's lexicon: its own outcome
        pairs, counts = make_pairs([sentence], lexicon)
        by_id[sentence.sent_id] = (pairs, counts)
    return by_id


def outcome(made, sent_id: str) -> tuple[dict[str, tuple[str, str]], dict[str, int]]:
    """A sentence's pairs ({id: (good, bad)}) and its arcs' reasons for no pair (those that occurred)."""
    pairs, counts = made[sent_id]
    return ({pair.pair_id: (pair.good, pair.bad) for pair in pairs},
            {reason: count for reason, count in counts.no_pair.items() if count})


def test_a_number_pair_swaps_the_verb_for_the_same_lemmas_other_number(made):
    pairs, reasons = outcome(made, "s-number")
    assert pairs == {"s-number:3:Number": ("Der Hund bellt.", "Der Hund bellen.")}  # SpaceAfter=No before the dot
    assert reasons == {}
    assert outcome(made, "s-plural")[0] == {"s-plural:2:Number": ("Hunde bellen.", "Hunde bellt.")}
    person = made["s-number"][1].features["Person"]  # the noun is third person; no other person of bellt is known
    assert person == {"shared": 1, "pairs": 0, "no_other_form": 1, "syncretism": 0}


def test_a_pair_records_its_sentence_words_feature_and_values(made):
    pair = made["s-number"][0][0]
    assert (pair.sent_id, pair.subject_id, pair.verb_id, pair.feature) == ("s-number", 2, 3, "Number")
    assert (pair.good_value, pair.bad_value, pair.good_form, pair.bad_form) == ("Sing", "Plur", "bellt", "bellen")
    minimal = pair.minimal_pair()
    assert (minimal.uid, minimal.term, minimal.pair_id) == ("number", "subject-verb agreement", "s-number:3:Number")
    assert dict(minimal.record)["subject_id"] == "2" and dict(minimal.record)["bad_value"] == "Plur"


def test_a_verb_without_verbform_is_finite_by_its_mood_and_a_participle_is_not(made):
    assert outcome(made, "s-mood")[0] == {"s-mood:2:Number": ("Katze schläft", "Katze schlafen")}
    assert outcome(made, "s-mood-plural")[0] == {"s-mood-plural:2:Number": ("Katzen schlafen", "Katzen schläft")}
    assert outcome(made, "s-participle") == ({}, {"no_finite_agreeing_word": 1})


def test_a_nominal_predicate_agrees_through_its_cop_child(made):
    assert outcome(made, "s-cop")[0] == {"s-cop:3:Number": ("Der Hund ist müde", "Der Hund sind müde")}
    assert outcome(made, "s-cop-plural")[0] == {"s-cop-plural:2:Number": ("Hunde sind müde", "Hunde ist müde")}


def test_of_several_aux_children_the_nearest_to_the_subject_agrees_ties_to_the_earlier(made):
    assert list(outcome(made, "s-aux-tie")[0]) == ["s-aux-tie:1:Number"]  # wird (1), not hat (3), both 1 away
    assert outcome(made, "s-aux-tie")[0]["s-aux-tie:1:Number"][1] == "werden Hund hat gebellt"
    pairs, _ = outcome(made, "s-aux-nearest")
    assert pairs == {"s-aux-nearest:2:Number": ("Hunde werden schon haben gebellt", "Hunde wird schon haben gebellt")}


def test_every_reason_for_no_pair(made):
    assert outcome(made, "s-participle")[1] == {"no_finite_agreeing_word": 1}
    assert outcome(made, "s-mwt") == ({}, {"in_multiword_token": 1})
    assert outcome(made, "s-not-shared") == ({}, {"feature_not_shared": 1})
    assert outcome(made, "s-no-form") == ({}, {"no_other_form": 1})
    assert outcome(made, "s-syncretism") == ({}, {"syncretism": 1})  # Person found kann, v's own form
    assert outcome(made, "s-syncretism-first") == ({}, {"syncretism": 1})
    assert set(REASONS) == {"no_finite_agreeing_word", "in_multiword_token", "feature_not_shared", "no_other_form",
                            "syncretism"}


def test_the_text_is_the_tokens_a_multiword_token_written_once(hand_treebank):
    sentence = next(s for s in read_treebank(hand_treebank) if s.sent_id == "s-mwt")
    assert sentence.text == "Hund bellts"  # not "Hund bellt s"


def test_w_keeps_the_case_pattern_of_v(made):
    assert outcome(made, "s-case")[0] == {"s-case:1:Number": ("Bellt der Hund?", "Bellen der Hund?")}
    assert outcome(made, "s-freq-upper")[0] == {"s-freq-upper:2:Number": ("Sie Gehen", "Sie Geht")}


def test_the_most_frequent_form_wins_counted_in_lower_case_and_a_tie_goes_to_code_point_order(made):
    assert outcome(made, "s-freq-sing")[0] == {"s-freq-sing:2:Number": ("Mann geht", "Mann gehen")}  # not gehn
    assert outcome(made, "s-tie-sing")[0] == {"s-tie-sing:2:Number": ("Mann läuft", "Mann laufen")}  # not laufn


def test_a_second_subject_of_the_same_verb_makes_the_same_pair_once(made):
    pairs, counts = made["s-repeat"]
    assert [pair.pair_id for pair in pairs] == ["s-repeat:2:Number"]
    assert (counts.arcs, counts.arcs_with_pair, counts.pairs, counts.repeated) == (2, 2, 1, 1)


def test_the_counts_of_a_whole_file_add_up(hand_treebank):
    sentences = list(read_treebank(hand_treebank))
    pairs, counts = make_pairs(sentences, Lexicon.of(sentences))
    arcs = sum(label.split(":")[0] == "nsubj" for sentence in sentences for label in sentence.labels)
    assert counts.arcs == arcs == counts.arcs_with_pair + sum(counts.no_pair.values())
    assert counts.pairs == len(pairs) == len({pair.pair_id for pair in pairs})
    for row in counts.features.values():
        assert row["shared"] == row["pairs"] + row["no_other_form"] + row["syncretism"]
    assert sum(row["pairs"] for row in counts.features.values()) == counts.pairs + counts.repeated
    features = [pair.feature for pair in pairs]
    assert features == sorted(features, key=FEATURES.index)  # each feature's pairs together: the paradigms


def test_another_treebank_adds_forms_to_the_lexicon(hand_treebank, tmp_path):
    sentences = list(read_treebank(hand_treebank))
    snoring = [sentence for sentence in sentences if sentence.sent_id == "s-no-form"]
    other = tmp_path / "other.conllu"
    other.write_text(conllu("o1", "1 Hunde Hund NOUN Number=Plur 2 nsubj",
                            f"2 schnarchen schnarchen VERB {plur()} 0 root"), encoding="utf-8")
    alone, _ = make_pairs(snoring, Lexicon.of(sentences))
    together, _ = make_pairs(snoring, Lexicon.of([*sentences, *read_treebank(other)]))
    assert alone == [] and [(pair.good, pair.bad) for pair in together] == [("Hund schnarcht", "Hund schnarchen")]


def test_a_sent_id_used_twice_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "twice.conllu"
    path.write_text(conllu("x", *SENTENCES["s-number"]) + conllu("x", *SENTENCES["s-plural"]), encoding="utf-8")
    sentences = list(read_treebank(path))
    with pytest.raises(ProbingError, match=rf"{path}:7: # sent_id x again \(first on line 1\)"):
        make_pairs(sentences, Lexicon.of(sentences), source=str(path))


# ---------------------------------------------------------------------------- the real treebanks

REAL = [("de_pud", "test"), ("fr_pud", "test"), ("zh_pud", "test"), ("ar_pud", "test"), ("hi_pud", "test"),
        ("ru_pud", "test"), ("tr_pud", "test"), ("fi_pud", "test"), ("fi_tdt", "dev"), ("fi_tdt", "test")]


def raw_sentences(path) -> dict[str, dict]:
    """Each sentence of a CoNLL-U file by its sent_id, from the raw lines: its running text (a multiword token's
    form for its words, no space after SpaceAfter=No), its tokens, and each word's columns with its token's place."""
    found, sent_id, rows, tokens, covered = {}, None, {}, [], {}
    for line in [*path.read_text(encoding="utf-8").split("\n"), ""]:
        if line.startswith("# sent_id = "):
            sent_id = line.removeprefix("# sent_id = ").strip()
        elif not line.strip():
            if rows:
                found[sent_id] = {"text": written(tokens), "tokens": tokens, "words": rows}
            sent_id, rows, tokens, covered = None, {}, [], {}
        elif not line.startswith("#"):
            cells = line.split("\t")
            if "." in cells[0]:
                continue
            if "-" in cells[0]:
                first, last = map(int, cells[0].split("-"))
                covered.update(dict.fromkeys(range(first, last + 1), len(tokens)))
                tokens.append((cells[1], cells[9]))
                continue
            word = int(cells[0])
            if word not in covered:
                covered[word] = len(tokens)
                tokens.append((cells[1], cells[9]))
            rows[word] = {"form": cells[1], "lemma": cells[2], "upos": cells[3], "feats": cells[5],
                          "head": int(cells[6]), "deprel": cells[7], "token": covered[word]}
    return found


def written(tokens: list[tuple[str, str]]) -> str:
    """(form, MISC) tokens joined as the treebank writes them: a space after each but where MISC says SpaceAfter=No."""
    return "".join(form + ("" if "SpaceAfter=No" in misc.split("|") else " ") for form, misc in tokens).rstrip(" ")


def feats(text: str) -> dict[str, str]:
    return {} if text == "_" else dict(item.split("=", 1) for item in text.split("|"))


@pytest.mark.real_data
@pytest.mark.parametrize("name,split", REAL, ids=[f"{name}:{split}" for name, split in REAL])
def test_every_pair_of_a_real_treebank_is_its_text_with_one_word_swapped_for_an_attested_form(name, split):
    from probing.data.pair_sets.catalogue import Sources
    from probing.data.pair_sets.from_treebank import AgreementSet

    path = real_treebank(name, split)
    raw = raw_sentences(path)
    made, counts, block = AgreementSet(str(path)).made(Sources())
    attested = {(row["lemma"], row["upos"], row["form"].lower(), tuple(sorted(feats(row["feats"]).items())))
                for sentence in raw.values() for row in sentence["words"].values()}
    arcs = sum(row["deprel"].split(":")[0] == "nsubj" for sentence in raw.values() for row in sentence["words"].values())
    assert block["arcs"] == counts.arcs == arcs == counts.arcs_with_pair + sum(counts.no_pair.values())
    assert counts.pairs == len(made) == len({pair.pair_id for pair in made})
    for pair in made:
        sentence = raw[pair.sent_id]
        verb, subject = sentence["words"][pair.verb_id], sentence["words"][pair.subject_id]
        assert pair.good == sentence["text"]  # the treebank's tokens as written
        tokens = list(sentence["tokens"])
        assert tokens[verb["token"]][0] == verb["form"] == pair.good_form  # v is a token of its own
        tokens[verb["token"]] = (pair.bad_form, tokens[verb["token"]][1])
        assert pair.bad == written(tokens)  # v's word swapped, nothing else
        assert pair.bad_form.lower() != pair.good_form.lower()
        assert pair.bad_form[:1].isupper() == pair.good_form[:1].isupper()
        assert subject["deprel"].split(":")[0] == "nsubj"
        verb_feats = feats(verb["feats"])
        subject_value = feats(subject["feats"]).get(pair.feature)
        if pair.feature == "Person" and subject_value is None and subject["upos"] in ("NOUN", "PROPN"):
            subject_value = "3"
        assert verb_feats[pair.feature] == subject_value == pair.good_value != pair.bad_value
        other = tuple(sorted({**verb_feats, pair.feature: pair.bad_value}.items()))
        assert (verb["lemma"], verb["upos"], pair.bad_form.lower(), other) in attested
