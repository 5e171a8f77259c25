"""Which mentions of a window are scored, what counts as right, and the three baselines.

Within one window, mentions are ordered by the position of their head word;
a mention *precedes* another when its head word lies further left (mentions
that share a head word never precede each other). A mention is **scored**
when a preceding mention of the same entity (an **antecedent**) lies in the
window. A prediction is a word of the window, and it is right when it is the
head word of any antecedent.

The baselines pick a preceding mention and predict its head word, so they are
judged by the same rule as the heads:

- ``nearest``: the nearest preceding mention;
- ``head_match``: the nearest preceding mention whose head word has the same
  lowercased form (none: wrong);
- ``rule_based`` (after Lee et al. 2011): the nearest preceding mention that
  passes the earliest sieve any preceding mention passes: (1) the same
  lowercased full text, (2) the same lowercased head word, (3) agreement in
  Number, Gender and Person (the head words' UD FEATS; a feature missing on
  either side agrees), (4) any mention.

Judging a baseline by its predicted word, not by the mention it picked,
makes a head that attends exactly like a baseline score exactly like it; the
two differ only when two mentions of different entities share a head word.

>>> from probing.data.windows import WindowMention
>>> def m(entity, head, text, feats="_", kind="nominal"):
...     return WindowMention(entity, head, kind, text, text.split()[-1], feats)
>>> mentions = [m("1", 0, "Kim", "Number=Sing"), m("2", 3, "the dog", "Number=Sing"),
...             m("1", 5, "she", "Number=Sing|Person=3", "pronoun")]
>>> [(s.head, sorted(s.antecedents), s.correct) for s in scored_mentions(mentions)]
[(5, [0], (False, False, False))]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from conllu.parser import parse_dict_value

from probing.data.windows import WindowMention

BASELINES = ("nearest", "head_match", "rule_based")
"""The baselines, in the order of every baseline axis."""

AGREEMENT_FEATURES = ("Number", "Gender", "Person")
SIEVES = ("same_text", "same_head", "agreement", "any")
"""The rule-based baseline's sieves, earliest first."""


@dataclass(frozen=True)
class ScoredMention:
    """A mention with an antecedent in its window.

    ``head``: its head word's position; ``antecedents``: the head-word
    positions that count as right; ``predicted``: each baseline's predicted
    word (None: no prediction, wrong); ``sieve``: the index in
    :data:`SIEVES` of the sieve that decided the rule-based choice.
    """

    head: int
    type: str
    antecedents: frozenset[int]
    predicted: tuple[int | None, ...]
    sieve: int

    @property
    def correct(self) -> tuple[bool, ...]:
        """Whether each baseline (in :data:`BASELINES` order) predicted an antecedent's head word."""
        return tuple(word is not None and word in self.antecedents for word in self.predicted)


def features(feats: str) -> dict[str, str]:
    """A FEATS column as a dict (``_`` is none).

    >>> features("Number=Sing|Person=3"), features("_")
    ({'Number': 'Sing', 'Person': '3'}, {})
    """
    return parse_dict_value(feats) or {}  # conllu's FEATS parser: "_" is None


def agree(first: str, second: str) -> bool:
    """Whether two head words' FEATS agree in Number, Gender and Person; a feature missing on either
    side agrees.

    >>> agree("Number=Sing|Person=3", "Gender=Fem|Number=Sing"), agree("Number=Sing", "Number=Plur")
    (True, False)
    """
    mine, theirs = features(first), features(second)
    return all(mine[name] == theirs[name] for name in AGREEMENT_FEATURES if name in mine and name in theirs)


def _sieves(mention: WindowMention) -> list[Callable[[WindowMention], bool]]:
    text, head = mention.text.lower(), mention.head_form.lower()
    return [
        lambda other: other.text.lower() == text,
        lambda other: other.head_form.lower() == head,
        lambda other: agree(other.head_feats, mention.head_feats),
        lambda other: True,
    ]


def _nearest(candidates: Sequence[WindowMention]) -> int | None:
    return max((candidate.head for candidate in candidates), default=None)


def scored_mentions(mentions: Sequence[WindowMention]) -> list[ScoredMention]:
    """The scored mentions of one window (any order in; scored in order of head position) with their
    antecedents and the baselines' predictions."""
    scored = []
    for mention in sorted(mentions, key=lambda item: item.head):
        candidates = [other for other in mentions if other.head < mention.head]
        antecedents = frozenset(other.head for other in candidates if other.entity == mention.entity)
        if not antecedents:
            continue
        head = mention.head_form.lower()
        head_match = _nearest([other for other in candidates if other.head_form.lower() == head])
        for sieve, passes in enumerate(_sieves(mention)):  # noqa: B007  (the deciding sieve, read after the loop)
            passing = [other for other in candidates if passes(other)]
            if passing:
                break
        scored.append(ScoredMention(mention.head, mention.type, antecedents,
                                    (_nearest(candidates), head_match, _nearest(passing)), sieve))
    return scored
