"""Running integer counts of the probe: ``update`` per batch, ``merge`` across parts.

Everything a result holds is a count, so shards, processes and resumed runs
combine by addition and give exactly the counts of one run. Memory is fixed by
the model's shape and the relation list, never by the treebank's length.

>>> import torch
>>> from probing.analyses.probe.pairs import PairBatch
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

import torch

from probing.analyses.probe.pairs import PairBatch
from probing.engine.counts import Counts
from probing.errors import ProbingError
from probing.stats.bootstrap import BootstrapSpec, ReplicateSums, replicated

OFFSETS = (-3, -2, -1, 1, 2, 3)
"""The positional baselines: word i's head is predicted to be word i + offset."""


class ProbeCounts(Counts):
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
        pairs = pairs.to(predictions.device)  # one copy of the pairs; nothing else crosses before the sums
        counted = self._pair_counts(predictions, pairs)  # float [pair, column]
        # Every column added up per relation by one scatter-add (whole numbers far below 2**24, exact in float32),
        # and one copy back of the sums, a few kilobytes.
        sums = counted.new_zeros(len(self.relations), counted.shape[1]).index_add_(0, pairs.relation, counted)
        sums, start = sums.round().long().cpu(), 0  # [relation, column]
        for name, width in self._columns():
            counter = getattr(self, name)  # [relation, ...]: its column group of the sums
            counter += sums[:, start : start + width].reshape(counter.shape)
            start += width
        if self.bootstrap is not None:
            self._update_bootstrap(pairs, sentence_indices, counted, weights)

    def _columns(self) -> list[tuple[str, int]]:
        """The counters a pair's row of counts fills, in column order, with their widths: what the bootstrap
        weights first (``total``, ``heads``, ``baselines``, on a causal stack ``causal_heads``), then what it
        does not (``reachable``, on a causal stack ``head_first``)."""
        columns = [("total", 1), ("heads", self.heads[0].numel()), ("baselines", len(self.offsets))]
        if self.causal:
            columns.append(("causal_heads", self.causal_heads[0].numel()))
        columns.append(("reachable", 2))
        if self.causal:
            columns.append(("head_first", 1))
        return columns

    def _pair_counts(self, predictions: torch.Tensor, pairs: PairBatch) -> torch.Tensor:
        """float [pair, column]: every count of each pair side by side, in the order of :meth:`_columns`.

        predictions: long [batch, direction, layer, head, word]; pairs on the same device.
        """
        row, query, target = pairs.row, pairs.query, pairs.target
        # [pair, direction, layer, head]: advanced indices on axes 0 and 4 move to the front
        predicted = predictions[row, :, :, :, query]
        reachable = self._reachable(pairs)  # [pair, direction]
        head_correct = (predicted == target[:, None, None, None]) & reachable[:, :, None, None].bool()
        offsets = torch.tensor(self.offsets, dtype=torch.long, device=predictions.device)
        # [pair, offset]; a ROOT target (-1) is never right, even where query + offset == -1
        baseline_correct = ((query[:, None] + offsets[None, :]) == target[:, None]) & (target[:, None] >= 0)
        columns = [torch.ones_like(target)[:, None], head_correct.flatten(1), baseline_correct]
        if self.causal:
            columns.append(self._causal_correct(predictions, pairs).flatten(1))
        columns.append(reachable)
        if self.causal:
            columns.append(((target >= 0) & (target < pairs.dependents()))[:, None])
        return torch.cat([column.float() for column in columns], dim=1)

    def _causal_correct(self, predictions: torch.Tensor, pairs: PairBatch) -> torch.Tensor:
        """bool [pair, layer, head]: the later word of the pair predicts the earlier one.

        On a causal stack a word's row of the word attention holds only itself and earlier words, so its
        ``dep_to_head`` prediction (diagonal zeroed) is its strongest attention among earlier words.
        A pair with ROOT as head is never right; the first word predicts nothing, and no pair has it as
        its later word.
        """
        dependent, target = pairs.dependents(), pairs.target
        later, earlier = torch.maximum(dependent, target), torch.minimum(dependent, target)
        predicted = predictions[pairs.row, 0, :, :, later]  # [pair, layer, head]
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

        counted: float [pair, column] (see _pair_counts), on the predictions' device.
        """
        batch, relations = len(sentence_indices), len(self.relations)
        weighted = [(name, width) for name, width in self._columns() if name not in ("reachable", "head_first")]
        width = sum(size for _, size in weighted)
        key = pairs.row * relations + pairs.relation  # one bucket per (sentence, relation)
        # [sentence, relation, counts]: whole numbers no larger than a sentence's pairs, exact in float32
        per_sentence = counted.new_zeros(batch * relations, width).index_add_(0, key, counted[:, :width])
        per_sentence = per_sentence.view(batch, relations, width)
        names = {"total": "total", "heads": "heads", "baselines": "baselines", "causal_heads": "causal"}
        parts, start = {}, 0
        for name, size in weighted:
            parts[names[name]] = per_sentence[:, :, start : start + size]
            start += size
        self.replicates.add(sentence_indices, parts, weights)

    # -- counts (probing.engine.counts) ---------------------------------------------------------

    counts_name = "probe counts"

    def counted(self) -> list[str]:
        names = ["total", "heads", "baselines", "reachable"] + (["causal_heads", "head_first"] if self.causal else [])
        if self.bootstrap is not None:
            names += ["boot_total", "boot_heads", "boot_baselines"] + (["boot_causal"] if self.causal else [])
        return names + ["sentences", "words"]

    def count_options(self) -> tuple:
        return (self.relations, self.num_layers, self.num_heads, self.offsets, self.bootstrap, self.causal)

    def _check_counts_state(self, state, prefix: str) -> None:
        if prefix + "reachable" not in state:
            raise ProbingError("the probe counts have no reachable counts (written by an older probing); score again")
        super()._check_counts_state(state, prefix)
