"""Subject-verb agreement pairs made from a UD treebank, as MultiBLiMP 1.0 (Jumelet et al. 2025) makes them, with the
treebank's own forms in place of UniMorph's.

- **Where.** A word s attached as ``nsubj`` (or a subtype) to a head p. The agreeing word v is p when p is a finite
  VERB or AUX, else p's finite ``cop`` or ``aux`` child (or a subtype of either) nearest to s (ties: the earlier).
  Finite: ``VerbForm=Fin``, or no ``VerbForm`` but a ``Mood``. No v, or v inside a multiword token: no pair.
- **What.** For each feature F of Number, Person and Gender that v carries and s carries with the same value (s's
  Person is 3 when s is a NOUN or PROPN without one), the pair swaps v's form for the form w of the same lemma and
  UPOS whose features equal v's but for F, which has another value.
- **Which forms.** The lexicon (:class:`Lexicon`) holds every (lemma, UPOS, features, form) of the treebanks given
  to it, forms compared in lower case; among the forms that fit, the most frequent, ties by (form, value) in code
  point order. A w equal to v's form (syncretism), or none: no pair. w keeps v's case pattern (its first letter
  upper when v's is). A LEMMA of ``_`` (not annotated) is no lemma: such a word has no other form.
- **Text.** The sentence's tokens joined by its ``SpaceAfter=No`` marks (probing.data.treebank.Sentence.text), v's
  form replaced by w in the bad sentence. Ids: ``SENT_ID:V_ID:F`` (a sentence without ``# sent_id``: its number in
  the file, from 1).

>>> from probing.data.treebank import Sentence
>>> def sentence(rows, sent_id):
...     forms, lemmas, upos, feats, heads, labels = zip(*rows)
...     return Sentence(words=forms, heads=heads, labels=labels, upos=upos, feats=feats, lemmas=lemmas,
...                     misc=("_",) * len(rows), sent_id=sent_id)
>>> dogs = sentence([("Dogs", "dog", "NOUN", "Number=Plur", 1, "nsubj"),
...                  ("bark", "bark", "VERB", "Mood=Ind|Number=Plur|Person=3|Tense=Pres|VerbForm=Fin", -1, "root")],
...                 "s1")
>>> dog = sentence([("A", "a", "DET", "_", 1, "det"), ("dog", "dog", "NOUN", "Number=Sing", 2, "nsubj"),
...                 ("barks", "bark", "VERB", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin", -1, "root")],
...                "s2")
>>> pairs, counts = make_pairs([dogs, dog], Lexicon.of([dogs, dog]))
>>> [(pair.pair_id, pair.good, pair.bad) for pair in pairs]
[('s1:2:Number', 'Dogs bark', 'Dogs barks'), ('s2:3:Number', 'A dog barks', 'A dog bark')]
>>> counts.arcs, counts.pairs, counts.features["Person"]  # both share Person 3, which no other form has here
(2, 2, {'shared': 2, 'pairs': 0, 'no_other_form': 2, 'syncretism': 0})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from probing.data.minimal_pairs import MinimalPair
from probing.data.treebank import ROOT, Sentence
from probing.errors import ProbingError

FEATURES = ("Number", "Person", "Gender")
"""The features a pair may swap, in the order each arc tries them (and the paradigms come)."""

PHENOMENON = "subject-verb agreement"
FIELD = "morphology"
"""The field of every pair made here: BLiMP files subject-verb agreement under morphology."""

REASONS = {
    "no_finite_agreeing_word": "no finite agreeing word (p is no finite VERB or AUX and has no finite cop or aux child)",
    "in_multiword_token": "v is inside a multiword token",
    "feature_not_shared": "no feature of Number, Person, Gender that v carries and s carries with the same value",
    "no_other_form": "no form of v's lemma and UPOS with v's features but another value of a shared feature",
    "syncretism": "the most frequent such form is v's own",
}
"""Why a subject arc gave no pair, each arc counted once: the first check that stopped it, and for an arc whose
shared features all failed, syncretism when any of them found a form (v's own), else no_other_form."""


def features(text: str) -> dict[str, str]:
    """A FEATS column as a dict (``_``: none).

    >>> features("Number=Sing|Person=3"), features("_")
    ({'Number': 'Sing', 'Person': '3'}, {})
    """
    if text in ("_", ""):
        return {}
    return dict(item.split("=", 1) for item in text.split("|") if "=" in item)


def is_finite(feats: dict[str, str]) -> bool:
    """``VerbForm=Fin``, or no VerbForm but a Mood (the German, Turkish and Arabic PUD leave VerbForm out).

    >>> is_finite({"VerbForm": "Fin"}), is_finite({"Mood": "Ind"}), is_finite({"VerbForm": "Part", "Mood": "Ind"})
    (True, True, False)
    """
    if "VerbForm" in feats:
        return feats["VerbForm"] == "Fin"
    return "Mood" in feats


def _base(label: str) -> str:
    return label.split(":", 1)[0]


def agreeing_word(sentence: Sentence, subject: int) -> int | None:
    """The word v that agrees with subject ``subject`` (0-based), or None: its head p when p is a finite VERB or
    AUX, else p's finite cop or aux child nearest to the subject (ties: the earlier)."""
    head = sentence.heads[subject]
    if head == ROOT:
        return None
    if sentence.upos[head] in ("VERB", "AUX") and is_finite(features(sentence.feats[head])):
        return head
    children = [child for child, parent in enumerate(sentence.heads)
                if parent == head and _base(sentence.labels[child]) in ("cop", "aux")
                and is_finite(features(sentence.feats[child]))]
    if not children:
        return None
    return min(children, key=lambda child: (abs(child - subject), child))


def _key(lemma: str, upos: str, feats: dict[str, str], feature: str) -> tuple:
    """What two forms must share to differ only in ``feature``: lemma, UPOS and every other feature."""
    return lemma, upos, feature, tuple(sorted((name, value) for name, value in feats.items() if name != feature))


@dataclass
class Lexicon:
    """Every (lemma, UPOS, features, form) of the sentences added, counted, forms in lower case, indexed by what a
    form must share with v to differ from it in one feature only.

    >>> from probing.data.treebank import Sentence
    >>> s = Sentence(words=("Is", "are", "are"), heads=(-1, 0, 0), labels=("root", "x", "x"), upos=("AUX",) * 3,
    ...              feats=("Number=Sing", "Number=Plur", "Number=Plur"), lemmas=("be",) * 3)
    >>> Lexicon.of([s]).other_form("be", "AUX", {"Number": "Sing"}, "Number")
    ('are', 'Plur')
    """

    index: dict[tuple, Counter] = field(default_factory=dict)
    words: int = 0

    @classmethod
    def of(cls, sentences: Iterable[Sentence]) -> "Lexicon":
        lexicon = cls()
        for sentence in sentences:
            lexicon.add(sentence)
        return lexicon

    def add(self, sentence: Sentence) -> None:
        for form, lemma, upos, feats in zip(sentence.words, sentence.lemmas, sentence.upos, sentence.feats):
            self.words += 1
            if lemma == "_":  # not annotated: no lemma to share
                continue
            parsed = features(feats)
            for feature in FEATURES:
                if feature in parsed:
                    counts = self.index.setdefault(_key(lemma, upos, parsed, feature), Counter())
                    counts[(parsed[feature], form.lower())] += 1

    def other_form(self, lemma: str, upos: str, feats: dict[str, str], feature: str) -> tuple[str, str] | None:
        """(form in lower case, its value of ``feature``) of the word of ``lemma`` and ``upos`` whose features are
        ``feats`` but for ``feature``, which has another value: the most frequent, ties by form then value in code
        point order; None when there is none."""
        if lemma == "_":
            return None
        counts = self.index.get(_key(lemma, upos, feats, feature), {})
        fitting = [(-count, form, value) for (value, form), count in counts.items() if value != feats[feature]]
        if not fitting:
            return None
        _, form, value = min(fitting)
        return form, value


@dataclass(frozen=True)
class AgreementPair:
    """One pair and what it was made of: the sentence's id, s's and v's word ids (from 1, as in the file), the
    feature and its two values, the two forms of v, and the two sentences."""

    sent_id: str
    subject_id: int
    verb_id: int
    feature: str
    good_value: str
    bad_value: str
    good_form: str
    bad_form: str
    good: str
    bad: str

    @property
    def pair_id(self) -> str:
        return f"{self.sent_id}:{self.verb_id}:{self.feature}"

    def minimal_pair(self) -> MinimalPair:
        """The pair as a pair set holds it: paradigm the feature in lower case, phenomenon subject-verb agreement,
        and the record of what it was made of."""
        record = (("sent_id", self.sent_id), ("subject_id", str(self.subject_id)), ("verb_id", str(self.verb_id)),
                  ("feature", self.feature), ("good_value", self.good_value), ("bad_value", self.bad_value),
                  ("good_form", self.good_form), ("bad_form", self.bad_form))
        return MinimalPair(self.feature.lower(), FIELD, self.good, self.bad, PHENOMENON, self.pair_id, record)


@dataclass
class Counts:
    """What became of a treebank's subject arcs: how many there were, how many gave a pair, the pairs made, why
    the others gave none (:data:`REASONS`, each arc once), ``repeated`` pairs (a second subject of the same v made
    the pair the first had made: same id, same sentences, kept once), and per feature how often s and v shared
    it, how many pairs it gave (repeats included), and why the others gave none."""

    arcs: int = 0
    arcs_with_pair: int = 0
    pairs: int = 0
    repeated: int = 0
    no_pair: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REASONS, 0))
    features: dict[str, dict[str, int]] = field(default_factory=lambda: {
        feature: {"shared": 0, "pairs": 0, "no_other_form": 0, "syncretism": 0} for feature in FEATURES})

    def block(self) -> dict:
        """As a result records it (``input.made_from``'s counts)."""
        return {"arcs": self.arcs, "arcs_with_pair": self.arcs_with_pair, "pairs": self.pairs,
                "repeated": self.repeated, "no_pair": dict(self.no_pair),
                "features": {name: dict(row) for name, row in self.features.items()}}


