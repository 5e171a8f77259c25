"""A batch of minimal pairs scored in one forward pass: each pair one row, its shared token prefix computed once.

A pair's two sentences mostly begin alike, so their shared *token* prefix (:func:`shared_length`) is computed
once: each pair is one row, the prefix, then the good sentence's continuation, then the bad one's, every token at
its position in its own sentence and, through the attention mask, seeing exactly the tokens before it in its own
sentence (:func:`pair_rows`). The prefix's tokens are scored once and their log p counted in both sentences, so
each sentence's log p is still the whole sentence's up to float rounding (:func:`prefix_shared_log_probs`). A
batch that cannot be shared so (a pair that shares no token, rows beyond a sliding window), and every batch of a
model on which a tiny check finds the shared rows disagreeing with the whole sentences
(:func:`prefix_sharing_agrees`), is scored whole. :func:`batch_log_probs` is the one scorer of a batch of pairs,
for ``probing pairs`` and the ablation's minimal-pair metric alike; the tokens' log p are
probing.model.token_scores'.

>>> ids, mask, positions, visible = pair_rows([([1, 7, 8], [1, 7, 9])])
>>> ids.tolist(), positions.tolist()
([[1, 7, 8, 9]], [[0, 1, 2, 2]])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from probing.model.padding import padded_rows
from probing.model.token_scores import LOGIT_CELLS, RowScorer, exact_head

Pair = tuple[Sequence[int], Sequence[int]]
"""A pair's (good, bad) token ids, each beginning with its context token."""

AGREEMENT = 1e-4
"""Nats: how far a shared prefix's log p may be from the whole sentence's (float rounding of other shapes)."""


def shared_length(first: Sequence[int], second: Sequence[int]) -> int:
    """How many tokens two sentences' ids share at their start: at most all but the last token of the
    shorter, so that each sentence has a continuation of one token or more to score.

    >>> shared_length([1, 7, 8, 9], [1, 7, 5]), shared_length([1, 7], [1, 7, 5]), shared_length([3], [4, 5])
    (2, 1, 0)
    """
    most = min(len(first), len(second)) - 1
    length = 0
    while length < most and first[length] == second[length]:
        length += 1
    return length


def row_length(pair: Pair) -> int:
    """The tokens of a pair's row: its prefix once, then both continuations (what batches are grouped by).

    >>> row_length(([1, 7, 8], [1, 7, 9]))
    4
    """
    good, bad = pair
    return len(good) + len(bad) - shared_length(good, bad)


def pair_rows(pairs: Sequence[Pair]):
    """One row per pair: its shared prefix (:func:`shared_length`), its good sentence's continuation, then its bad
    one's; ids and attention mask [pair, token] (right-padded), each token's position in its own sentence, and
    which keys each query sees, bool [pair, query, key]: those before it in its own sentence, so that a bad
    continuation's token never sees the good continuation beside it.

    >>> visible = pair_rows([([1, 7, 8], [1, 7, 9])])[3]
    >>> visible[0].int().tolist()  # the last token (the bad one's 9) sees 1 and 7, not the good one's 8
    [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 0, 1]]
    """
    shared = torch.tensor([shared_length(good, bad) for good, bad in pairs])[:, None]  # [pair, 1]
    ids, mask = padded_rows([[*good, *bad[length:]] for (good, bad), length in zip(pairs, shared[:, 0].tolist())])
    index = torch.arange(ids.shape[1])[None]  # [1, token]
    good_length = torch.tensor([len(good) for good, _ in pairs])[:, None]
    bad_part = index >= good_length  # [pair, token]
    good_part = (index >= shared) & ~bad_part
    positions = torch.where(bad_part, index - good_length + shared, index) * mask
    visible = (index[:, :, None] >= index[:, None, :]) & ~(bad_part[:, :, None] & good_part[:, None, :])
    visible = visible & mask[:, None, :].bool()
    visible[:, :, 0] = True  # a padding query sees the first token: no row of its attention is empty
    return ids, mask, positions, visible


