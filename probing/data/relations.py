"""Which (dependent, head) word pairs each relation scores (docs/scoring.md section 4).

A relation maps a sentence to a list of pairs ``(query, head)``: the word whose
predicted head is looked at, and the word that prediction must equal. For most
relations the query is the dependent itself; the ``poss`` clitic rule scores the
clitic ``'s`` in place of its possessor, and the ``pobj`` derivation for UD
turns ``case`` arcs around.

Named relations live in a registry; any other name is a UD label (exact with a
``:``, by base label without).

>>> from probing.data.treebank import Sentence
>>> s = Sentence(words=("the", "cat", "sat"), heads=(1, 2, -1),
...              labels=("det", "nsubj", "root"), upos=("DET", "NOUN", "VERB"))
>>> relation_pairs("det", s)
[(0, 1)]
>>> relation_pairs("nsubj", s)
[(1, 2)]
"""

from __future__ import annotations

import re
from collections.abc import Callable

from probing.data.treebank import ROOT, Sentence
from probing.errors import ProbingError
from probing.registry import Registry

Pairs = list[tuple[int, int]]
PairFunction = Callable[[Sentence], Pairs]

DEFAULT_RELATIONS = ("dobj", "det", "pobj", "poss", "all")
"""The paper's four relations plus every arc (section 4 of the spec)."""

POSSESSIVE_CLITICS = frozenset({"'s", "'", "\u2019s", "\u2019"})

RELATIONS: Registry[PairFunction] = Registry("relation", option="--relations")
"""Named relations; any other lowercase name is read as a UD label."""
_UD_LABEL = re.compile(r"^[a-z]+(:[a-z]+)?$")


def register_relation(name: str) -> Callable[[PairFunction], PairFunction]:
    """Add a named relation: a function from a sentence to its (query, head) pairs."""
    return RELATIONS.register(name)


def known_relations() -> list[str]:
    """The registered relation names (any UD label is accepted besides)."""
    return sorted(RELATIONS.names())