def _with_case_of(form: str, model: str) -> str:
    """``form`` with ``model``'s first letter's case: upper when ``model``'s is.

    >>> _with_case_of("sind", "Ist"), _with_case_of("sind", "ist")
    ('Sind', 'sind')
    """
    return form[:1].upper() + form[1:] if model[:1].isupper() else form


def _arc_pairs(sentence: Sentence, subject: int, lexicon: Lexicon, counts: Counts, sent_id: str
               ) -> list[AgreementPair]:
    """The pairs of one subject arc, counted in ``counts``."""
    verb = agreeing_word(sentence, subject)
    if verb is None:
        counts.no_pair["no_finite_agreeing_word"] += 1
        return []
    if sentence.in_multiword(verb):
        counts.no_pair["in_multiword_token"] += 1
        return []
    verb_feats, subject_feats = features(sentence.feats[verb]), features(sentence.feats[subject])
    if sentence.upos[subject] in ("NOUN", "PROPN"):
        subject_feats.setdefault("Person", "3")
    shared = [name for name in FEATURES if name in verb_feats and subject_feats.get(name) == verb_feats[name]]
    if not shared:
        counts.no_pair["feature_not_shared"] += 1
        return []
    form = sentence.words[verb]
    made, found_own = [], False
    for name in shared:
        row = counts.features[name]
        row["shared"] += 1
        other = lexicon.other_form(sentence.lemmas[verb], sentence.upos[verb], verb_feats, name)
        if other is None:
            row["no_other_form"] += 1
            continue
        if other[0] == form.lower():
            row["syncretism"] += 1
            found_own = True
            continue
        row["pairs"] += 1
        bad_form = _with_case_of(other[0], form)
        made.append(AgreementPair(sent_id, subject + 1, verb + 1, name, verb_feats[name], other[1], form, bad_form,
                                  sentence.text, sentence.written({verb: bad_form})))
    if not made:
        counts.no_pair["syncretism" if found_own else "no_other_form"] += 1
    return made


