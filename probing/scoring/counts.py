"""Running integer counts of the probe: ``update`` per batch, ``merge`` across parts.

Everything a result holds is a count, so shards, processes and resumed runs
combine by addition and give exactly the counts of one run. Memory is fixed by
the model's shape and the relation list, never by the treebank's length.

>>> import torch
>>> from probing.scoring.pairs import PairBatch
>>> counts = ProbeCounts(("det",), num_layers=1, num_heads=1)
>>> predictions = torch.tensor([1, 2, 0]).view(1, 1, 1, 1, 3).expand(1, 2, 1, 1, 3)
>>> pairs = PairBatch(*(torch.tensor([v]) for v in (0, 0, 1, 0)))  # word 0's head is word 1
>>> counts.update(predictions, pairs, sentence_indices=[0], num_words=[3])
>>> counts.total.tolist(), counts.heads[0, :, 0, 0].tolist(), counts.baselines[0].tolist()
([1], [1, 1], [0, 0, 0, 1, 0, 0])
>>> counts.reachable.tolist()   # [relation, direction]: a bidirectional head can reach any word
[[1, 1]]

On a causal stack a word attends only leftwards: ``dep_to_head`` can reach a
head left of its dependent, ``head_to_dep`` one to its right (the head must
attend to the dependent). A pair a direction cannot reach is never counted
correct there, even when a column of zeros breaks its tie on that word.

>>> causal = ProbeCounts(("det",), num_layers=1, num_heads=1, causal=True)
>>> causal.update(predictions, pairs, sentence_indices=[0], num_words=[3])
>>> causal.reachable.tolist(), causal.heads[0, :, 0, 0].tolist()
([[0, 1]], [0, 1])

A causal stack also gets the **causal direction** (docs/scoring.md): every pair
is scored by its later word, right when that word's strongest attention among
earlier words (its ``dep_to_head`` prediction) is the earlier word, so no pair
is out of reach; ``head_first`` counts the pairs whose head comes first.
Here the head (word 1) is later and attends most to word 2, not the determiner:

>>> causal.causal_heads.tolist(), causal.head_first.tolist()
([[[0]]], [0])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from probing.errors import ProbingError
from probing.scoring.bootstrap import ReplicateSums, replicated
from probing.scoring.pairs import PairBatch

OFFSETS = (-3, -2, -1, 1, 2, 3)
"""The positional baselines: word i's head is predicted to be word i + offset."""


@dataclass(frozen=True)
class BootstrapSpec:
    replicates: int = 1000
    seed: int = 0


