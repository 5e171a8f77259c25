"""Documents -> windows: the units the model reads for coreference.

A window is a run of consecutive whole sentences of one document. Sentences
are added to the open window while the window's pieces, with the model's
special tokens (and the attention-sink token a causal stack gets), still fit
the window length; the next sentence that does not fit starts a new window.
A sentence that alone is longer than the window becomes a unit of its own,
which the engine's batcher skips and counts as too long (the pass's maximum
length is the window length), so it is never truncated and never scored; a
window never reaches across it.

Lengths are measured by encoding the candidate window exactly as the batcher
will (:func:`probing.engine.batching.encode_units`), so a window that fits here is
never skipped there.

Each window is one engine unit (:class:`Window`): the concatenated words, the
window's sentences, and the mentions whose head word lies in it, each with
its head word's position among the window's words.

>>> from probing.data.treebank import Sentence
>>> def sentence(*words):
...     return Sentence(words=words, heads=(-1,) + (0,) * (len(words) - 1), labels=("x",) * len(words),
...                     upos=("X",) * len(words))
>>> rule = WindowRule(length=6, measure=lambda words: len(words) + 2)   # two special tokens
>>> document = Document("d", (sentence("a", "b"), sentence("c", "d"), sentence("e", "f", "g", "h", "i"), sentence("j")), ())
>>> [unit.words for unit in rule.windows([document])]
[('a', 'b', 'c', 'd'), ('e', 'f', 'g', 'h', 'i'), ('j',)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from probing.data.entities import Document, Mention, documents_of
from probing.data.inputs import Unit
from probing.data.treebank import Sentence


@dataclass(frozen=True)
class WindowMention:
    """A mention as the scoring sees it: its head word's position among the window's words (from 0),
    and what the baselines compare."""

    entity: str
    head: int
    type: str
    text: str
    head_form: str
    head_feats: str

    @classmethod
    def of(cls, mention: Mention, position: int) -> "WindowMention":
        return cls(mention.entity, position, mention.type, mention.text, mention.head_form, mention.head_feats)


@dataclass(frozen=True)
class Window(Unit):
    """One engine unit of coreference: consecutive sentences of one document.

    ``first`` holds the window's words (pre-split), ``sentences`` its
    sentences; ``mentions`` the mentions whose head word lies in the window,
    ordered by head position (ties keep the order their spans closed in);
    ``document`` the document's id.
    """

    document: str | None = None
    mentions: tuple[WindowMention, ...] = ()


@dataclass(frozen=True)
class WindowRule:
    """How documents are cut into windows: the length in tokens and how a run of words is measured.

    ``measure(words)`` is the token count of the words as one unit, special
    tokens included; :func:`probing.engine.batching.window_rule` measures with a model's tokenizer.
    """

    length: int
    measure: Callable[[Sequence[str]], int]

    def units(self, sentences: Iterable[Sentence], *, source: str = "<treebank>") -> Iterator[Window]:
        """The windows of a treebank's sentences, numbered from 0 in file order."""
        return self.windows(documents_of(sentences, source=source))

    def windows(self, documents: Iterable[Document]) -> Iterator[Window]:
        """The windows of documents, numbered from 0 across them; a too-long sentence is a unit of its own."""
        index = 0
        for document in documents:
            for first, last in self.spans(document.sentences):
                yield make_window(index, document, first, last)
                index += 1

    def spans(self, sentences: Sequence[Sentence]) -> Iterator[tuple[int, int]]:
        """``(first, last)`` sentence numbers (last excluded) of each window of one document, in order."""
        first = None
        for number, sentence in enumerate(sentences):
            if self.measure(sentence.words) > self.length:
                if first is not None:
                    yield first, number
                yield number, number + 1  # alone, and too long: the batcher skips and counts it
                first = None
                continue
            if first is None:
                first = number
                continue
            words = [word for s in sentences[first : number + 1] for word in s.words]
            if self.measure(words) > self.length:
                yield first, number
                first = number
        if first is not None:
            yield first, len(sentences)


def make_window(index: int, document: Document, first: int, last: int) -> Window:
    """The unit of sentences ``first`` to ``last`` (excluded) of ``document``, with its mentions."""
    sentences = document.sentences[first:last]
    offsets, words = {}, []
    for number, sentence in zip(range(first, last), sentences):
        offsets[number] = len(words)
        words.extend(sentence.words)
    inside = [(offsets[m.head[0]] + m.head[1], order, m) for order, m in enumerate(document.mentions)
              if first <= m.head[0] < last]
    inside.sort(key=lambda item: item[:2])
    mentions = tuple(WindowMention.of(mention, position) for position, _, mention in inside)
    return Window(index, tuple(words), sentences=tuple(sentences), document=document.id, mentions=mentions)
