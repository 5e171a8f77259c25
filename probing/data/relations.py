"""Which (dependent, head) word pairs each relation scores (docs/scoring.md section 4).

A relation maps a sentence to a list of pairs ``(query, head)``: the word whose
predicted head is looked at, and the word that prediction must equal. For most
relations the query is the dependent itself; the ``poss`` clitic rule scores the
clitic ``'s`` in place of its possessor, and the ``pobj`` derivation for UD
turns ``case`` arcs around.

Named relations live in a registry; any other name is a UD label (exact with a
``:``, by base label without). Every rule reads a :class:`WordTable`, the words
of a whole batch of sentences side by side as numpy columns, so a batch's pairs
come from a few array operations rather than a Python loop over its words; one
sentence is a table of one.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain

import numpy as np

from probing.data.treebank import ROOT, Sentence
from probing.errors import ProbingError
from probing.registry import Registry

Pairs = list[tuple[int, int]]

DEFAULT_RELATIONS = ("dobj", "det", "pobj", "poss", "all")
"""The paper's four relations plus every arc (section 4 of the spec)."""

POSSESSIVE_CLITICS = frozenset({"'s", "'", "\u2019s", "\u2019"})


class WordTable:
    """The words of a batch of sentences side by side: one entry per word, in sentence then word order.

    ``row`` [word] is the word's sentence (its position in the batch), ``position`` [word] its index in that
    sentence, ``head`` [word] the flat index of its head (``ROOT`` for the root); the text columns
    (``labels``, ``upos``, ``words``) are made when a rule first reads them. A predicate on a text column is
    asked once per distinct value, never per word; a rule that needs a column for a few words only (FEATS of
    determiners, the form after a possessor) reads them with :meth:`column_at`.

    >>> s = Sentence(words=("the", "cat", "sat"), heads=(1, 2, -1), labels=("det", "nsubj", "root"),
    ...              upos=("DET", "NOUN", "VERB"))
    >>> table = WordTable([s, s])
    >>> table.row.tolist(), table.position.tolist(), table.head.tolist()
    ([0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2], [1, 2, -1, 4, 5, -1])
    >>> table.where("labels", lambda label: label == "det").tolist()
    [True, False, False, True, False, False]
    """

    def __init__(self, sentences: Sequence[Sentence]):
        self.sentences = tuple(sentences)
        lengths = np.fromiter((len(s) for s in self.sentences), dtype=np.int64, count=len(self.sentences))
        self.size = int(lengths.sum())
        starts = np.cumsum(lengths) - lengths  # [sentence]: the flat index of each sentence's first word
        self.row = np.repeat(np.arange(len(self.sentences)), lengths)
        self.position = np.arange(self.size) - np.repeat(starts, lengths)
        local = np.fromiter(chain.from_iterable(s.heads for s in self.sentences), dtype=np.int64, count=self.size)
        self.head = np.where(local == ROOT, ROOT, local + starts[self.row])

    def _text(self, name: str) -> np.ndarray:
        return np.array(list(chain.from_iterable(getattr(s, name) for s in self.sentences)), dtype=str)

    @cached_property
    def labels(self) -> np.ndarray:
        return self._text("labels")

    @cached_property
    def upos(self) -> np.ndarray:
        return self._text("upos")

    @cached_property
    def words(self) -> np.ndarray:
        return self._text("words")

    def column_at(self, column: str, words: np.ndarray) -> list[str]:
        """The value in ``column`` of each of ``words`` (flat indices), read from the sentences: for a few words
        of a batch, cheaper than the batch's whole column as an array. FEATS is ``_`` for the words of a
        sentence built without it."""
        values = []
        for row, position in zip(self.row[words].tolist(), self.position[words].tolist()):
            sentence_values = getattr(self.sentences[row], column)
            values.append(sentence_values[position] if position < len(sentence_values) else "_")
        return values

    def has_feature(self, feature: str, words: np.ndarray) -> np.ndarray:
        """bool [word of ``words``]: whether its FEATS (``Case=Nom|Poss=Yes``) hold ``feature`` as one of its
        parts."""
        return np.fromiter((feature in feats.split("|") for feats in self.column_at("feats", words)), dtype=bool,
                           count=len(words))

    def where(self, column: str, predicate: Callable[[str], bool]) -> np.ndarray:
        """bool [word]: ``predicate`` of each word's value in ``column``, asked once per distinct value."""
        values, inverse = self._distinct(column)
        return np.fromiter((predicate(value) for value in values), dtype=bool, count=len(values))[inverse]

    def _distinct(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        cache = self.__dict__.setdefault("_distinct_values", {})
        if column not in cache:
            cache[column] = np.unique(getattr(self, column), return_inverse=True)
        return cache[column]


@dataclass(frozen=True)
class Arcs:
    """One relation's pairs in a :class:`WordTable`, as flat word indices, each int64 [pair]: ``query`` (the word
    whose prediction is scored), ``head`` (what it must equal; ``ROOT`` for the root) and ``dependent`` (the
    relation's dependent: the query, but for the ``poss`` clitic rule)."""

    query: np.ndarray
    head: np.ndarray
    dependent: np.ndarray

    @classmethod
    def of_words(cls, table: WordTable, words: np.ndarray) -> "Arcs":
        """The arcs of ``words`` (flat indices) to their heads, each word its own query."""
        return cls(words, table.head[words], words)

    def __add__(self, other: "Arcs") -> "Arcs":
        return Arcs(*(np.concatenate([mine, theirs]) for mine, theirs in zip(self.fields(), other.fields())))

    def fields(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.query, self.head, self.dependent


ArcRule = Callable[[WordTable], Arcs]

RELATIONS: Registry[ArcRule] = Registry("relation", option="--relations")
"""Named relations; any other lowercase name is read as a UD label."""
_UD_LABEL = re.compile(r"^[a-z]+(:[a-z]+)?$")


def register_relation(name: str) -> Callable[[ArcRule], ArcRule]:
    """Add a named relation: a function from a :class:`WordTable` to its :class:`Arcs`."""
    return RELATIONS.register(name)


def known_relations() -> list[str]:
    """The registered relation names (any UD label is accepted besides)."""
    return sorted(RELATIONS.names())


UNIVERSAL_LABELS = frozenset(
    "acl advcl advmod amod appos aux case cc ccomp clf compound conj cop csubj dep det discourse dislocated expl "
    "fixed flat goeswith iobj list mark nmod nsubj nummod obj obl orphan parataxis punct reparandum root vocative "
    "xcomp".split())
"""UD v2's 37 universal relations: every UD label is one of these, or one of these with a ``:subtype``."""

STANFORD_LABELS = frozenset(
    "abbrev acomp advcl advmod agent amod appos attr aux auxpass cc ccomp complm conj cop csubj csubjpass dep det "
    "dobj expl infmod iobj mark mwe neg nn npadvmod nsubj nsubjpass num number parataxis partmod pcomp pobj poss "
    "possessive preconj predet prep prepc prt punct purpcl quantmod rcmod ref rel root tmod xcomp xsubj".split())
"""The basic Stanford Dependencies labels (de Marneffe and Manning 2008), which the paper's treebank used: a
treebank converted to them is scored by its own labels."""

BASE_LABELS = UNIVERSAL_LABELS | STANFORD_LABELS


def check_relation_names(names: list[str] | tuple[str, ...], option: str = "--relations") -> tuple[str, ...]:
    """Validate relation names once, before any model is loaded: a registered relation, or a UD label (one of
    UD's universal relations, with an optional ``:subtype``; or a Stanford Dependencies label); an unknown name
    is refused with the nearest known one, since a typo such as ``dboj`` would otherwise be scored as a label no
    word has (a row of dashes).

    >>> check_relation_names(["det", "nsubj:pass", "acl:relcl"])
    ('det', 'nsubj:pass', 'acl:relcl')
    >>> check_relation_names(["dboj"])
    Traceback (most recent call last):
    probing.errors.ProbingError: --relations: unknown relation 'dboj' (did you mean dobj?): ...
    """
    if not names:
        raise ProbingError("no relation given", source=option)
    for name in names:
        if name not in RELATIONS and not (_UD_LABEL.match(name) and name.split(":")[0] in BASE_LABELS):
            raise ProbingError(f"unknown relation {name!r}{did_you_mean(name)}: use one of "
                               f"{', '.join(known_relations())} or a UD label such as nsubj or nsubj:pass (one of "
                               "UD's 37 universal relations, lowercase, optional :subtype; or a Stanford "
                               "Dependencies label)", source=option)
    if len(set(names)) != len(names):
        raise ProbingError("a relation is named twice", source=option)
    return tuple(names)


def did_you_mean(name: str, candidates=None) -> str:
    """`` (did you mean X?)`` for the name among ``candidates`` nearest ``name``, or nothing; without
    ``candidates``, the registered relations and the known labels (a subtype kept as given).

    >>> did_you_mean("nsujb:pass"), did_you_mean("zzzz"), did_you_mean("dte", ["det", "all"])
    (' (did you mean nsubj:pass?)', '', ' (did you mean det?)')
    """
    import difflib

    base, _, subtype = name.partition(":")
    if candidates is None and subtype and base not in BASE_LABELS:  # a typo in the base label
        near = difflib.get_close_matches(base, sorted(BASE_LABELS), n=1)
        return f" (did you mean {near[0]}:{subtype}?)" if near else ""
    if candidates is None:
        candidates = known_relations() + sorted(BASE_LABELS - set(known_relations()))
    near = difflib.get_close_matches(name, list(candidates), n=1)
    return f" (did you mean {near[0]}?)" if near else ""


def unmatched_labels(totals: dict[str, int]) -> list[str]:
    """The UD labels among ``totals`` (relation -> pairs scored) that matched no word: a subtype the treebank
    does not use (``nsubj:passs``) is a valid label, counted 0 as the rules say, and the user is told on stderr.

    >>> unmatched_labels({"det": 0, "nsubj:passs": 0, "amod": 3})
    ['nsubj:passs']
    """
    return [name for name, total in totals.items() if total == 0 and name not in RELATIONS]


def warn_unmatched(totals: dict[str, int], treebank: str, *, command: str) -> None:
    """One stderr line per UD label of ``--relations`` that no word of ``treebank`` has."""
    import sys

    for name in unmatched_labels(totals):
        print(f"probing {command}: warning: --relations {name}: no scored word of {treebank} has this "
              "label; "
              "it is counted 0 (a typo in its subtype?)", file=sys.stderr)


def relation_arcs(name: str, table: WordTable) -> Arcs:
    """The arcs of one relation in a batch of sentences.

    >>> s = Sentence(words=("John", "'s", "dog"), heads=(2, 0, -1), labels=("nmod:poss", "case", "root"),
    ...              upos=("PROPN", "PART", "NOUN"))
    >>> arcs = relation_arcs("poss", WordTable([s, s]))
    >>> arcs.query.tolist(), arcs.head.tolist(), arcs.dependent.tolist()
    ([1, 4], [2, 5], [0, 3])
    """
    if name in RELATIONS:
        return RELATIONS[name](table)
    return _label_arcs(table, _label_matcher(name))


def relation_pairs(name: str, sentence: Sentence) -> Pairs:
    """The (query, head) pairs of one relation in one sentence."""
    arcs = relation_arcs(name, WordTable([sentence]))
    return list(zip(arcs.query.tolist(), arcs.head.tolist()))


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
    arcs = relation_arcs(name, WordTable([sentence]))
    return list(zip(arcs.dependent.tolist(), arcs.head.tolist()))


def _base(label: str) -> str:
    return label.split(":", 1)[0]


def _label_matcher(name: str) -> Callable[[str], bool]:
    if ":" in name:
        return lambda label: label == name
    return lambda label: _base(label) == name


def _label_arcs(table: WordTable, matches: Callable[[str], bool]) -> Arcs:
    return Arcs.of_words(table, np.flatnonzero(table.where("labels", matches)))


@register_relation("dobj")
def _direct_objects(table: WordTable) -> Arcs:
    return _label_arcs(table, lambda label: _base(label) in ("obj", "dobj"))


@register_relation("det")
def _determiners(table: WordTable) -> Arcs:
    return _label_arcs(table, lambda label: label == "det")


@register_relation("all")
def _all_arcs(table: WordTable) -> Arcs:
    return Arcs.of_words(table, np.flatnonzero(table.head != ROOT))


@register_relation("pobj")
def _prepositional_objects(table: WordTable) -> Arcs:
    """Stanford ``pobj`` arcs, plus UD ``case`` arcs of an ADP turned around.

    In UD the preposition depends on its noun (``case``); in Stanford
    Dependencies, which the paper scored, the noun depends on the preposition.
    """
    pobj = _label_arcs(table, lambda label: label == "pobj")
    case = np.flatnonzero(table.where("labels", lambda label: _base(label) == "case") & (table.upos == "ADP")
                          & (table.head != ROOT))
    nouns = table.head[case]  # the noun is the query, its preposition the head it must find
    return pobj + Arcs(nouns, case, nouns)


POSSESSOR_LABELS = frozenset({"nmod:poss", "det:poss", "poss"})
"""Labels that mark a possessor in every language (docs/languages.md): English and most UD v2 treebanks use
``nmod:poss``, German and the Nordic ones ``det:poss``, UD v1 and Stanford Dependencies ``poss``."""


@register_relation("poss")
def _possessives(table: WordTable) -> Arcs:
    """Possessors paired with their heads, scoring a following ``'s`` clitic instead (the dependent stays the
    possessor: what the causal direction scores).

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
    determiners = np.flatnonzero(table.where("labels", lambda label: _base(label) == "det"))
    possessive = np.zeros(table.size, dtype=bool)
    possessive[determiners[table.has_feature("Poss=Yes", determiners)]] = True
    possessors = np.flatnonzero(table.where("labels", POSSESSOR_LABELS.__contains__) | possessive)
    clitics = _possessive_clitics_after(table, possessors)
    return Arcs(np.where(clitics >= 0, clitics, possessors), table.head[possessors], possessors)


def _possessive_clitics_after(table: WordTable, possessors: np.ndarray) -> np.ndarray:
    """int64 [possessor]: the flat index of the clitic directly after each possessor that attaches to it, else -1.
    A word after the sentence's last one belongs to the next sentence, whose heads never point back."""
    following = np.minimum(possessors + 1, max(table.size - 1, 0))  # clipped only to read; the head check decides
    # the forms of the following words only: a batch's distinct forms are most of its words
    clitic_form = np.fromiter((word in POSSESSIVE_CLITICS for word in table.column_at("words", following)),
                              dtype=bool, count=len(following))
    clitic_label = table.where("labels", lambda label: _base(label) in ("case", "possessive"))
    attached = (possessors + 1 < table.size) & (table.head[following] == possessors)
    return np.where(attached & clitic_form & clitic_label[following], following, -1)
