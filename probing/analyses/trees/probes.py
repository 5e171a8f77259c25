"""Attention probes (Clark et al. 2019, section 5): classifiers over the frozen model's attention.

For dependent i and candidate head j (every other word, or ROOT), with
``W_k`` the word attention of head k (all layers and heads, K of them):

- ``attn``: score(i, j) = sum_k w_k W_k[i, j] + u_k W_k[j, i]; ROOT's score
  is a * F(i) + b * S(i) + c, where F(i) = sum_k w_k A_k(i, first special) and
  S(i) = sum_k w_k A_k(i, last special): 2K + 3 parameters.
- ``attn+vectors``: the same, but w and u (one weight per head and direction)
  are a linear function of the concatenated word vectors [v_i; v_j]; ROOT's
  vector is zero (its weights come from v_i and the bias alone).
- ``distances+vectors``: an MLP (one tanh layer of 256) over [v_i; v_j; i - j;
  |i - j|; sign(i - j); is-ROOT]; for ROOT, v_j = 0, the three distance
  features are 0 and is-ROOT is 1.

How the ROOT scalars are formed from all heads (the contract names "the
attention of i to the first special pseudo-word" without saying how the
heads combine): as in Clark et al.'s released probe, where each head's
attention to [CLS] and to [SEP] is scaled by two shared scalars and then
enters through that head's own weight. Their probe also adds the transposed
half (the special token's attention *to* i, through u_k); the contract says
"attention of i to", so that half is left out, which keeps the count at
2K + 3. (Their notebook also puts ROOT's word vector at the wrong index; here
ROOT is always the last candidate, for scores, features and labels alike.)

Candidates are ordered words 0..n-1, then ROOT (index n); a word is never
its own candidate, nor is padding. Training (:func:`train_probe`): Adam on
the mean cross-entropy of the gold candidate over all words of the selection
treebank, seeded (initial weights and the order of sentences), every setting
recorded. Decoding (:func:`decode`): ``argmax`` per word (ROOT allowed,
Clark's), and ``mst`` over the word-to-word scores rooted at the gold root
(:func:`probing.analyses.trees.decode.mst_heads`; logits and log-probabilities differ by
a constant per dependent, so the tree is the same).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from probing.analyses.trees.counts import METRICS, SKIP_REASONS, edge_counts, gold_tensors, single_root
from probing.analyses.trees.decode import mst_heads
from probing.analyses.trees.features import ProbeBatch, ProbeExample, gold_targets
from probing.data.treebank import Sentence
from probing.engine.counts import Counts
from probing.stats.bootstrap import BootstrapSpec, ReplicateSums, replicated
from probing.stats.intervals import bootstrap_block

PROBES = ("attn", "attn+vectors", "distances+vectors")
DECODINGS = ("argmax", "mst")


def _both_directions(attention: torch.Tensor) -> torch.Tensor:
    """[batch, 2K, dep, head]: W_k[i, j] for the first K maps, W_k[j, i] for the next K."""
    batch, layers, heads, words, _ = attention.shape
    flat = attention.reshape(batch, layers * heads, words, words)
    return torch.cat([flat, flat.transpose(-1, -2)], dim=1)


def _with_root(word_scores: torch.Tensor, root_scores: torch.Tensor, num_words: torch.Tensor) -> torch.Tensor:
    """[batch, dep, word + 1]: word candidates then ROOT; the diagonal and padding at -inf."""
    words = word_scores.shape[-1]
    scores = torch.cat([word_scores, root_scores[..., None]], dim=-1)
    positions = torch.arange(words + 1, device=scores.device)
    padded = (positions[None, :] >= num_words.to(scores.device)[:, None]) & (positions[None, :] < words)
    self_loop = torch.eye(words, words + 1, dtype=torch.bool, device=scores.device)
    return scores.masked_fill(padded[:, None, :] | self_loop[None], float("-inf"))


class AttnProbe(nn.Module):
    """``attn``: one weight per head and direction, and a, b, c for ROOT."""

    name = "attn"

    def __init__(self, num_layers: int, num_heads: int, dim: int = 0):
        super().__init__()
        maps = num_layers * num_heads
        self.weights = nn.Parameter(torch.zeros(2 * maps))  # w (dep_to_head), then u (head_to_dep)
        self.root = nn.Parameter(torch.zeros(3))  # a, b, c

    def forward(self, batch: ProbeBatch) -> torch.Tensor:
        maps = _both_directions(batch.attention)  # [batch, 2K, dep, head]
        scores = torch.einsum("bkij,k->bij", maps, self.weights)
        K = self.weights.shape[0] // 2
        special = batch.special.flatten(2, 3)  # [batch, 2, K, word]
        first, last = torch.einsum("bskw,k->bsw", special, self.weights[:K]).unbind(1)
        root = self.root[0] * first + self.root[1] * last + self.root[2]
        return _with_root(scores, root, batch.num_words)


class AttnVectorsProbe(nn.Module):
    """``attn+vectors``: w and u as a linear function of [v_i; v_j]; a, b, c for ROOT."""

    name = "attn+vectors"

    def __init__(self, num_layers: int, num_heads: int, dim: int):
        super().__init__()
        maps = num_layers * num_heads
        self.dependent = nn.Linear(dim, 2 * maps, bias=True)  # the v_i half of the linear map (and its bias)
        self.head = nn.Linear(dim, 2 * maps, bias=False)  # the v_j half
        self.root = nn.Parameter(torch.zeros(3))

    def forward(self, batch: ProbeBatch) -> torch.Tensor:
        maps = _both_directions(batch.attention)  # [batch, 2K, dep, head]
        from_dependent = self.dependent(batch.vectors)  # [batch, word, 2K], bias included
        from_head = self.head(batch.vectors)
        # sum_k (P_ik + Q_jk) F_k(i, j), without forming the [batch, i, j, 2K] weights
        scores = torch.einsum("bik,bkij->bij", from_dependent, maps) + torch.einsum("bjk,bkij->bij", from_head, maps)
        K = maps.shape[1] // 2
        special = batch.special.flatten(2, 3)  # [batch, 2, K, word]
        # ROOT's vector is zero: its weights are the dependent's half and the bias
        first, last = torch.einsum("bwk,bskw->bsw", from_dependent[..., :K], special).unbind(1)
        root = self.root[0] * first + self.root[1] * last + self.root[2]
        return _with_root(scores, root, batch.num_words)


class DistancesVectorsProbe(nn.Module):
    """``distances+vectors``: an MLP over both words' vectors and their distance (the baseline)."""

    name = "distances+vectors"
    reads_attention = False

    def __init__(self, num_layers: int = 0, num_heads: int = 0, dim: int = 0, hidden: int = 256):
        super().__init__()
        self.dependent = nn.Linear(dim, hidden, bias=True)
        self.head = nn.Linear(dim, hidden, bias=False)
        self.distance = nn.Linear(4, hidden, bias=False)  # i - j, |i - j|, sign(i - j), is-ROOT
        self.out = nn.Linear(hidden, 1)

    def forward(self, batch: ProbeBatch) -> torch.Tensor:
        words = batch.vectors.shape[1]
        positions = torch.arange(words, dtype=torch.float32, device=batch.vectors.device)
        offset = positions[:, None] - positions[None, :]  # [dep, head]: i - j
        features = torch.stack([offset, offset.abs(), offset.sign(), torch.zeros_like(offset)], dim=-1)
        root_features = torch.tensor([0.0, 0.0, 0.0, 1.0], device=offset.device).expand(words, 1, 4)
        features = torch.cat([features, root_features], dim=1)  # [dep, head + 1, 4]
        head_part = self.head(batch.vectors)  # [batch, word, hidden]
        head_part = torch.cat([head_part, torch.zeros_like(head_part[:, :1])], dim=1)  # ROOT's vector is zero
        hidden = self.dependent(batch.vectors)[:, :, None, :] + head_part[:, None, :, :] + self.distance(features)[None]
        scores = self.out(torch.tanh(hidden)).squeeze(-1)  # [batch, dep, head + 1]
        return _with_root(scores[..., :words], scores[..., words], batch.num_words)