def prefix_shared_log_probs(scorer: RowScorer, pairs: Sequence[Pair], copies: int = 1) -> torch.Tensor:
    """log p [copy, sentence] of every pair's two sentences (good, bad, good, ...), their shared token prefix
    (:func:`shared_length`, 1 token or more) computed once and seen by both continuations.

    One forward pass of ``scorer`` over one row per pair (:func:`pair_rows`) in ``copies`` stacked copies (each
    row told its good sentence's place in the [copy * sentence] layout): the prefix, then both continuations, each
    token at its position in its own sentence and seeing exactly the tokens it sees there. The prefix's own tokens
    are scored once and their log p added to both sentences; each continuation is scored from the prefix's last
    state on. Every real token sits where it sits whatever else is in the batch, so a score does not depend on
    the batch it is in.
    """
    ids, mask, positions, visible = pair_rows(pairs)
    shared = torch.tensor([shared_length(good, bad) for good, bad in pairs])
    rows = torch.arange(copies * len(pairs))
    states = scorer.states(ids.repeat(copies, 1), visible.repeat(copies, 1, 1), 2 * rows, positions.repeat(copies, 1))
    device = states.device
    longest = int(shared.max())
    prefix_mask = (torch.arange(longest)[None] < shared[:, None]).long()  # [pair, token]: the prefixes
    prefix_scores = scorer.log_probs(states[:, :longest], ids[:, :longest].repeat(copies, 1).to(device),
                                     prefix_mask.repeat(copies, 1).to(device))  # [copy * pair]
    # Each continuation read from its prefix's last state on (that state predicts its first token), as a whole
    # sentence is read: token t + 1 from state t.
    places, rest = [], []
    for (good, bad), length in zip(pairs, shared.tolist()):
        places += [list(range(length - 1, len(good))), [length - 1, *range(len(good), len(good) + len(bad) - length)]]
        rest += [good[length - 1 :], bad[length - 1 :]]
    places, _ = padded_rows(places)  # [sentence, token]: where each continuation's states are in its pair's row
    rest_ids, rest_mask = padded_rows(rest)
    row_of = rows.repeat_interleave(2)[:, None]  # [copy * sentence, 1]: its pair's row
    rest_states = states[row_of.to(device), places.repeat(copies, 1).to(device)]  # [copy * sentence, token, ...]
    scores = scorer.log_probs(rest_states, rest_ids.repeat(copies, 1).to(device),
                              rest_mask.repeat(copies, 1).to(device))
    return (scores + prefix_scores.repeat_interleave(2)).view(copies, 2 * len(pairs))


def prefix_sharing_fits(model, pairs: Sequence[Pair]) -> bool:
    """Whether :func:`prefix_shared_log_probs` may score ``pairs`` together: every pair shares a token or more,
    and every pair's row fits the model's sliding window (the row's keys are all within it, as the whole
    sentences' are then)."""
    shared = [shared_length(good, bad) for good, bad in pairs]
    if not shared or min(shared) < 1:
        return False
    window = getattr(model.config.get_text_config(decoder=True), "sliding_window", None)
    return window is None or max(len(good) + len(bad) - length for (good, bad), length in zip(pairs, shared)) < window


@torch.inference_mode()
def prefix_sharing_agrees(model, split: bool, device) -> bool:
    """Whether sharing a pair's prefix gives ``model``'s whole-sentence log p (within :data:`AGREEMENT` nats) on
    two tiny pairs; a model that reads its mask or positions otherwise is scored whole."""
    pairs = [([1, 5, 6, 7, 8], [1, 5, 6, 9]), ([1, 5, 7], [1, 6, 7, 8])]
    scorer = RowScorer(model, split, device)
    try:
        shared = prefix_shared_log_probs(scorer, pairs)
        whole = scorer.whole([sentence for pair in pairs for sentence in pair])
    except Exception:  # a model that takes no attention mask of its own, or no position ids
        return False
    return bool(torch.allclose(shared[0].cpu(), whole[0].cpu(), rtol=0, atol=AGREEMENT))


@dataclass(frozen=True)
class PairScoring:
    """How one model's pairs are scored: through its LM head at the scored positions (``split``) or from its whole
    logits, each pair's prefix shared (``share``) where a batch allows it, ``cells`` logits at a time."""

    split: bool
    share: bool
    cells: int = LOGIT_CELLS

    @classmethod
    def of(cls, model, device, *, split: bool | None = None, share: bool = True,
           cells: int = LOGIT_CELLS) -> "PairScoring":
        """The scoring of ``model``: ``split`` where its logits are its LM head's (probing.model.token_scores.
        exact_head) unless given; prefixes shared where ``share`` and the model agrees (:func:`prefix_sharing_agrees`:
        a few tiny forward passes, once per model)."""
        split = exact_head(model) if split is None else split
        return cls(split, share and prefix_sharing_agrees(model, split, device), cells)


def batch_log_probs(model, pairs: Sequence[Pair], scoring: PairScoring, device, *, copies: int = 1,
                    around=None) -> torch.Tensor:
    """log p [copy, sentence] (on the CPU) of the sentences of ``pairs`` (good, bad, good, ...), in ``copies``
    stacked copies of one forward pass (``around``: see probing.model.token_scores.RowScorer): each pair's prefix
    shared (:func:`prefix_shared_log_probs`) where ``scoring`` shares and the batch fits, else every sentence whole.
    """
    scorer = RowScorer(model, scoring.split, device, cells=scoring.cells, around=around)
    if scoring.share and prefix_sharing_fits(model, pairs):
        return prefix_shared_log_probs(scorer, pairs, copies).cpu()
    return scorer.whole([sentence for pair in pairs for sentence in pair], copies).cpu()
