"""Sentence views: what every head does in a few sentences, word by word (Clark et al. 2019, Figure 5).

The accumulator keeps, for the first ``sentences`` units of the input that
have 2 to ``max_words`` words (by unit index, whatever the batching), per
layer, head and word: the word it attends to most and how much (the probe's
``dep_to_head`` prediction), the word that attends to it most and how much
(``head_to_dep``), and its shares of attention to special tokens and to
punctuation (as the no-op test measures them). Pages and figures draw them;
the words and trees come from the treebank again, by unit index.

Merging keeps the units with the smallest indices, so shards, processes and
resumed runs keep the same sentences as one run.

>>> views = SentenceViews(1, 2, sentences=2, max_words=5)
>>> views.keep([(7, 3, torch.ones(1, 2, 6, 3)), (2, 4, torch.zeros(1, 2, 6, 4)), (9, 2, torch.ones(1, 2, 6, 2))])
>>> views.kept()
[2, 7]
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from probing.engine.accumulator import Accumulator, BatchView
from probing.engine.token_roles import pooled_rows, punctuation_words
from probing.errors import ProbingError

VALUES = ("dep_to_head", "dep_to_head_weight", "head_to_dep", "head_to_dep_weight", "special", "punctuation")
"""What is kept per layer, head and word (axis 3 of ``values``): two predicted words (indices from 0), the
attention behind each, and the shares to special tokens and punctuation."""

MAX_WORDS = 30
"""Longer sentences make views too wide to read; they are passed over."""


class SentenceViews(Accumulator):
    """State: ``unit`` long [N] (unit index + 1; 0 marks an empty slot), ``words`` long [N], ``values``
    float32 [N, layer, head, value, word] (see :data:`VALUES`); slots sorted by unit index."""

    analysis = "views"

    def __init__(self, num_layers: int, num_heads: int, *, sentences: int = 8, max_words: int = MAX_WORDS):
        super().__init__()
        if sentences < 1:
            raise ProbingError(f"must be a positive integer, got {sentences}", source="--sentences")
        self.num_layers, self.num_heads, self.sentences, self.max_words = num_layers, num_heads, sentences, max_words
        self.state_tensors = {
            "unit": torch.zeros(sentences, dtype=torch.long),
            "words": torch.zeros(sentences, dtype=torch.long),
            "values": torch.zeros((sentences, num_layers, num_heads, len(VALUES), max_words)),
        }

    def identity(self) -> dict:
        return {"analysis": self.analysis, "shape": [self.num_layers, self.num_heads], "sentences": self.sentences,
                "max_words": self.max_words}

    def kept(self) -> list[int]:
        """Unit indices of the kept sentences, in order."""
        return [int(unit) - 1 for unit in self.state_tensors["unit"] if unit > 0]

    def _worst(self) -> int | None:
        """The largest kept unit index when every slot is full (a new unit must be smaller), else None."""
        kept = self.kept()
        return kept[-1] if len(kept) == self.sentences else None

    def update(self, view: BatchView) -> None:
        batch, worst = view.batch, self._worst()
        rows = [row for row, unit in enumerate(batch.units)
                if 2 <= len(unit.words) <= self.max_words and (worst is None or unit.index < worst)]
        if not rows:
            return
        words, specials = pooled_rows(view, rows)  # [n, layer, head, word, word], [n, layer, head, word, special]
        width = words.shape[-1]  # the widest kept sentence (the batch may hold longer ones)
        predictions = view.predictions[torch.tensor(rows), ..., :width].to(words.device)  # [n, direction, l, h, word]
        to_head, from_dependent = predictions[:, 0], predictions[:, 1]
        # attention from each word to its dep_to_head prediction, and from its head_to_dep prediction to it
        to_head_weight = words.gather(-1, to_head.unsqueeze(-1)).squeeze(-1)
        from_dependent_weight = words.gather(-2, from_dependent.unsqueeze(-2)).squeeze(-2)
        punctuation = punctuation_words([batch.units[row].sentence for row in rows], width).to(words.device)
        to_punctuation = torch.einsum("blhqk,bk->blhq", words, punctuation)
        values = torch.stack([to_head.float(), to_head_weight, from_dependent.float(), from_dependent_weight,
                              specials.sum(dim=-1), to_punctuation], dim=3).cpu()  # [n, layer, head, value, word]
        self.keep((batch.units[row].index, len(batch.units[row].words), values[n, ..., : len(batch.units[row].words)])
                  for n, row in enumerate(rows))

    def keep(self, entries: Iterable[tuple[int, int, torch.Tensor]]) -> None:
        """Add (unit index, words, values [layer, head, value, word]) entries; keep the smallest indices."""
        state = self.state_tensors
        pool = {}
        for slot, index in enumerate(self.kept()):
            words = int(state["words"][slot])
            pool[index] = (words, state["values"][slot, ..., :words].clone())
        for index, words, values in entries:
            pool[index] = (words, values[..., :words])
        state["unit"].zero_()
        state["words"].zero_()
        state["values"].zero_()
        for slot, index in enumerate(sorted(pool)[: self.sentences]):
            words, values = pool[index]
            state["unit"][slot], state["words"][slot] = index + 1, words
            state["values"][slot, ..., :words] = values

    def merge(self, other: "SentenceViews") -> "SentenceViews":
        if type(other) is not type(self) or other.identity() != self.identity():
            raise ProbingError("cannot merge sentence views made with other options")
        state = other.state_tensors
        self.keep((index, int(state["words"][slot]), state["values"][slot])
                  for slot, index in enumerate(other.kept()))
        return self

    def payload(self, decimals: int = 3) -> dict:
        """Plain lists for a page: ``units`` and, per head ``"layer-head"`` from 0, per kept sentence, one list per
        :data:`VALUES` entry (indices as integers, shares rounded)."""
        state = self.state_tensors
        heads = {}
        for layer in range(self.num_layers):
            for head in range(self.num_heads):
                sentences = []
                for slot in range(len(self.kept())):
                    words = int(state["words"][slot])
                    block = state["values"][slot, layer, head, :, :words]
                    sentences.append([
                        [int(value) for value in row.tolist()] if name in ("dep_to_head", "head_to_dep")
                        else [round(float(value), decimals) for value in row.tolist()]
                        for name, row in zip(VALUES, block)
                    ])
                heads[f"{layer}-{head}"] = sentences
        return {"units": self.kept(), "values": list(VALUES), "heads": heads}
