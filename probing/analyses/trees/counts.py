"""Whole trees from single heads: integer UAS and UUAS counts of every layer, head, direction and decoding.

For every layer, head and direction the score of "h is the head of d" is
``W[d, h]`` (``dep_to_head``) or ``W[h, d]`` (``head_to_dep``), and each word
gets a head in two ways: ``max`` (its best-scoring word, the probe's rule) and
``mst`` (the maximum spanning tree rooted at the gold root word). Counted
over the **scored words**: every word but the gold root and words whose UPOS
is ``PUNCT``.

- UAS: scored words whose predicted head is the gold head.
- UUAS: scored words whose gold edge {word, head} is an edge of the prediction
  in either direction (the prediction's edges are {w, head(w)} for every word
  w that has a predicted head: all words under ``max``, all but the root under
  ``mst``).
- Baselines on the same words: right-branching (each word's head is the next
  word, the last word's the one before it) and left-branching (the mirror).
- A sentence with no root word, or with several, is skipped and counted by reason.
- A causal stack (a decoder) adds the **causal reading** (:func:`causal_scores`):
  the score of an edge between two words is the later word's attention to the
  earlier one, whichever of the two is the head, decoded by ``max`` and ``mst``
  as the classic directions are (``causal_heads``).

Everything is an integer, so parts merge by addition; with a bootstrap every
count also has Poisson replicate counts, seeded by sentence index (as the probe's).

>>> import torch
>>> from probing.data.treebank import Sentence
>>> s = Sentence(words=("the", "cat", "sat"), heads=(1, 2, -1), labels=("det", "nsubj", "root"),
...              upos=("DET", "NOUN", "VERB"))
>>> W = torch.tensor([[0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.3, 0.6, 0.1]])  # each word attends to its head
>>> counts = TreeCounts(num_layers=1, num_heads=1)
>>> counts.update(W[None, None, None], [s], torch.tensor([3]))
>>> result = counts.result()
>>> result["words"], result["decodings"]["mst"]["uas"]["dep_to_head"], result["baselines"]["right_branching"]
(2, [[2]], {'uas': 2, 'uuas': 2})
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from probing.analyses.trees.decode import mst_heads
from probing.data.treebank import ROOT, Sentence
from probing.engine.counts import Counts
from probing.engine.predictions import predict_heads
from probing.naming import DIRECTIONS
from probing.stats.bootstrap import BootstrapSpec, ReplicateSums, replicated
from probing.stats.intervals import bootstrap_block
from probing.stats.selection import select_head

DECODINGS = ("max", "mst")
METRICS = ("uas", "uuas")
BASELINES = ("right_branching", "left_branching")
SKIP_REASONS = ("no_root", "several_roots")
PUNCT = "PUNCT"


def single_root(sentence: Sentence) -> int | str:
    """The index of the sentence's only root word, or the reason it is skipped."""
    roots = [i for i, head in enumerate(sentence.heads) if head == ROOT]
    if not roots:
        return "no_root"
    if len(roots) > 1:
        return "several_roots"
    return roots[0]


def causal_scores(word_attention: torch.Tensor) -> torch.Tensor:
    """Edge scores [..., dep, head] of the causal reading: ``S[d, h] = W[max(d, h), min(d, h)]``.

    A decoder's word sees only itself and earlier words, so of the two classic scores of an edge only
    the later word's attention to the earlier one exists; it scores the edge whichever word is the head.
    S is symmetric (the attention says which words belong together, the gold root orients the MST) and
    its diagonal is 0. Anything above W's diagonal (nothing, on a causal stack) is ignored.

    >>> W = torch.tensor([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.5, 0.125, 0.375]])
    >>> causal_scores(W).tolist()
    [[0.0, 0.25, 0.5], [0.25, 0.0, 0.125], [0.5, 0.125, 0.0]]
    """
    earlier = word_attention.tril(-1)  # [..., later, earlier]
    return earlier + earlier.transpose(-1, -2)


