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
>>> stats = CosineStats(1, 2)
>>> a = torch.tensor([[0.5, 0.5], [1.0, 0.0]]).expand(1, 1, 2, 2, 2)
>>> b = a.clone(); b[0, 0, 1] = torch.tensor([[0.5, 0.5], [0.0, 1.0]])
>>> stats.update(a, b, torch.ones(1, 2, dtype=torch.long))
>>> stats.result().round(4).tolist()
[[1.0, 0.5]]
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

from ..errors import ProbingError
from ..extraction import LoadedModel, attention
from ..inputs import InputStats, TextUnit, token_batches


class CosineStats:
    """Running sum of row cosines and the number of rows, per head: ``update``, ``merge``, ``result``."""

    def __init__(self, num_layers: int, num_heads: int):
        self.shape = (num_layers, num_heads)
        self.sums = torch.zeros(self.shape, dtype=torch.float64)
        self.rows = 0
        self.units = 0

    def update(self, first: torch.Tensor, second: torch.Tensor, attention_mask: torch.Tensor) -> None:
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
        self.sums += (cosine * real[:, None, None, :]).sum(dim=(0, 3)).double().cpu()
        self.rows += int(real.sum())
        self.units += int(real.any(dim=1).sum())

    def merge(self, other: "CosineStats") -> "CosineStats":
        if other.shape != self.shape:
            raise ProbingError(f"cannot merge similarities of {other.shape} heads into {self.shape}")
        self.sums += other.sums
        self.rows += other.rows
        self.units += other.units
        return self

    def result(self) -> np.ndarray:
        """Mean cosine per head, float [layer, head]."""
        if self.rows == 0:
            raise ProbingError("no token to compare")
        return (self.sums / self.rows).numpy()


def check_compatible(first: LoadedModel, second: LoadedModel) -> None:
    """Same number of layers and heads, or a clear error."""
    if (first.num_layers, first.num_heads) != (second.num_layers, second.num_heads):
        raise ProbingError(
            f"the models differ in shape: {first.name_or_path} has {first.num_layers} layers x {first.num_heads} heads, "
            f"{second.name_or_path} has {second.num_layers} x {second.num_heads}; only checkpoints of one architecture "
            "can be compared head by head",
            source="MODEL_B",
        )


def compare_attention(
    first: LoadedModel,
    second: LoadedModel,
    units: Iterable[TextUnit],
    *,
    batch_size: int = 16,
    max_length: int = 512,
    stats: InputStats | None = None,
) -> CosineStats:
    """Stream the units through both models; the batches come from A's tokenizer and are checked against B's."""
    check_compatible(first, second)
    cosines = CosineStats(first.num_layers, first.num_heads)
    for batch in token_batches(first.tokenizer, units, batch_size=batch_size, max_length=max_length, stats=stats):
        _check_same_tokens(batch, second)
        cosines.update(
            attention(first, batch.input_ids, batch.attention_mask),  # [batch, layer, head, query, key]
            attention(second, batch.input_ids, batch.attention_mask),
            batch.attention_mask,
        )
    return cosines


def _check_same_tokens(batch, second: LoadedModel) -> None:
    """B's tokenizer must give the very same ids for every unit of A's batch."""
    other = next(token_batches(second.tokenizer, batch.units, batch_size=len(batch.units), max_length=1 << 30))
    by_index = {unit.index: row for row, unit in enumerate(other.units)}
    for row, unit in enumerate(batch.units):
        mine = batch.input_ids[row, : int(batch.lengths[row])].tolist()
        theirs = other.input_ids[by_index[unit.index], : int(other.lengths[by_index[unit.index]])].tolist()
        if mine != theirs:
            at = next((i for i, (x, y) in enumerate(zip(mine, theirs)) if x != y), min(len(mine), len(theirs)))
            text = unit.first if isinstance(unit.first, str) else " ".join(unit.first)
            raise ProbingError(
                f"the tokenizers differ: unit {unit.index + 1} ({text[:40]!r}) is {len(mine)} tokens for MODEL_A and "
                f"{len(theirs)} for MODEL_B, first different at token {at + 1} "
                f"({_token(batch.tokens[row], at)} vs {_token(other.tokens[by_index[unit.index]], at)}); attention maps "
                "can only be compared on the same tokens",
                source="MODEL_B",
            )


def _token(tokens: list[str], index: int) -> str:
    return repr(tokens[index]) if index < len(tokens) else "end"


def layer_means(similarity: np.ndarray) -> list[float]:
    """Mean over the heads of every layer."""
    return [float(value) for value in similarity.mean(axis=1)]


def plot_similarity(similarity: np.ndarray, title: str, path) -> None:
    """Layer x head cosine heatmap (counted from 1) beside the per-layer mean, on a shared scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..atomic import save_figure_atomic

    layers, heads = similarity.shape
    figure, (grid, line) = plt.subplots(
        1, 2, figsize=(3.8 + 0.3 * heads, 1.6 + 0.3 * layers), gridspec_kw={"width_ratios": [heads, 6]}
    )
    # the colour scale starts at the lowest tenth reached (at most 0.9): small changes stay visible
    low = max(0.0, min(0.9, float(np.floor(10 * similarity.min()) / 10)))
    image = grid.imshow(similarity, cmap="viridis", vmin=low, vmax=1)
    grid.set_xticks(range(heads), [str(h + 1) for h in range(heads)], fontsize=7)
    grid.set_yticks(range(layers), [str(layer + 1) for layer in range(layers)], fontsize=7)
    grid.set_xlabel("head")
    grid.set_ylabel("layer")
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
    save_figure_atomic(figure, path)