def make_pairs(sentences: Iterable[Sentence], lexicon: Lexicon, *, source: str = "<treebank>"
               ) -> tuple[list[AgreementPair], Counts]:
    """Every agreement pair of ``sentences`` (a treebank's, in order), each feature's pairs together (Number, then
    Person, then Gender; in treebank order within each), and the :class:`Counts` of their subject arcs. A
    ``# sent_id`` used twice in the file ``source`` is refused naming its second line: pairs are named by it."""
    counts = Counts()
    made: dict[str, AgreementPair] = {}  # by id, in the order made
    seen: dict[str, int] = {}
    for sentence in sentences:
        sent_id = sentence.sent_id if sentence.sent_id is not None else str(sentence.index + 1)
        if sent_id in seen:
            raise ProbingError(f"# sent_id {sent_id} again (first on line {seen[sent_id]}): pairs are named by "
                               "their sentence's id", source=f"{source}:{sentence.line}")
        seen[sent_id] = sentence.line
        for subject, label in enumerate(sentence.labels):
            if _base(label) == "nsubj":
                counts.arcs += 1
                pairs = _arc_pairs(sentence, subject, lexicon, counts, sent_id)
                counts.arcs_with_pair += bool(pairs)
                for pair in pairs:
                    if pair.pair_id in made:
                        counts.repeated += 1
                    else:
                        made[pair.pair_id] = pair
                        counts.pairs += 1
    return sorted(made.values(), key=lambda pair: FEATURES.index(pair.feature)), counts
