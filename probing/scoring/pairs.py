"""The (query, head) pairs of a batch of sentences, flattened into tensors.

Scoring gathers each pair's prediction with one advanced-indexing operation,
so the pairs of every relation and sentence of a batch travel together as
four equally long index tensors.

>>> from probing.data.treebank import Sentence
>>> s = Sentence(words=("the", "cat", "sat"), heads=(1, 2, -1),
...              labels=("det", "nsubj", "root"), upos=("DET", "NOUN", "VERB"))
>>> batch = collect_pairs([s], ("det", "all"))
>>> batch.relation.tolist(), batch.query.tolist(), batch.target.tolist()
([0, 1, 1], [0, 0, 1], [1, 1, 2])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from probing.data.relations import dependent_pairs, relation_pairs
from probing.data.treebank import Sentence


@dataclass(frozen=True)
class PairBatch:
    """All pairs of a batch; each tensor is long [pair].

    ``row`` is the sentence's position in the batch, ``query`` the word whose
    prediction is scored, ``target`` the head it must equal (-1 for ROOT,
    which no head ever predicts), ``relation`` the index into the relation list, ``dependent`` the
    relation's dependent word itself (the query but for the ``poss`` clitic rule, which the causal
    direction does not apply).
    """

    row: torch.Tensor
    query: torch.Tensor
    target: torch.Tensor
    relation: torch.Tensor
    dependent: torch.Tensor | None = None

    def __len__(self) -> int:
        return int(self.row.numel())


def collect_pairs(sentences: Sequence[Sentence], relations: Sequence[str]) -> PairBatch:
    rows, queries, targets, relation_ids, dependents = [], [], [], [], []
    for row, sentence in enumerate(sentences):
        for relation_id, name in enumerate(relations):
            scored = relation_pairs(name, sentence)
            for (query, target), (dependent, _) in zip(scored, dependent_pairs(name, sentence), strict=True):
                rows.append(row)
                queries.append(query)
                targets.append(target)
                relation_ids.append(relation_id)
                dependents.append(dependent)
    as_long = lambda values: torch.tensor(values, dtype=torch.long)  # noqa: E731
    return PairBatch(as_long(rows), as_long(queries), as_long(targets), as_long(relation_ids), as_long(dependents))


def pairs_key(relations: Sequence[str]) -> tuple:
    """The key of a batch's pairs of ``relations`` among what the input side prepared (``Batch.prepared``)."""
    return ("pairs", tuple(relations))


def pairs_of(batch, relations: Sequence[str]) -> PairBatch:
    """A batch's pairs of ``relations``: as the input side prepared them, else made now.

    >>> from types import SimpleNamespace
    >>> from probing.data.treebank import Sentence
    >>> s = Sentence(words=("the", "cat"), heads=(1, -1), labels=("det", "root"), upos=("DET", "NOUN"))
    >>> len(pairs_of(SimpleNamespace(sentences=[s], prepared={}), ("det",)))
    1
    """
    prepared = getattr(batch, "prepared", {})
    key = pairs_key(relations)
    return prepared[key] if key in prepared else collect_pairs(batch.sentences, relations)
