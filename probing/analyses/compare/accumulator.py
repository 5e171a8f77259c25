"""How far two checkpoints' attention differs, head by head (Kovaleva et al. 2019, section 4.4).

The paper measures how much fine-tuning moves each layer by the cosine
similarity of a head's attention map before and after. Here every query
row's attention distribution of checkpoint A is compared with the same
row of checkpoint B, on the same tokens, and the cosines are averaged over
all real query rows of all units. Padding is excluded both as rows and as
keys; the reference code flattened whole padded maps, so that the zeros of
padding inflated the similarity of short sentences.

Both checkpoints must split every unit into the same token ids and have the
same number of layers and heads; anything else is a clear error.

>>> import torch
>>> stats = CompareAccumulator(1, 2)
>>> a = torch.tensor([[0.5, 0.5], [1.0, 0.0]]).expand(1, 1, 2, 2, 2)
>>> b = a.clone(); b[0, 0, 1] = torch.tensor([[0.5, 0.5], [0.0, 1.0]])
>>> stats.add(a, b, torch.ones(1, 2, dtype=torch.long))
>>> stats.similarity().round(4).tolist()
[[1.0, 0.5]]
"""

from __future__ import annotations

import numpy as np
import torch

from probing.engine.accumulator import Accumulator, BatchView
from probing.engine.batching import encode_units
from probing.errors import ProbingError
from probing.model.loading import LoadedModel


class CompareAccumulator(Accumulator):
    """Running sum of row cosines and the number of rows, per head (``update`` / ``merge`` / ``result``).

    The pass runs model A; each batch is run through ``second`` (model B) on
    the very same token ids, after checking that B's tokenizer makes them.
    State: ``cosines`` float64 [layer, head], ``rows``, ``units``.
    """

    analysis = "compare"

    def __init__(self, num_layers: int, num_heads: int, second: LoadedModel | None = None, reading=None):
        super().__init__()
        self.shape = (num_layers, num_heads)
        self.second, self.reading = second, reading
        self.state_tensors = {
            "cosines": torch.zeros(self.shape, dtype=torch.float64),
            "rows": torch.zeros((), dtype=torch.float64),
            "units": torch.zeros((), dtype=torch.float64),
        }

    def identity(self) -> dict:
        second = None if self.second is None else self.second.fingerprint
        return {"analysis": self.analysis, "shape": list(self.shape), "second": second}

    def fresh(self) -> "CompareAccumulator":
        return CompareAccumulator(*self.shape, self.second, self.reading)

    @classmethod
    def for_result(cls, result: dict) -> "CompareAccumulator":
        similarity = result["similarity"]
        return cls(len(similarity), len(similarity[0]))

    def update(self, view: BatchView) -> None:
        check_same_tokens(view, self.second)
        other = self.reading.read(self.second, view.batch)  # [batch, layer, head, query, key]
        self.add(view.attention, other, view.batch.attention_mask)

    def add(self, first: torch.Tensor, second: torch.Tensor, attention_mask: torch.Tensor) -> None:
        """first, second: [batch, layer, head, query, key]; attention_mask: [batch, tok]."""
        if first.shape != second.shape or tuple(first.shape[1:3]) != self.shape:
            raise ProbingError(f"attention shapes differ: {tuple(first.shape)} vs {tuple(second.shape)}")
        real = attention_mask.to(first.device).bool()  # [batch, tok]
        keys = real[:, None, None, None, :]  # padded keys do not count
        first = first.float() * keys
        second = second.float().to(first.device) * keys
        dot = (first * second).sum(dim=-1)  # [batch, layer, head, query]
        norms = first.norm(dim=-1) * second.norm(dim=-1)
        cosine = dot / norms.clamp(min=1e-12)
        self.state_tensors["cosines"] += (cosine * real[:, None, None, :]).sum(dim=(0, 3)).double().cpu()
        self.state_tensors["rows"] += int(real.sum())
        self.state_tensors["units"] += int(real.any(dim=1).sum())

    def similarity(self) -> np.ndarray:
        """Mean cosine per head, float [layer, head]."""
        rows = float(self.state_tensors["rows"])
        if rows == 0:
            raise ProbingError("no token to compare")
        return (self.state_tensors["cosines"] / rows).numpy()

    def result(self) -> dict:
        similarity = self.similarity()
        return {
            "similarity": [[round(float(v), 6) for v in row] for row in similarity],
            "layer_means": [round(v, 6) for v in layer_means(similarity)],
            "rows": int(self.state_tensors["rows"]),
            "state": self.encoded_state(),
        }


def check_compatible(first: LoadedModel, second: LoadedModel) -> None:
    """Same number of layers and heads, or a clear error."""
    if (first.num_layers, first.num_heads) != (second.num_layers, second.num_heads):
        raise ProbingError(
            f"the models differ in shape: {first.name} has {first.num_layers} layers x {first.num_heads} heads, "
            f"{second.name} has {second.num_layers} x {second.num_heads}; only checkpoints of one architecture "
            "can be compared head by head",
            source="--second-model",
        )


def check_same_tokens(view: BatchView, second: LoadedModel) -> None:
    """Model B's tokenizer must give the very same ids for every unit of the batch."""
    batch = view.batch
    theirs_all = encode_units(second.tokenizer, batch.units, prepend=second.prepend_token_id)
    for row, (unit, theirs) in enumerate(zip(batch.units, theirs_all)):
        mine = batch.input_ids[row, : int(batch.lengths[row])].tolist()
        if mine != list(theirs.input_ids):
            at = next((i for i, (x, y) in enumerate(zip(mine, theirs.input_ids)) if x != y), min(len(mine), len(theirs)))
            text = unit.first if isinstance(unit.first, str) else " ".join(unit.first)
            raise ProbingError(
                f"the tokenizers differ: unit {unit.index + 1} ({text[:40]!r}) is {len(mine)} tokens for --model and "
                f"{len(theirs)} for --second-model, first different at token {at + 1}; attention maps can only be "
                "compared on the same tokens",
                source="--second-model",
            )


def layer_means(similarity: np.ndarray) -> list[float]:
    """Mean over the heads of every layer."""
    return [float(value) for value in similarity.mean(axis=1)]


def plot_similarity(similarity: np.ndarray, title: str, path):
    """Layer x head cosine heatmap (counted from 1) beside the per-layer mean, on a shared scale."""
    from probing.atomic import save_figure_atomic
    from probing.report.drawing import layer_head_heatmap, new_figure


    layers, heads = similarity.shape
    figure = new_figure(3.8 + 0.3 * heads, 1.6 + 0.3 * layers)
    (grid, line) = figure.subplots(1, 2, gridspec_kw={"width_ratios": [heads, 6]})
    # the colour scale starts at the lowest tenth reached (at most 0.9): small changes stay visible
    low = max(0.0, min(0.9, float(np.floor(10 * similarity.min()) / 10)))
    image = layer_head_heatmap(grid, similarity, vmin=low, vmax=1.0)
    grid.set_title("mean cosine per head", fontsize=9)
    figure.colorbar(image, ax=grid, fraction=0.046, pad=0.04)
    means = layer_means(similarity)
    line.plot(means, range(layers), marker="o")
    line.set_ylim(layers - 0.5, -0.5)
    line.set_yticks(range(layers), [str(layer + 1) for layer in range(layers)], fontsize=7)
    line.set_xlim(low, 1.0 + 0.02 * (1.0 - low))
    line.set_xlabel("mean cosine")
    line.set_title("per layer", fontsize=9)
    line.grid(alpha=0.3)
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    return save_figure_atomic(figure, path)