def gold_tensors(sentences: Sequence[Sentence], words: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """gold heads long [batch, word] (-1 for the root and padding) and scored words bool [batch, word].

    >>> from probing.data.treebank import Sentence
    >>> s = Sentence(words=("Hi", "!"), heads=(-1, 0), labels=("root", "punct"), upos=("INTJ", "PUNCT"))
    >>> [t.tolist() for t in gold_tensors([s], 3)]
    [[[-1, 0, -1]], [[False, False, False]]]
    """
    gold = torch.full((len(sentences), words), ROOT, dtype=torch.long)
    scored = torch.zeros((len(sentences), words), dtype=torch.bool)
    for row, sentence in enumerate(sentences):
        gold[row, : len(sentence)] = torch.tensor(sentence.heads, dtype=torch.long)
        scored[row, : len(sentence)] = torch.tensor(
            [head != ROOT and upos != PUNCT for head, upos in zip(sentence.heads, sentence.upos)]
        )
    return gold.to(device), scored.to(device)


def edge_counts(predicted: torch.Tensor, gold: torch.Tensor, scored: torch.Tensor) -> torch.Tensor:
    """Per-sentence correct counts long [batch, metric, ...] of predicted heads ``[batch, ..., word]``.

    gold [batch, word], scored [batch, word]; -1 in ``predicted`` means no head.

    >>> edge_counts(torch.tensor([[1, 0, 1]]), torch.tensor([[1, -1, 1]]), torch.tensor([[True, False, True]]))
    tensor([[2, 2]])
    >>> edge_counts(torch.tensor([[2, 0, 0]]), torch.tensor([[1, -1, 1]]), torch.tensor([[True, False, True]]))  # 0->1 found as 1->0
    tensor([[0, 1]])
    """
    extra = predicted.dim() - 2
    shape = (gold.shape[0],) + (1,) * extra + (gold.shape[1],)
    gold, scored = gold.view(shape), scored.view(shape)
    directed = (predicted == gold) & scored
    # the prediction made for the gold head: is it the word itself (the edge turned round)?
    of_gold_head = predicted.gather(-1, gold.clamp(min=0).expand_as(predicted))
    positions = torch.arange(predicted.shape[-1], device=predicted.device)
    undirected = directed | ((of_gold_head == positions) & scored)
    return torch.stack([directed.sum(-1), undirected.sum(-1)], dim=1)


def branching_heads(num_words: torch.Tensor, words: int) -> torch.Tensor:
    """long [batch, baseline, word]: right-branching (next word; the last word's is the one before it)
    and left-branching (previous word; the first word's is the one after it); -1 for padding.

    >>> branching_heads(torch.tensor([4, 1]), 4).tolist()
    [[[1, 2, 3, 2], [1, 0, 1, 2]], [[-1, -1, -1, -1], [-1, -1, -1, -1]]]
    """
    positions = torch.arange(words, device=num_words.device)[None, :]
    count = num_words[:, None]
    right = torch.where(positions == count - 1, positions - 1, positions + 1)
    left = torch.where(positions == 0, positions + 1, positions - 1).expand_as(right)
    heads = torch.stack([right, left], dim=1)
    # a one-word sentence has no other word to point at
    keep = (positions < count)[:, None, :] & (count > 1)[:, None, :]
    return torch.where(keep, heads, torch.full_like(heads, -1))


class TreeCounts(Counts):
    """UAS/UUAS counts of single-head trees; ``update`` per batch, ``merge`` across parts.

    Shapes (L layers, H heads, B bootstrap replicates): ``heads`` [metric,
    decoding, direction, L, H]; ``baselines`` [metric, baseline]; ``total``
    the scored words; with a bootstrap ``boot_total`` [B], ``boot_heads`` [B,
    metric, decoding, direction, L, H], ``boot_baselines`` [B, metric, baseline].
    A ``causal`` stack adds ``causal_heads`` [metric, decoding, L, H] (the causal
    reading, :func:`causal_scores`), ``head_first`` (scored words whose gold head precedes them: all that
    ``dep_to_head`` can reach there, ``head_to_dep`` reaching the rest) and with a bootstrap ``boot_causal``
    [B, metric, decoding, L, H].
    """

    boot_total, boot_heads, boot_baselines, boot_causal = replicated(), replicated(), replicated(), replicated()

    def __init__(self, num_layers: int, num_heads: int, bootstrap: BootstrapSpec | None = None, causal: bool = False):
        self.num_layers, self.num_heads = num_layers, num_heads
        self.bootstrap, self.causal = bootstrap, causal
        self.heads = torch.zeros((len(METRICS), len(DECODINGS), len(DIRECTIONS), num_layers, num_heads), dtype=torch.long)
        self.baselines = torch.zeros((len(METRICS), len(BASELINES)), dtype=torch.long)
        shapes = {"total": (), "heads": self.heads.shape, "baselines": self.baselines.shape}
        if causal:
            self.causal_heads = torch.zeros((len(METRICS), len(DECODINGS), num_layers, num_heads), dtype=torch.long)
            shapes["causal"] = self.causal_heads.shape
            self.head_first = torch.zeros((), dtype=torch.long)  # scored words whose gold head precedes them
        self.total = 0
        self.sentences = 0
        self.skipped = dict.fromkeys(SKIP_REASONS, 0)
        self.replicates = None if bootstrap is None else ReplicateSums(bootstrap.replicates, bootstrap.seed, shapes)

    def update(self, word_attention: torch.Tensor, sentences: Sequence[Sentence], num_words,
               predictions: torch.Tensor | None = None) -> None:
        """Count one batch: word_attention [batch, layer, head, word, word] (not modified).

        ``predictions``: the batch's ``max`` heads long [batch, direction, layer, head, word] when the
        caller already has them (the engine's ``BatchView.predictions``), so they are not made twice.
        """
        num_words = torch.as_tensor(num_words, dtype=torch.long)
        if [len(sentence) for sentence in sentences] != num_words.tolist():
            raise ValueError("num_words must be the sentences' lengths, in batch order")
        roots = [single_root(sentence) for sentence in sentences]
        kept = [row for row, root in enumerate(roots) if isinstance(root, int)]
        for root in roots:
            if isinstance(root, str):
                self.skipped[root] += 1
        if not kept:
            return
        device = word_attention.device
        if len(kept) < len(sentences):
            index = torch.tensor(kept, device=device)
            word_attention = word_attention.index_select(0, index)
            if predictions is not None:
                predictions = predictions.index_select(0, index.to(predictions.device))
            num_words = num_words[kept]
            sentences = [sentences[row] for row in kept]
        root = torch.tensor([roots[row] for row in kept], device=device)
        words = word_attention.shape[-1]
        gold, scored = gold_tensors(sentences, words, device)
        num_words = num_words.to(device)

        # readings: the two classic directions, then on a causal stack the causal one
        readings = [word_attention, word_attention.transpose(-1, -2)]
        best = predict_heads(word_attention, num_words) if predictions is None else predictions.to(device)
        if self.causal:
            readings.append(causal_scores(word_attention))
            # S is symmetric: its dep_to_head argmax is each word's best edge
            best = torch.cat([best, predict_heads(readings[-1], num_words)[:, :1]], dim=1)
        tree = mst_heads(torch.stack(readings, dim=1), root, num_words)  # [batch, reading, layer, head, word]
        # [batch, metric, decoding, reading, layer, head]
        per_sentence = edge_counts(torch.stack([best, tree], dim=1), gold, scored).cpu()
        causal = per_sentence[:, :, :, len(DIRECTIONS)] if self.causal else None  # [batch, metric, decoding, L, H]
        per_sentence = per_sentence[:, :, :, : len(DIRECTIONS)]
        baselines = edge_counts(branching_heads(num_words, words), gold, scored).cpu()  # [batch, metric, baseline]
        totals = scored.sum(-1).cpu()  # [batch]

        self.sentences += len(sentences)
        self.total += int(totals.sum())
        self.heads += per_sentence.sum(0)
        self.baselines += baselines.sum(0)
        parts = {"total": totals, "heads": per_sentence, "baselines": baselines}
        if self.causal:
            self.causal_heads += causal.sum(0)
            parts["causal"] = causal
            positions = torch.arange(words, device=device)
            self.head_first += int(((gold >= 0) & (gold < positions) & scored).sum())
        if self.replicates is not None:
            self.replicates.add([s.index for s in sentences], parts)

    # -- counts (probing.engine.counts) ---------------------------------------------------------

    counts_name = "tree counts"

    def counted(self) -> list[str]:
        names = ["heads", "baselines"] + (["causal_heads", "head_first"] if self.causal else [])
        if self.bootstrap is not None:
            names += ["boot_total", "boot_heads", "boot_baselines"] + (["boot_causal"] if self.causal else [])
        return names + ["total", "sentences", "skipped"]

    def count_options(self) -> tuple:
        return (self.num_layers, self.num_heads, self.bootstrap, self.causal)

    def result(self) -> dict:
        """Plain ints and lists; layers and heads count from 0."""
        decodings = {}
        for d, decoding in enumerate(DECODINGS):
            entry = {}
            for m, metric in enumerate(METRICS):
                counts = self.heads[m, d]  # [direction, layer, head]
                entry[metric] = {direction: counts[r].tolist() for r, direction in enumerate(DIRECTIONS)}
                choice = select_head(counts.numpy(), self.total)
                entry[f"best_{metric}"] = None if choice is None else {
                    "layer": choice.layer, "head": choice.head, "direction": choice.direction,
                    "correct": choice.correct, "ties": choice.ties,
                }
            decodings[decoding] = entry
        result = {
            "layers": self.num_layers,
            "heads": self.num_heads,
            "sentences": {"scored": self.sentences, "skipped": dict(self.skipped)},
            "words": self.total,
            "decodings": decodings,
            "baselines": {
                baseline: {metric: int(self.baselines[m, b]) for m, metric in enumerate(METRICS)}
                for b, baseline in enumerate(BASELINES)
            },
            "bootstrap": None,
        }
        if self.causal:  # [decoding][metric] -> [layer][head]
            result["causal"] = {decoding: {metric: self.causal_heads[m, d].tolist() for m, metric in enumerate(METRICS)}
                                for d, decoding in enumerate(DECODINGS)}
        if self.bootstrap is not None:
            result["bootstrap"] = bootstrap_block(
                self.bootstrap.replicates, self.bootstrap.seed,
                total=self.boot_total.tolist(),
                heads=self.boot_heads.tolist(),  # [replicate, metric, decoding, direction, layer, head]
                baselines=self.boot_baselines.tolist(),  # [replicate, metric, baseline]
            )
        return result

