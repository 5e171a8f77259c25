"""The (query, head) pairs of a batch of sentences, flattened into tensors.

Scoring gathers each pair's prediction with one advanced-indexing operation,
so the pairs of every relation and sentence of a batch travel together as
equally long index tensors. They are made from the batch's words as numpy
columns (probing.data.relations.WordTable), a few array operations per
relation and none per word.

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

import numpy as np
import torch

from probing.data.relations import WordTable, relation_arcs
from probing.data.treebank import ROOT, Sentence


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

    def to(self, device: torch.device | str) -> "PairBatch":
        """The same pairs on ``device``, copied there in one transfer (a no-op where they already are)."""
        if self.row.device == torch.device(device):
            return self
        moved = torch.stack([self.row, self.query, self.target, self.relation, self.dependents()]).to(device)
        return PairBatch(*moved.unbind(0))

    def dependents(self) -> torch.Tensor:
        """long [pair]: each pair's dependent word (the query, unless the relation says otherwise)."""
        return self.query if self.dependent is None else self.dependent


def collect_pairs(sentences: Sequence[Sentence], relations: Sequence[str]) -> PairBatch:
    """Every relation's pairs in every sentence, ordered by sentence, then relation, then as the relation
    lists them (the order of scoring the sentences one at a time)."""
    table = WordTable(sentences)
    arcs = [relation_arcs(name, table) for name in relations]
    query, head, dependent = (np.concatenate(column) for column in zip(*(a.fields() for a in arcs)))  # [pair]
    relation = np.repeat(np.arange(len(relations)), [len(a.query) for a in arcs])
    row = table.row[dependent]
    order = np.argsort(row * len(relations) + relation, kind="stable")  # [pair]: sentence-major, stable within
    target = np.where(head == ROOT, ROOT, table.position[head])
    columns = np.stack([row, table.position[query], target, relation, table.position[dependent]])[:, order]
    return PairBatch(*torch.from_numpy(np.ascontiguousarray(columns)).unbind(0))


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
