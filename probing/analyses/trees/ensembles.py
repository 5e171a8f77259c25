"""Head ensembles per relation and direction (Limisiewicz, Rosa and Mareček 2020), and trees from them.

Choosing on the selection treebank takes two passes over it: the candidates
come from the probe's single-head counts, and only then can the collector
keep their attention (keeping every head's instead would need about
L x H / 25 times the memory below).

1. :func:`candidate_heads`: per relation and direction, the 25 best single
   heads by their correct counts (the probe's counts of that treebank), ties
   to the lower layer, then the lower head.
2. :class:`EnsembleCollector`: one pass over the selection treebank keeping,
   for the candidate heads only, each pair's scores: the dependent's row of
   word attention (``dep_to_head``) or its column (``head_to_dep``), with the
   probe's rules already applied (diagonal 0, padding never chosen).
3. :meth:`EnsembleCollector.search`: greedy search. Start from the best single
   head; repeatedly add the candidate whose addition most raises the
   relation's correct count of the *averaged* attention (argmax of the
   ensemble's mean, the probe's rule), ties to the lower layer then lower head;
   stop at ``size`` heads (4) or when no addition helps; then try every swap of
   a member for a candidate and keep the best improving one (ties: the
   incoming candidate's lower layer and head, then the outgoing member's)
   until none improves.

Memory of the collector: for every pair of every relation, the padded row
length (the batch's longest sentence) x candidates per direction x 2
directions x 4 bytes (float32), independent of the model's number of heads.
en_ewt dev has 23,146 non-root arcs whose rows, padded to their batch's
longest sentence (batches of all-MiniLM-L6-v2's run), hold 611,649 words, so
the relation ``all`` (or all UD labels together, which split the same arcs)
takes 25 x 2 x 4 B x 611,649 = 122 MB, and the paper's four relations
(5,307 pairs) about 30 MB; ``dtype=torch.float16`` halves that. The
mean is taken as a float64 sum of the stored values, which is exact for a
few float32 numbers (so the order of the members never matters); its argmax
is the argmax of the mean.

A decoder's relations also get a ``causal`` key: candidates from the probe's
causal-direction counts, each pair's query its later word and target the
earlier one (:func:`_pairs_of`), scored by the later word's row.

Held out (:class:`EnsembleCounts`): each ensemble's correct count beside its
best single head's (the head the search started from), and the UAS/UUAS of trees decoded with
``mst`` (gold root) from one score per edge: the sum over the ensembles of the
ensemble's mean attention, oriented by its direction (``head_to_dep``
ensembles transposed, so every score reads "h is the head of d"), weighted by
its selection accuracy (a decoder's ``causal`` ensembles make trees of their own,
``causal_trees``, from their causal edge scores). Every classic ensemble given takes part (both directions of
each relation, when both are given); which relations to combine is the
caller's choice (UD labels, say: ``all`` would count every arc twice).
Relation counts cover every sentence, as the probe's; the trees skip, and
count, sentences without exactly one root. Scored words as in
:mod:`probing.analyses.trees.counts`.

>>> heads = np.array([[[5, 9], [9, 1]], [[0, 2], [7, 7]]])  # [direction, layer, head]
>>> candidate_heads({"det": heads}, limit=3)[("det", "dep_to_head")]
[(0, 1), (1, 0), (0, 0)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from probing.analyses.probe.pairs import collect_pairs
from probing.analyses.trees.counts import METRICS, SKIP_REASONS, causal_scores, edge_counts, gold_tensors, single_root
from probing.analyses.trees.decode import mst_heads
from probing.analyses.trees.defaults import CANDIDATES, ENSEMBLE_SIZE
from probing.data.treebank import Sentence
from probing.engine.counts import Counts
from probing.naming import DIRECTIONS
from probing.stats.bootstrap import BootstrapSpec, ReplicateSums, replicated
from probing.stats.intervals import bootstrap_block

CAUSAL = "causal"
"""A decoder's third ensemble direction: each pair scored by its later word's attention to the earlier one."""

Head = tuple[int, int]  # (layer, head), from 0


def rank_heads(correct, limit: int = CANDIDATES) -> list[Head]:
    """The ``limit`` best (layer, head) of counts [layer, head]: most correct first, ties to the lower
    layer then the lower head (the order of :func:`probing.stats.selection.select_head`).

    >>> rank_heads([[3, 5], [5, 0]], limit=3)
    [(0, 1), (1, 0), (0, 0)]
    """
    counts = np.asarray(correct)
    layers, heads = np.meshgrid(np.arange(counts.shape[0]), np.arange(counts.shape[1]), indexing="ij")
    order = np.lexsort((heads.ravel(), layers.ravel(), -counts.ravel()))[:limit]
    return [(int(layers.ravel()[i]), int(heads.ravel()[i])) for i in order]


def candidate_heads(relation_heads: Mapping[str, np.ndarray], limit: int = CANDIDATES,
                    causal_heads: Mapping[str, np.ndarray] | None = None) -> dict[tuple[str, str], list[Head]]:
    """Per (relation, direction) the ``limit`` best heads, from each relation's correct counts
    [direction, layer, head] (a probe result's ``heads``, or ``ProbeCounts.heads[r]``); a decoder's
    ``causal_heads`` ([layer, head] per relation, ``ProbeCounts.causal_heads[r]``) add a ``causal`` key each."""
    candidates = {
        (relation, direction): rank_heads(np.asarray(counts)[index], limit)
        for relation, counts in relation_heads.items()
        for index, direction in enumerate(DIRECTIONS)
    }
    for relation, counts in (causal_heads or {}).items():
        candidates[(relation, CAUSAL)] = rank_heads(counts, limit)
    return candidates


@dataclass(frozen=True)
class Ensemble:
    """A chosen ensemble (``members`` in the order kept) and the best single head it started from."""

    relation: str
    direction: str
    members: tuple[Head, ...]
    correct: int
    single: Head
    single_correct: int
    total: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    def as_dict(self) -> dict:
        return {
            "relation": self.relation,
            "direction": self.direction,
            "members": [{"layer": layer, "head": head} for layer, head in self.members],
            "correct": self.correct,
            "single": {"layer": self.single[0], "head": self.single[1]},
            "single_correct": self.single_correct,
            "total": self.total,
        }


def oriented_scores(word_attention: torch.Tensor, direction: str) -> torch.Tensor:
    """[..., query, candidate] scores of one direction: W itself (dep_to_head, and ``causal``, whose query is the
    later word of a pair) or its transpose (head_to_dep)."""
    return word_attention.transpose(-1, -2) if direction == "head_to_dep" else word_attention


def probe_ready(scores: torch.Tensor, num_words: torch.Tensor) -> torch.Tensor:
    """float64 copy of scores [batch, ..., dep, head] with the probe's rules: diagonal 0, padded heads -inf."""
    words = scores.shape[-1]
    positions = torch.arange(words, device=scores.device)
    shape = (scores.shape[0],) + (1,) * (scores.dim() - 2) + (words,)
    padded = (positions[None, :] >= num_words.to(scores.device)[:, None]).view(shape)
    ready = scores.to(torch.float64).masked_fill(padded, float("-inf"))
    ready.diagonal(dim1=-2, dim2=-1).fill_(0.0)
    return ready


def reachable(query: torch.Tensor, target: torch.Tensor, direction: str, causal: bool) -> torch.Tensor:
    """bool [pair]: whether a head of that direction can be right at all (as ProbeCounts): never for a
    ROOT target; on a causal stack dep_to_head only leftwards and head_to_dep only rightwards; the ``causal``
    direction (query: the later word, target: the earlier) reaches every pair of two words."""
    is_word = target >= 0
    if not causal or direction == CAUSAL:
        return is_word
    return is_word & (target < query) if direction == "dep_to_head" else target > query


@dataclass
class _Chunk:
    scores: torch.Tensor  # [pair, candidate, word]
    target: torch.Tensor  # [pair]
    reachable: torch.Tensor  # [pair]


class EnsembleCollector:
    """Keeps, for the candidate heads only, what the greedy search needs from the selection treebank.

    candidates: {(relation, direction): [(layer, head), ...]} (see :func:`candidate_heads`).
    """

    def __init__(self, candidates: Mapping[tuple[str, str], Sequence[Head]], causal: bool = False,
                 dtype: torch.dtype = torch.float32):
        self.candidates = {key: list(heads) for key, heads in candidates.items()}
        self.causal = causal
        self.dtype = dtype
        self.totals = dict.fromkeys(self.candidates, 0)
        self.chunks: dict[tuple[str, str], list[_Chunk]] = {key: [] for key in self.candidates}

    def update(self, word_attention: torch.Tensor, sentences: Sequence[Sentence], num_words) -> None:
        """word_attention [batch, layer, head, word, word] (not modified)."""
        num_words = torch.as_tensor(num_words, dtype=torch.long)
        for (relation, direction), heads in self.candidates.items():
            rows, queries, targets = _pairs_of(relation, sentences, direction)
            self.totals[(relation, direction)] += len(rows)
            if not rows:
                continue
            row, query, target = (torch.tensor(v) for v in (rows, queries, targets))
            layer = torch.tensor([member for member, _ in heads])
            head = torch.tensor([h for _, h in heads])
            # [pair, candidate, word, word] would be large: take the candidates' matrices of the
            # pairs' sentences, then each pair's row of dependent scores.
            device = word_attention.device
            chosen = word_attention[:, layer.to(device), head.to(device)]  # [batch, candidate, word, word]
            scores = probe_ready(oriented_scores(chosen, direction), num_words)
            kept = scores[row.to(device), :, query.to(device)]  # [pair, candidate, word]
            self.chunks[(relation, direction)].append(
                _Chunk(kept.to(self.dtype).cpu(), target, reachable(query, target, direction, self.causal))
            )

    def nbytes(self) -> int:
        """Memory held by the stored scores."""
        return sum(chunk.scores.element_size() * chunk.scores.numel() for chunks in self.chunks.values() for chunk in chunks)

    def correct(self, key: tuple[str, str], ensembles: torch.Tensor) -> torch.Tensor:
        """Correct counts long [ensemble] of ensembles given as candidate positions long [ensemble, member]."""
        counts = torch.zeros(len(ensembles), dtype=torch.long)
        for chunk in self.chunks[key]:
            summed = chunk.scores.to(torch.float64)[:, ensembles].sum(dim=2)  # [pair, ensemble, word]
            hits = (summed.max(dim=-1).indices == chunk.target[:, None]) & chunk.reachable[:, None]
            counts += hits.sum(0)
        return counts

    def search(self, size: int = ENSEMBLE_SIZE) -> list[Ensemble]:
        """The greedy ensemble of every (relation, direction), in the candidates' order."""
        return [self._search(key, size) for key in self.candidates]

    def _search(self, key: tuple[str, str], size: int) -> Ensemble:
        heads = self.candidates[key]
        # candidates in (layer, head) order decide ties among equal gains
        by_position = sorted(range(len(heads)), key=lambda i: heads[i])
        members = [0]  # the best single head
        single = score = int(self.correct(key, torch.tensor([[0]]))[0])
        while len(members) < size:
            options = [i for i in by_position if i not in members]
            if not options:
                break
            counts = self.correct(key, torch.tensor([members + [i] for i in options]))
            best = int(torch.argmax(counts))  # first maximum: the lowest (layer, head) among equal gains
            if int(counts[best]) <= score:
                break
            members.append(options[best])
            score = int(counts[best])
        while True:
            swaps = [
                (incoming, outgoing)
                for incoming in by_position
                if incoming not in members
                for outgoing in sorted(members, key=lambda i: heads[i])
            ]
            if not swaps:
                break
            trials = [[incoming if m == outgoing else m for m in members] for incoming, outgoing in swaps]
            counts = self.correct(key, torch.tensor(trials))
            best = int(torch.argmax(counts))
            if int(counts[best]) <= score:
                break
            members = trials[best]
            score = int(counts[best])
        return Ensemble(key[0], key[1], tuple(heads[i] for i in members), score, heads[0], single, self.totals[key])


def _pairs_of(relation: str, sentences: Sequence[Sentence], direction: str = "dep_to_head"
              ) -> tuple[list[int], list[int], list[int]]:
    """(batch row, query word, target word) of every pair; in the ``causal`` direction the query is the pair's
    later word and the target the earlier one (without the ``poss`` clitic rule, as the probe's causal
    direction), a ROOT pair keeping its dependent as query and -1 as target.

    >>> s = Sentence(words=("the", "cat", "sat"), heads=(1, 2, -1), labels=("det", "nsubj", "root"),
    ...              upos=("DET", "NOUN", "VERB"))
    >>> _pairs_of("det", [s]), _pairs_of("det", [s], CAUSAL)
    (([0], [0], [1]), ([0], [1], [0]))
    """
    pairs = collect_pairs(sentences, (relation,))  # [pair] tensors, sentence by sentence
    query, target = pairs.query, pairs.target
    if direction == CAUSAL:
        dependent, is_word = pairs.dependents(), target >= 0
        query = torch.where(is_word, torch.maximum(dependent, target), dependent)
        target = torch.where(is_word, torch.minimum(dependent, target), target)
    return pairs.row.tolist(), query.tolist(), target.tolist()


def ensemble_attention(word_attention: torch.Tensor, ensemble: Ensemble) -> torch.Tensor:
    """float64 [batch, word, word] mean word attention of the ensemble's members (not yet oriented)."""
    layer = torch.tensor([member for member, _ in ensemble.members], device=word_attention.device)
    head = torch.tensor([h for _, h in ensemble.members], device=word_attention.device)
    return word_attention[:, layer, head].to(torch.float64).sum(dim=1) / len(ensemble.members)


class EnsembleCounts(Counts):
    """Held-out counts of chosen ensembles: relation accuracy (ensemble and best single head) and trees.

    Shapes (E ensembles): ``total`` [E] pairs, ``correct`` [E], ``single_correct`` [E];
    ``trees`` [metric] UAS/UUAS of the combined trees of the classic ensembles over ``words`` scored words;
    with ``causal`` ensembles (a decoder's) also ``causal_trees`` [metric], the trees combined from those
    alone in the causal reading (:func:`~probing.analyses.trees.counts.causal_scores`);
    with a bootstrap ``boot_*`` [replicate, ...] of each.
    """

    boot_total, boot_correct, boot_single_correct = replicated(), replicated(), replicated()
    boot_trees, boot_words, boot_causal_trees = replicated(), replicated(), replicated()

    def __init__(self, ensembles: Sequence[Ensemble], causal: bool = False, bootstrap: BootstrapSpec | None = None):
        self.ensembles = list(ensembles)
        self.causal = causal
        self.bootstrap = bootstrap
        size = len(self.ensembles)
        self.total = torch.zeros(size, dtype=torch.long)
        self.correct = torch.zeros(size, dtype=torch.long)
        self.single_correct = torch.zeros(size, dtype=torch.long)
        self.trees = torch.zeros(len(METRICS), dtype=torch.long)
        self.has_causal = any(ensemble.direction == CAUSAL for ensemble in self.ensembles)
        if self.has_causal:
            self.causal_trees = torch.zeros(len(METRICS), dtype=torch.long)
        self.words = 0
        self.sentences = 0
        self.skipped = dict.fromkeys(SKIP_REASONS, 0)
        shapes = {name: getattr(self, name).shape for name in self._counted()}
        self.replicates = None if bootstrap is None else ReplicateSums(
            bootstrap.replicates, bootstrap.seed, {**shapes, "words": ()})

    def update(self, word_attention: torch.Tensor, sentences: Sequence[Sentence], num_words) -> None:
        """word_attention [batch, layer, head, word, word] (not modified)."""
        num_words = torch.as_tensor(num_words, dtype=torch.long)
        batch, words = len(sentences), word_attention.shape[-1]
        per_sentence = torch.zeros((batch, 3, len(self.ensembles)), dtype=torch.long)  # total, correct, single
        # [batch, dep, head] scores of the combined trees: the classic ensembles', a decoder's causal ones'
        combined = torch.zeros((batch, words, words), dtype=torch.float64, device=word_attention.device)
        causal_combined = torch.zeros_like(combined) if self.has_causal else None
        for e, ensemble in enumerate(self.ensembles):
            mean = ensemble_attention(word_attention, ensemble)
            single = word_attention[:, ensemble.single[0], ensemble.single[1]]
            if ensemble.direction == CAUSAL:
                causal_combined += ensemble.accuracy * causal_scores(mean)
            else:
                combined += ensemble.accuracy * oriented_scores(mean, ensemble.direction)
            predicted = [probe_ready(oriented_scores(m, ensemble.direction), num_words).max(-1).indices.cpu()
                         for m in (mean, single)]  # [batch, word] each
            rows, queries, targets = _pairs_of(ensemble.relation, sentences, ensemble.direction)
            if not rows:
                continue
            row, query, target = (torch.tensor(v) for v in (rows, queries, targets))
            can = reachable(query, target, ensemble.direction, self.causal)
            ones = torch.ones_like(row)
            per_sentence[:, 0, e].index_add_(0, row, ones)
            for k, prediction in enumerate(predicted, start=1):
                per_sentence[:, k, e].index_add_(0, row, ((prediction[row, query] == target) & can).long())
        trees, tree_words = self._tree_counts(combined, sentences, num_words, tally=True)
        parts = {"total": per_sentence[:, 0], "correct": per_sentence[:, 1], "single_correct": per_sentence[:, 2],
                 "trees": trees, "words": tree_words}
        if self.has_causal:
            parts["causal_trees"], _ = self._tree_counts(causal_combined, sentences, num_words, tally=False)
            self.causal_trees += parts["causal_trees"].sum(0)
        self.total += per_sentence[:, 0].sum(0)
        self.correct += per_sentence[:, 1].sum(0)
        self.single_correct += per_sentence[:, 2].sum(0)
        self.trees += trees.sum(0)
        self.words += int(tree_words.sum())
        if self.replicates is not None:
            self.replicates.add([s.index for s in sentences], parts)

    def _tree_counts(self, combined: torch.Tensor, sentences, num_words, tally: bool) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-sentence UAS/UUAS [batch, metric] and scored words [batch] of the combined trees;
        sentences without exactly one root count zero (and with ``tally`` are counted as skipped)."""
        roots = [single_root(sentence) for sentence in sentences]
        counts = torch.zeros((len(sentences), len(METRICS)), dtype=torch.long)
        scored_words = torch.zeros(len(sentences), dtype=torch.long)
        kept = [row for row, root in enumerate(roots) if isinstance(root, int)]
        if tally:
            for root in roots:
                if isinstance(root, str):
                    self.skipped[root] += 1
            self.sentences += len(kept)
        if not kept:
            return counts, scored_words
        index = torch.tensor(kept, device=combined.device)
        root = torch.tensor([roots[row] for row in kept], device=combined.device)
        lengths = num_words.to(combined.device)[index]
        tree = mst_heads(combined.index_select(0, index), root, lengths)
        gold, scored = gold_tensors([sentences[row] for row in kept], combined.shape[-1], combined.device)
        counts[kept] = edge_counts(tree, gold, scored).cpu()
        scored_words[kept] = scored.sum(-1).cpu()
        return counts, scored_words

    def _counted(self) -> list[str]:
        return ["total", "correct", "single_correct", "trees"] + (["causal_trees"] if self.has_causal else [])

    # -- counts (probing.engine.counts) ---------------------------------------------------------

    counts_name = "ensemble counts"

    def counted(self) -> list[str]:
        names = self._counted()
        if self.bootstrap is not None:
            names += [f"boot_{name}" for name in names] + ["boot_words"]
        return names + ["words", "sentences", "skipped"]

    def count_options(self) -> tuple:
        return (self.ensembles, self.causal, self.bootstrap)

    def result(self) -> dict:
        """Plain ints and lists; layers and heads count from 0."""
        result = {
            "ensembles": [
                {**ensemble.as_dict(), "heldout": {
                    "total": int(self.total[e]), "correct": int(self.correct[e]),
                    "single_correct": int(self.single_correct[e]),
                }}
                for e, ensemble in enumerate(self.ensembles)
            ],
            "trees": {
                "decoding": "mst",
                "sentences": {"scored": self.sentences, "skipped": dict(self.skipped)},
                "words": self.words,
                **{metric: int(self.trees[m]) for m, metric in enumerate(METRICS)},
            },
            "bootstrap": None,
        }
        if self.has_causal:
            result["causal_trees"] = {"decoding": "mst", "words": self.words,
                                      **{metric: int(self.causal_trees[m]) for m, metric in enumerate(METRICS)}}
        if self.bootstrap is not None:
            result["bootstrap"] = bootstrap_block(
                self.bootstrap.replicates, self.bootstrap.seed,
                **{name: getattr(self, f"boot_{name}").tolist() for name in self._counted() + ["words"]})
        return result
