"""Coreference heads (Clark et al. 2019, section 4.3) as an accumulator of the engine.

Each unit is a window of a document (probing.data.windows). For every
scored mention (one with an antecedent in its window, probing.analyses.coref.antecedents)
and every layer, head and direction, the prediction is the probe's: the word
the mention's head word attends to most (``dep_to_head``, its row of the word
attention, diagonal excluded) or the word that attends to it most
(``head_to_dep``, its column); it is right when it is the head word of an
antecedent. The three baselines are counted on the same mentions. Counts are
kept for all scored mentions and by type (pronoun, proper, nominal), as
integers, with Poisson bootstrap replicates whose unit is the window (its
index seeds its weights), so shards, processes and resumed runs add up
exactly.

On a causal stack a word attends only to earlier words, so ``dep_to_head``
(the mention looks back) is the direction that can find an antecedent;
``head_to_dep`` cannot, and scores 0 there.

>>> from probing.data.windows import Window, WindowMention
>>> acc = CorefAccumulator(num_layers=1, num_heads=1, window=16)
>>> mentions = (WindowMention("1", 0, "proper", "Kim", "Kim", "_"), WindowMention("1", 2, "pronoun", "she", "she", "_"))
>>> acc.add([Window(0, ("Kim", "slept", "she", "said"), mentions=mentions)],
...         torch.tensor([0, 0, 0, 0]).view(1, 1, 1, 1, 4).expand(1, 2, 1, 1, 4))   # every word predicts word 0
>>> acc.result()["coref"]["scored"], acc.result()["coref"]["heads"]["pronoun"]["dep_to_head"]
({'all': 1, 'pronoun': 1, 'proper': 0, 'nominal': 0}, [[1]])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from probing.analyses.coref.antecedents import BASELINES, SIEVES, scored_mentions
from probing.analyses.coref.report import TYPE_AXIS, best_by_type, in_sample_block
from probing.engine.accumulator import Accumulator, BatchView
from probing.naming import DIRECTIONS
from probing.stats.bootstrap import poisson_weights, replicate
from probing.stats.intervals import bootstrap_block

TYPE_INDEX = {name: index for index, name in enumerate(TYPE_AXIS)}


class CorefAccumulator(Accumulator):
    """Integer antecedent counts of every head and direction, and of the baselines, by mention type.

    State (T types with ``all`` first, K baselines, S sieves, B replicates):
    ``windows``, ``words`` []; ``mentions`` [T] (head word in a scored window);
    ``scored`` [T]; ``heads`` [T, direction, layer, head]; ``baselines`` [T, K];
    ``sieves`` [T, S] (which sieve decided the rule-based choice); with a
    bootstrap ``boot_scored`` [B, T], ``boot_heads`` [B, T, direction, layer,
    head], ``boot_baselines`` [B, T, K].
    """

    analysis = "coref"
    reads = "predictions"

    def __init__(self, num_layers: int, num_heads: int, *, window: int, bootstrap: int = 0, seed: int = 0):
        super().__init__()
        self.num_layers, self.num_heads, self.window = num_layers, num_heads, window
        self.replicates, self.seed = bootstrap, seed
        types, kinds = len(TYPE_AXIS), len(BASELINES)
        long = lambda *shape: torch.zeros(shape, dtype=torch.long)  # noqa: E731
        self.state_tensors = {
            "windows": long(),
            "words": long(),
            "mentions": long(types),
            "scored": long(types),
            "heads": long(types, len(DIRECTIONS), num_layers, num_heads),
            "baselines": long(types, kinds),
            "sieves": long(types, len(SIEVES)),
        }
        if bootstrap:
            self.state_tensors.update({
                "boot_scored": long(bootstrap, types),
                "boot_heads": long(bootstrap, types, len(DIRECTIONS), num_layers, num_heads),
                "boot_baselines": long(bootstrap, types, kinds),
            })

    def identity(self) -> dict:
        return {"analysis": self.analysis, "shape": [self.num_layers, self.num_heads], "window": self.window,
                "bootstrap": [self.replicates, self.seed] if self.replicates else None}

    @classmethod
    def for_result(cls, result: dict) -> "CorefAccumulator":
        coref, model = result["coref"], result["model"]
        boot = coref.get("bootstrap")
        return cls(model["num_layers"], model["num_heads"], window=coref["window"],
                   bootstrap=boot["replicates"] if boot else 0, seed=boot["seed"] if boot else 0)

    def update(self, view: BatchView) -> None:
        self.add(view.batch.units, view.predictions, num_words=view.batch.num_words.tolist())

    def add(self, windows: Sequence, predictions: torch.Tensor, num_words: Sequence[int] | None = None) -> None:
        """Count one batch: its windows and the predictions long [batch, direction, layer, head, word]."""
        state = self.state_tensors
        state["windows"] += len(windows)
        state["words"] += sum(num_words) if num_words is not None else sum(len(w.words) for w in windows)
        rows, positions, types, targets, baseline_rows, sieves = [], [], [], [], [], []
        for row, window in enumerate(windows):
            for mention in window.mentions:
                state["mentions"][0] += 1
                state["mentions"][TYPE_INDEX[mention.type]] += 1
            for scored in scored_mentions(window.mentions):
                rows.append(row)
                positions.append(scored.head)
                types.append(TYPE_INDEX[scored.type])
                targets.append(sorted(scored.antecedents))
                baseline_rows.append(scored.correct)
                sieves.append(scored.sieve)
        if not rows:
            return
        count, words = len(rows), predictions.shape[-1]
        device = predictions.device
        # [mention, direction, layer, head]: advanced indices on axes 0 and 4 move to the front
        predicted = predictions[torch.tensor(rows, device=device), :, :, :, torch.tensor(positions, device=device)]
        right = torch.zeros((count, words), dtype=torch.bool)  # [mention, word]: an antecedent's head word
        for m, heads in enumerate(targets):
            right[m, heads] = True
        right = right.to(device)
        correct = right.gather(1, predicted.reshape(count, -1)).view(predicted.shape).long().cpu()
        baselines = torch.tensor(baseline_rows, dtype=torch.long)  # [mention, baseline]
        # [mention, type]: every mention counts under "all" and under its own type
        one_hot = torch.zeros((count, len(TYPE_AXIS)), dtype=torch.long)
        one_hot[:, 0] = 1
        one_hot[torch.arange(count), torch.tensor(types)] = 1
        sieve_hot = torch.nn.functional.one_hot(torch.tensor(sieves), len(SIEVES))  # [mention, sieve]
        state["scored"] += one_hot.sum(0)
        state["heads"] += torch.einsum("mt,mdlh->tdlh", one_hot, correct)
        state["baselines"] += one_hot.T @ baselines
        state["sieves"] += one_hot.T @ sieve_hot
        if self.replicates:
            self._add_replicates(windows, torch.tensor(rows), one_hot, correct, baselines)

    def _add_replicates(self, windows, rows, one_hot, correct, baselines) -> None:
        """Replicate counts: each window's counts weighted by its Poisson weights (seeded by its index)."""
        weights = poisson_weights([window.index for window in windows], replicates=self.replicates, seed=self.seed)
        per_window = lambda values: torch.zeros(  # noqa: E731  [window, type, ...] summed over its mentions
            (len(windows),) + values.shape[1:], dtype=torch.float64).index_add_(0, rows, values.double())
        state = self.state_tensors
        state["boot_scored"] += replicate(weights, per_window(one_hot))
        state["boot_heads"] += replicate(weights, per_window(torch.einsum("mt,mdlh->mtdlh", one_hot, correct)))
        state["boot_baselines"] += replicate(weights, per_window(torch.einsum("mt,mk->mtk", one_hot, baselines)))

    def arrays(self) -> dict[str, np.ndarray]:
        """The count arrays of probing.analyses.coref.report."""
        return {name: tensor.numpy() for name, tensor in self.state_tensors.items()}

    def result(self) -> dict:
        """The ``coref`` block (every number derived from the state) and the encoded state."""
        arrays = self.arrays()
        state = self.state_tensors

        def by_type(values) -> dict:
            return {name: int(values[t]) for t, name in enumerate(TYPE_AXIS)}

        coref = {
            "window": self.window,
            "types": list(TYPE_AXIS),
            "baseline_names": list(BASELINES),
            "sieve_names": list(SIEVES),
            "windows": int(state["windows"]),
            "words": int(state["words"]),
            "mentions": by_type(arrays["mentions"]),
            "scored": by_type(arrays["scored"]),
            "heads": {name: {direction: arrays["heads"][t, d].tolist() for d, direction in enumerate(DIRECTIONS)}
                      for t, name in enumerate(TYPE_AXIS)},
            "baselines": {name: {baseline: int(arrays["baselines"][t, k]) for k, baseline in enumerate(BASELINES)}
                          for t, name in enumerate(TYPE_AXIS)},
            "sieves": {name: {sieve: int(arrays["sieves"][t, s]) for s, sieve in enumerate(SIEVES)}
                       for t, name in enumerate(TYPE_AXIS)},
            "best": best_by_type(arrays),
            "in_sample": in_sample_block(arrays),
            "bootstrap": bootstrap_block(self.replicates, self.seed, unit="window") if self.replicates else None,
        }
        return {"coref": coref, "state": self.encoded_state()}

    @staticmethod
    def finish_merge(merged: dict, parts: list[dict]) -> dict:
        """Held-out numbers recomputed from the merged counts, with the DEV choice every part recorded."""
        from probing.analyses.coref.report import reattach_heldout

        return reattach_heldout(merged, parts)