_CLASSES = {cls.name: cls for cls in (AttnProbe, AttnVectorsProbe, DistancesVectorsProbe)}


def make_probe(name: str, num_layers: int, num_heads: int, dim: int, seed: int) -> nn.Module:
    """A probe with seeded initial weights: linear maps uniform in +-1/sqrt(fan in), head weights and
    a, b, c zero (so ``attn`` starts from uniform scores)."""
    if name not in _CLASSES:
        raise ValueError(f"unknown probe {name!r}: use one of {', '.join(PROBES)}")
    probe = _CLASSES[name](num_layers, num_heads, dim)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in probe.modules():
            if isinstance(module, nn.Linear):
                bound = 1 / math.sqrt(module.in_features)
                module.weight.uniform_(-bound, bound, generator=generator)
                if module.bias is not None:
                    module.bias.uniform_(-bound, bound, generator=generator)
    return probe


BUCKET_BATCHES = 8
"""Sentences are sorted by length within runs of this many batches before they are cut into batches."""


def _buckets(examples: Sequence[ProbeExample], size: int, generator: torch.Generator) -> list[list[ProbeExample]]:
    """One epoch's batches: shuffled, sorted by length within runs of BUCKET_BATCHES batches, shuffled again."""
    order = torch.randperm(len(examples), generator=generator).tolist()
    run = size * BUCKET_BATCHES
    batches = []
    for start in range(0, len(order), run):
        chunk = sorted(order[start : start + run], key=lambda index: len(examples[index]))
        batches += [[examples[i] for i in chunk[k : k + size]] for k in range(0, len(chunk), size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def train_probe(
    probe: nn.Module,
    examples: Sequence[ProbeExample],
    *,
    seed: int = 0,
    epochs: int = 10,
    learning_rate: float = 0.002,
    batch_sentences: int = 8,
) -> dict:
    """Train in place with Adam on the mean cross-entropy of each word's gold candidate; returns the record.

    Defaults: Clark et al.'s learning rate (0.002); they took one sentence per
    step for one epoch over the Penn Treebank's 40,000 training sentences, a
    selection treebank here is about 2,000, hence more epochs over small
    batches (not tuned on real data yet).

    Sentences are shuffled each epoch by a generator seeded with ``seed``, then
    sorted by length within runs of :data:`BUCKET_BATCHES` batches and cut into
    batches whose order is shuffled again, so that a batch pads little (2.3
    times fewer padded attention cells than random batches on en_ewt dev); the same examples,
    probe and settings give the same weights and record.
    """
    if not examples:
        raise ValueError("no training sentences")
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(probe.parameters(), lr=learning_rate)
    losses = []
    reads_attention = getattr(probe, "reads_attention", True)
    probe.train()
    for _ in range(epochs):
        total, words = 0.0, 0
        for group in _buckets(examples, batch_sentences, generator):
            batch = ProbeBatch.of(group, attention=reads_attention)
            targets = gold_targets(group, batch.vectors.shape[1])
            scores = probe(batch)  # [batch, dep, candidate]
            loss = nn.functional.cross_entropy(scores.flatten(0, 1), targets.flatten(), ignore_index=-100, reduction="sum")
            count = int((targets >= 0).sum())
            optimiser.zero_grad()
            (loss / count).backward()
            optimiser.step()
            total += float(loss.detach())
            words += count
        losses.append(total / words)
    probe.eval()
    return {
        "probe": probe.name,
        "seed": seed,
        "epochs": epochs,
        "learning_rate": learning_rate,
        "batch_sentences": batch_sentences,
        "batches": f"shuffled, sorted by length within runs of {BUCKET_BATCHES} batches, shuffled again",
        "optimiser": "Adam",
        "loss": "mean cross-entropy of the gold head over all words (ROOT a candidate)",
        "parameters": sum(p.numel() for p in probe.parameters()),
        "sentences": len(examples),
        "words": sum(len(e) for e in examples),
        "mean_loss_per_epoch": [round(value, 6) for value in losses],
    }


def decode(scores: torch.Tensor, num_words: torch.Tensor, roots: torch.Tensor) -> torch.Tensor:
    """long [batch, decoding, word] of probe scores [batch, dep, word + 1]: ``argmax`` (ROOT is -1) and
    ``mst`` over the word-to-word scores rooted at ``roots`` [batch]."""
    words = scores.shape[-1] - 1
    best = scores.argmax(dim=-1)
    best = torch.where(best == words, torch.full_like(best, -1), best)
    positions = torch.arange(words, device=scores.device)
    best = best.masked_fill(positions[None, :] >= num_words.to(scores.device)[:, None], -1)
    word_scores = scores[..., :words]
    # finite scores for the tree (its own rules leave out the diagonal and padding)
    finite = torch.where(torch.isfinite(word_scores), word_scores, torch.zeros_like(word_scores))
    tree = mst_heads(finite.detach(), roots, num_words)
    return torch.stack([best, tree], dim=1)


class ProbeTreeCounts(Counts):
    """UAS/UUAS counts of a trained probe on a held-out treebank, for both decodings.

    ``heads`` [metric, decoding]; ``total`` scored words; sentences without exactly
    one root are skipped and counted; bootstrap replicates as for the other counts.
    """

    boot_total, boot_heads = replicated(), replicated()

    def __init__(self, bootstrap: BootstrapSpec | None = None):
        self.bootstrap = bootstrap
        self.heads = torch.zeros((len(METRICS), len(DECODINGS)), dtype=torch.long)
        self.total = 0
        self.sentences = 0
        self.skipped = dict.fromkeys(SKIP_REASONS, 0)
        self.replicates = None if bootstrap is None else ReplicateSums(
            bootstrap.replicates, bootstrap.seed, {"total": (), "heads": self.heads.shape})

    @torch.no_grad()
    def update(self, probe: nn.Module, batch: ProbeBatch, sentences: Sequence[Sentence]) -> None:
        roots = [single_root(sentence) for sentence in sentences]
        for root in roots:
            if isinstance(root, str):
                self.skipped[root] += 1
        kept = [row for row, root in enumerate(roots) if isinstance(root, int)]
        if not kept:
            return
        index = torch.tensor(kept)
        batch = ProbeBatch(batch.attention[index], batch.special[index], batch.vectors[index], batch.num_words[index])
        sentences = [sentences[row] for row in kept]
        predicted = decode(probe(batch), batch.num_words, torch.tensor([roots[row] for row in kept]))
        gold, scored = gold_tensors(sentences, predicted.shape[-1])
        per_sentence = edge_counts(predicted.cpu(), gold, scored)  # [batch, metric, decoding]
        totals = scored.sum(-1)
        self.heads += per_sentence.sum(0)
        self.total += int(totals.sum())
        self.sentences += len(sentences)
        if self.replicates is not None:
            self.replicates.add([s.index for s in sentences], {"total": totals, "heads": per_sentence})

    # -- counts (probing.engine.counts) ---------------------------------------------------------

    counts_name = "probe tree counts"

    def counted(self) -> list[str]:
        return ["heads"] + (["boot_total", "boot_heads"] if self.bootstrap is not None else []) + \
            ["total", "sentences", "skipped"]

    def count_options(self):
        return self.bootstrap

    def result(self) -> dict:
        result = {
            "sentences": {"scored": self.sentences, "skipped": dict(self.skipped)},
            "words": self.total,
            "decodings": {d: {m: int(self.heads[i, j]) for i, m in enumerate(METRICS)} for j, d in enumerate(DECODINGS)},
            "bootstrap": None,
        }
        if self.bootstrap is not None:
            result["bootstrap"] = bootstrap_block(  # heads: [replicate, metric, decoding]
                self.bootstrap.replicates, self.bootstrap.seed, total=self.boot_total.tolist(),
                heads=self.boot_heads.tolist())
        return result
