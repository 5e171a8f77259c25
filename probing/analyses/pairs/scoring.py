"""Sentence log-probabilities of minimal pairs over a pass: what ``probing pairs`` adds up (docs/minimal-pairs.md).

A pair's sentences are encoded after their context token (probing.model.token_scores.encode) and scored a batch at
a time by the one scorer of a batch of pairs (probing.model.pair_rows.batch_log_probs: each pair one row, its
shared token prefix computed once), on the one pass over pairs (probing.engine.pair_passes), batched by the length
of their rows. :class:`PairScores` keeps each pair's two log-probabilities; :func:`pair_log_probs` runs that pass
on a bare transformers model, and :func:`sentence_log_probs`, every sentence whole (no prefix shared), is the
reference the tests hold it to. The accuracies they give are computed in probing.analyses.pairs.accuracy.

>>> scores = PairScores(2)
>>> scores.identity()["pairs"], scores.state()["log_p_good"].tolist()
(2, [0.0, 0.0])
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import torch

from probing.engine.accumulator import Accumulator, BatchView
from probing.model.pair_rows import PairScoring, batch_log_probs
from probing.model.token_scores import LOGIT_CELLS, encode


class PairScores(Accumulator):
    """Each pair's log p(good) and log p(bad), float64 [pair] (float32 sums, kept exactly), in the pass's pair order.

    ``share``: share a pair's prefix where the model agrees (probing.model.pair_rows.PairScoring); ``cells``: logits
    computed at once. The model's scoring is decided on its first batch, once per model.
    """

    analysis = "pairs"
    needs_attention = False

    def __init__(self, count: int, *, share: bool = True, cells: int = LOGIT_CELLS):
        super().__init__()
        self.share, self.cells = share, cells
        self.state_tensors = {name: torch.zeros(count, dtype=torch.float64) for name in ("log_p_good", "log_p_bad")}
        self._scoring: tuple | None = None  # (the model, its PairScoring)

    def identity(self) -> dict:
        return {"analysis": self.analysis, "pairs": len(self.state_tensors["log_p_good"]), "share": self.share,
                "cells": self.cells}

    def update(self, view: BatchView) -> None:
        model, device = view.loaded.model, view.loaded.device
        if self._scoring is None or self._scoring[0] is not model:
            self._scoring = (model, PairScoring.of(model, device, share=self.share, cells=self.cells))
        values = batch_log_probs(model, view.batch.pairs, self._scoring[1], device)[0].double()  # [sentence]
        rows = torch.tensor(view.batch.rows)
        self.state_tensors["log_p_good"][rows] = values[0::2]
        self.state_tensors["log_p_bad"][rows] = values[1::2]

    def scores(self) -> tuple[list[float], list[float]]:
        """log p(good) and log p(bad) of every pair, in order."""
        return self.state_tensors["log_p_good"].tolist(), self.state_tensors["log_p_bad"].tolist()


def pair_log_probs(model, tokenizer, sentences: Sequence[str], *, batch_size: int = 32, device: str = "cpu",
                   context: str = "bos", share: bool = True) -> list[float]:
    """log p(sentence) of every sentence of consecutive pairs (good, bad, good, bad, ...) of a bare transformers
    ``model``, each after ``context`` (probing.model.token_scores.CONTEXTS): the pass ``probing pairs`` runs, with
    ``batch_size`` sentences (half as many pairs, a row each) per forward pass; ``share`` False scores every
    sentence whole."""
    if len(sentences) % 2:
        raise ValueError(f"pairs of sentences come in twos, not {len(sentences)}")
    from probing.engine.pair_passes import run_pair_pass

    encoded = encode(tokenizer, sentences, context)
    scores = PairScores(len(encoded) // 2, share=share)
    run_pair_pass(SimpleNamespace(model=model, device=device), list(zip(encoded[0::2], encoded[1::2])), [scores],
                  pairs_per_batch=max(1, batch_size // 2), by_length=True)
    good, bad = scores.scores()
    return [value for pair in zip(good, bad) for value in pair]


def sentence_log_probs(model, tokenizer, sentences: Sequence[str], *, batch_size: int = 32, device: str = "cpu",
                       context: str = "bos") -> list[float]:
    """log p(sentence) of every sentence of consecutive pairs, every sentence whole (no prefix shared): the
    reference that :func:`pair_log_probs` equals up to float rounding."""
    return pair_log_probs(model, tokenizer, sentences, batch_size=batch_size, device=device, context=context,
                          share=False)