class ProbeCounts:
    """Correct counts of every head, direction and baseline offset, per relation.

    Shapes (R relations, L layers, H heads, O offsets, B bootstrap replicates):
    ``total`` [R]; ``heads`` [R, direction, L, H]; ``baselines`` [R, O];
    ``reachable`` [R, direction], the pairs a head of that direction can get
    right at all (every pair with a word as head, and on a ``causal`` stack only
    those on the side it can see); with a bootstrap also ``boot_total`` [B, R], ``boot_heads``
    [B, R, direction, L, H], ``boot_baselines`` [B, R, O]. A ``causal`` stack adds ``causal_heads``
    [R, L, H] (the causal direction's correct counts), ``head_first`` [R] (pairs whose head precedes
    the dependent) and with a bootstrap ``boot_causal`` [B, R, L, H].
    """

    boot_total, boot_heads, boot_baselines, boot_causal = replicated(), replicated(), replicated(), replicated()

    def __init__(
        self,
        relations: Sequence[str],
        num_layers: int,
        num_heads: int,
        offsets: Sequence[int] = OFFSETS,
        bootstrap: BootstrapSpec | None = None,
        causal: bool = False,
    ):
        self.relations = tuple(relations)
        self.causal = causal
        self.num_layers, self.num_heads = num_layers, num_heads
        self.offsets = tuple(offsets)
        self.bootstrap = bootstrap
        shape = (len(self.relations),)
        self.total = torch.zeros(shape, dtype=torch.long)
        self.heads = torch.zeros(shape + (2, num_layers, num_heads), dtype=torch.long)
        self.baselines = torch.zeros(shape + (len(self.offsets),), dtype=torch.long)
        self.reachable = torch.zeros(shape + (2,), dtype=torch.long)
        if causal:
            self.causal_heads = torch.zeros(shape + (num_layers, num_heads), dtype=torch.long)
            self.head_first = torch.zeros(shape, dtype=torch.long)
        self.sentences = 0
        self.words = 0
        shapes = {"total": self.total.shape, "heads": self.heads.shape, "baselines": self.baselines.shape}
        if causal:
            shapes["causal"] = self.causal_heads.shape
        self.replicates = None if bootstrap is None else ReplicateSums(bootstrap.replicates, bootstrap.seed, shapes)

    def update(
        self,
        predictions: torch.Tensor,
        pairs: PairBatch,
        sentence_indices: Sequence[int],
        num_words: Sequence[int],
        weights: torch.Tensor | None = None,
    ) -> None:
        """Count one batch (``weights``: its bootstrap Poisson weights, if drawn in advance).

        predictions: long [batch, direction, layer, head, word] (see predict_heads), on any device:
        the counting runs there (a GPU's predictions never leave it) and only the batch's counts come back.
        pairs: the batch's pairs, ``row`` indexing the batch axis.
        """
        self.sentences += len(sentence_indices)
        self.words += int(sum(num_words))
        if len(pairs) == 0:
            return
        device = predictions.device
        row, query, target = (pairs.row.to(device), pairs.query.to(device), pairs.target.to(device))
        # [pair, direction, layer, head]: advanced indices on axes 0 and 4 move to the front
        predicted = predictions[row, :, :, :, query]
        reachable = self._reachable(pairs).to(device)  # [pair, direction]
        head_correct = (predicted == target[:, None, None, None]) & reachable[:, :, None, None].bool()
        offsets = torch.tensor(self.offsets, dtype=torch.long, device=device)
        # [pair, offset]; a ROOT target (-1) is never right, even where query + offset == -1
        baseline_correct = ((query[:, None] + offsets[None, :]) == target[:, None]) & (target[:, None] >= 0)
        # Every count of a pair side by side: [pair, 1 + direction * layer * head + offset (+ layer * head
        # on a causal stack)]. One product with a one-hot [relation, pair] matrix adds them up per relation
        # (whole numbers far below 2**24, exact in float32).
        columns = [torch.ones(len(pairs), 1, device=device), head_correct.flatten(1).float(), baseline_correct.float()]
        if self.causal:
            columns.append(self._causal_correct(predictions, pairs).flatten(1).float())
        counted = torch.cat(columns, dim=1)
        by_relation = torch.nn.functional.one_hot(pairs.relation.to(device), len(self.relations)).T.float()
        sums = (by_relation @ counted).round().long().cpu()  # [relation, 1 + heads + offsets]
        heads, offsets = self.heads[0].numel(), len(self.offsets)
        self.total += sums[:, 0]
        self.heads += sums[:, 1 : 1 + heads].view(self.heads.shape)
        self.baselines += sums[:, 1 + heads : 1 + heads + offsets]
        self.reachable += (by_relation @ reachable.float()).round().long().cpu()
        if self.causal:
            self.causal_heads += sums[:, 1 + heads + offsets :].view(self.causal_heads.shape)
            head_first = ((pairs.target >= 0) & (pairs.target < self._dependents(pairs))).float().to(device)
            self.head_first += (by_relation @ head_first).round().long().cpu()
        if self.bootstrap is not None:
            self._update_bootstrap(pairs, sentence_indices, counted, weights)

    @staticmethod
    def _dependents(pairs: PairBatch) -> torch.Tensor:
        """long [pair]: each pair's dependent word (the query, unless the relation says otherwise)."""
        return pairs.query if pairs.dependent is None else pairs.dependent

    def _causal_correct(self, predictions: torch.Tensor, pairs: PairBatch) -> torch.Tensor:
        """bool [pair, layer, head]: the later word of the pair predicts the earlier one.

        On a causal stack a word's row of the word attention holds only itself and earlier words, so its
        ``dep_to_head`` prediction (diagonal zeroed) is its strongest attention among earlier words.
        A pair with ROOT as head is never right; the first word predicts nothing, and no pair has it as
        its later word.
        """
        device = predictions.device
        dependent, target = self._dependents(pairs).to(device), pairs.target.to(device)
        later, earlier = torch.maximum(dependent, target), torch.minimum(dependent, target)
        predicted = predictions[pairs.row.to(device), 0, :, :, later]  # [pair, layer, head]
        return (predicted == earlier[:, None, None]) & (target >= 0)[:, None, None]

    def _reachable(self, pairs: PairBatch) -> torch.Tensor:
        """long [pair, direction]: 1 where a head of that direction can predict the pair's head."""
        is_word = pairs.target >= 0  # ROOT is never predicted
        if not self.causal:
            return torch.stack([is_word, is_word], dim=1).long()
        # dep_to_head: the dependent attends to a head on its left; head_to_dep: the head,
        # on the dependent's right, attends to it
        return torch.stack([is_word & (pairs.target < pairs.query), pairs.target > pairs.query], dim=1).long()

    def _update_bootstrap(self, pairs: PairBatch, sentence_indices, counted: torch.Tensor,
                          weights: torch.Tensor | None = None) -> None:
        """Keep each sentence's counts for the replicate sums (weighted a chunk of sentences at a time).

        counted: float [pair, 1 + heads + offsets] (see update), on the predictions' device.
        """
        device, batch, relations = counted.device, len(sentence_indices), len(self.relations)
        key = (pairs.row * relations + pairs.relation).to(device)  # one bucket per (sentence, relation)
        by_sentence = torch.nn.functional.one_hot(key, batch * relations).T.float()  # [sentence * relation, pair]
        # whole numbers no larger than a sentence's pairs: exact in float32
        per_sentence = (by_sentence @ counted).view(batch, relations, -1)  # [sentence, relation, counts]
        heads, offsets = self.heads[0].numel(), len(self.offsets)
        parts = {"total": per_sentence[:, :, 0], "heads": per_sentence[:, :, 1 : 1 + heads],
                 "baselines": per_sentence[:, :, 1 + heads : 1 + heads + offsets]}
        if self.causal:
            parts["causal"] = per_sentence[:, :, 1 + heads + offsets :]
        self.replicates.add(sentence_indices, parts, weights)

    def merge(self, other: "ProbeCounts") -> "ProbeCounts":
        """Add another part's counts into this one (same relations, shape and bootstrap)."""
        mine = (self.relations, self.num_layers, self.num_heads, self.offsets, self.bootstrap, self.causal)
        theirs = (other.relations, other.num_layers, other.num_heads, other.offsets, other.bootstrap, other.causal)
        if mine != theirs:
            raise ProbingError(f"cannot merge counts of different shape or options: {mine} vs {theirs}")
        for name in self.tensor_names():
            getattr(self, name).add_(getattr(other, name))
        self.sentences += other.sentences
        self.words += other.words
        return self

    def tensor_names(self) -> list[str]:
        names = ["total", "heads", "baselines", "reachable"] + (["causal_heads", "head_first"] if self.causal else [])
        if self.bootstrap is not None:
            names += ["boot_total", "boot_heads", "boot_baselines"] + (["boot_causal"] if self.causal else [])
        return names