def check_relation_names(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Validate relation names once, before any model is loaded.

    >>> check_relation_names(["det", "nsubj:pass"])
    ('det', 'nsubj:pass')
    """
    if not names:
        raise ProbingError("no relation given", source="--relations")
    for name in names:
        if name not in RELATIONS and not _UD_LABEL.match(name):
            raise ProbingError(
                f"unknown relation {name!r}: use one of {', '.join(known_relations())} "
                "or a UD label such as nsubj or nsubj:pass (lowercase, optional :subtype)",
                source="--relations",
            )
    if len(set(names)) != len(names):
        raise ProbingError("a relation is named twice", source="--relations")
    return tuple(names)


def unmatched_labels(totals: dict[str, int]) -> list[str]:
    """The UD labels among ``totals`` (relation -> pairs scored) that matched no word: a typo such as
    ``nsubjj`` is a valid-looking label, counted 0 as the rules say, and the user is told on stderr.

    >>> unmatched_labels({"det": 0, "nosuchrel": 0, "amod": 3})
    ['nosuchrel']
    """
    return [name for name, total in totals.items() if total == 0 and name not in RELATIONS]


def warn_unmatched(totals: dict[str, int], treebank: str, *, command: str) -> None:
    """One stderr line per UD label of ``--relations`` that no word of ``treebank`` has."""
    import sys

    for name in unmatched_labels(totals):
        print(f"probing {command}: warning: --relations {name}: no scored word of {treebank} has this "
              "label; "
              "it is counted 0 (a typo?)", file=sys.stderr)


def relation_pairs(name: str, sentence: Sentence) -> Pairs:
    """The (query, head) pairs of one relation in one sentence."""
    if name in RELATIONS:
        return RELATIONS[name](sentence)
    return _label_pairs(sentence, _label_matcher(name))


def dependent_pairs(name: str, sentence: Sentence) -> Pairs:
    """The (dependent, head) pairs of one relation, in the order of :func:`relation_pairs`, without the
    ``poss`` clitic rule: the causal direction scores the pair by its later word (the head noun), so the
    possessor itself is the word its prediction must equal (docs/scoring.md, the causal direction).

    >>> from probing.data.treebank import Sentence
    >>> s = Sentence(words=("John", "'s", "dog"), heads=(2, 0, -1), labels=("nmod:poss", "case", "root"),
    ...              upos=("PROPN", "PART", "NOUN"))
    >>> relation_pairs("poss", s), dependent_pairs("poss", s)
    ([(1, 2)], [(0, 2)])
    """
    if name == "poss":
        return _possessives(sentence, clitic_rule=False)
    return relation_pairs(name, sentence)


def _base(label: str) -> str:
    return label.split(":", 1)[0]


def _label_matcher(name: str) -> Callable[[str], bool]:
    if ":" in name:
        return lambda label: label == name
    return lambda label: _base(label) == name


def _label_pairs(sentence: Sentence, matches: Callable[[str], bool]) -> Pairs:
    return [(i, head) for i, (head, label) in enumerate(zip(sentence.heads, sentence.labels)) if matches(label)]


@register_relation("dobj")
def _direct_objects(sentence: Sentence) -> Pairs:
    return _label_pairs(sentence, lambda label: _base(label) in ("obj", "dobj"))


@register_relation("det")
def _determiners(sentence: Sentence) -> Pairs:
    return _label_pairs(sentence, lambda label: label == "det")


@register_relation("all")
def _all_arcs(sentence: Sentence) -> Pairs:
    return [(i, head) for i, head in enumerate(sentence.heads) if head != ROOT]


@register_relation("pobj")
def _prepositional_objects(sentence: Sentence) -> Pairs:
    """Stanford ``pobj`` arcs, plus UD ``case`` arcs of an ADP turned around.

    In UD the preposition depends on its noun (``case``); in Stanford
    Dependencies, which the paper scored, the noun depends on the preposition.
    """
    pairs = _label_pairs(sentence, lambda label: label == "pobj")
    for i, (head, label, upos) in enumerate(zip(sentence.heads, sentence.labels, sentence.upos)):
        if _base(label) == "case" and upos == "ADP" and head != ROOT:
            pairs.append((head, i))
    return pairs


POSSESSOR_LABELS = frozenset({"nmod:poss", "det:poss", "poss"})
"""Labels that mark a possessor in every language (docs/languages.md): English and most UD v2 treebanks use
``nmod:poss``, German and the Nordic ones ``det:poss``, UD v1 and Stanford Dependencies ``poss``."""


@register_relation("poss")
def _possessives(sentence: Sentence, clitic_rule: bool = True) -> Pairs:
    """Possessors paired with their heads, scoring a following ``'s`` clitic instead.

    A possessor is a word labelled ``nmod:poss``, ``det:poss`` or ``poss``, or a determiner (base label
    ``det``) whose FEATS say ``Poss=Yes`` (French *son*, Spanish *su*, which UD labels plain ``det``).
    The paper scores the clitic because in "John 's dog" a model's attention
    from "'s" is what points at "dog".

    >>> from probing.data.treebank import Sentence
    >>> son = Sentence(words=("son", "chat"), heads=(1, -1), labels=("det", "root"), upos=("DET", "NOUN"),
    ...                feats=("Poss=Yes|Person=3", "_"))
    >>> relation_pairs("poss", son), relation_pairs("det", son)
    ([(0, 1)], [(0, 1)])
    """
    pairs = []
    for i, (head, label) in enumerate(zip(sentence.heads, sentence.labels)):
        if label in POSSESSOR_LABELS or (_base(label) == "det" and _has_feature(sentence, i, "Poss=Yes")):
            clitic = _possessive_clitic_after(sentence, i) if clitic_rule else None
            pairs.append((i if clitic is None else clitic, head))
    return pairs


def _has_feature(sentence: Sentence, word: int, feature: str) -> bool:
    """Whether word's FEATS column (``Case=Nom|Poss=Yes``) holds ``feature``; a sentence built without
    FEATS has none."""
    return word < len(sentence.feats) and feature in sentence.feats[word].split("|")


def _possessive_clitic_after(sentence: Sentence, possessor: int) -> int | None:
    """The index of the clitic directly after ``possessor`` that attaches to it, if any."""
    clitic = possessor + 1
    if clitic >= len(sentence):
        return None
    if (
        sentence.words[clitic] in POSSESSIVE_CLITICS
        and _base(sentence.labels[clitic]) in ("case", "possessive")
        and sentence.heads[clitic] == possessor
    ):
        return clitic
    return None
