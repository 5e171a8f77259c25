"""Attention pattern types of Kovaleva et al. (2019), from interpretable rules.

The paper sorts head maps into five types (its Figure 1): *vertical*
(every row looks at the same few columns, mostly [CLS]/[SEP]), *diagonal*
(each token looks at its neighbours), *vertical+diagonal* (both), *block*
(each segment of a sentence pair looks within itself) and *heterogeneous*
(none of these). Its classifier was a CNN trained on ~400 hand-labelled maps
that were never released; here a head's type follows from four shares that
anyone can read off a map, averaged over the input units:

- ``special``: attention of content rows to special-token columns
  (reported; the rules use ``columns``, which includes them);
- ``columns``: attention of content rows to the ``top_columns`` (2) columns
  that get most of it, special or not: a map of vertical stripes;
- ``diagonal``: of a content row's attention to content keys, the share
  within ``band`` (2) positions of itself, less the share uniform attention
  would put there: a band along the diagonal, whatever the head gives to
  special tokens (without the correction, a short segment attended to
  uniformly would look diagonal);
- ``segment``: of a content row's attention to content keys, the share
  that stays in its own segment (sentence pairs only; NaN otherwise).

"Content" rows and keys are the real tokens that are not special tokens;
padding is never counted. :func:`classify` turns the shares into types with
the two thresholds of :class:`Rules`, which were set on 120 hand-labelled
heads (tests/data/PATTERN_LABELS.md).

>>> import torch
>>> n = 6; special = torch.tensor([[1, 0, 0, 0, 0, 1]], dtype=torch.bool)
>>> vertical = torch.zeros(1, 1, 1, n, n); vertical[..., 0] = 1.0
>>> stats = PatternAccumulator(1, 1)
>>> stats.add(vertical, torch.ones(1, n, dtype=torch.long), special)
>>> classify(stats.means()).tolist()
[['vertical']]
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from probing.analyses.patterns.payload import TYPES
from probing.engine.accumulator import Accumulator, BatchView
from probing.errors import ProbingError
from probing.naming import head_name

FEATURES = ("special", "columns", "diagonal", "segment")
COLORS = {
    "vertical": "#1f77b4",
    "diagonal": "#d62728",
    "vertical+diagonal": "#9467bd",
    "block": "#2ca02c",
    "heterogeneous": "#c7c7c7",
}


@dataclass(frozen=True)
class Rules:
    """How the shares are measured and the thresholds that turn them into a type.

    A head is *vertical* when ``columns`` >= ``vertical`` and *diagonal* when
    ``diagonal`` >= ``diagonal``; both makes *vertical+diagonal*; neither
    makes *block* when ``segment`` >= ``block`` (sentence pairs only), else
    *heterogeneous*.

    The two main thresholds were set on the 120 hand-labelled heads of
    tests/data/PATTERN_LABELS.md by a grid search; set on either model's
    labels alone they come out the same. They agree with 82% of the labels
    (85% of MiniLM's, 79% of MPNet's).
    """

    vertical: float = 0.27
    diagonal: float = 0.13
    block: float = 0.85
    band: int = 2
    top_columns: int = 2


class PatternAccumulator(Accumulator):
    """Running sums of the four shares per head (``update`` / ``merge`` / ``result``), and the maps of
    the first ``keep_maps`` units for drawing.

    Each unit counts once: its shares are means over its content rows, and
    the result averages them over units. ``segment`` averages only over units
    with two segments. State: ``sum.FEATURE`` float64 [layer, head], ``units``,
    ``paired_units``.
    """

    analysis = "patterns"

    def __init__(self, num_layers: int, num_heads: int, rules: "Rules | None" = None, keep_maps: int = 0):
        super().__init__()
        self.shape = (num_layers, num_heads)
        self.rules = rules or Rules()
        self.keep_maps = keep_maps
        self.samples: list[dict] = []
        self.state_tensors = {f"sum.{name}": torch.zeros(self.shape, dtype=torch.float64) for name in FEATURES}
        self.state_tensors["units"] = torch.zeros((), dtype=torch.float64)
        self.state_tensors["paired_units"] = torch.zeros((), dtype=torch.float64)

    def identity(self) -> dict:
        return {"analysis": self.analysis, "shape": list(self.shape), "rules": asdict(self.rules)}

    @classmethod
    def for_result(cls, result: dict) -> "PatternAccumulator":
        return cls(result["model"]["num_layers"], len(result["types"][0]), Rules(**result["rules"]))

    def update(self, view: BatchView) -> None:
        batch = view.batch
        self.add(view.attention, batch.attention_mask, batch.is_special, batch.segment)
        for row, unit in enumerate(batch.units):
            if unit.index < self.keep_maps:
                length = int(batch.lengths[row])
                self.samples.append({
                    "index": unit.index,
                    "maps": view.attention[row, :, :, :length, :length].float().cpu().clone(),
                    "is_special": batch.is_special[row, :length].clone(),
                    "tokens": view.loaded.tokenizer.convert_ids_to_tokens(batch.input_ids[row, :length].tolist()),
                })

    def add(self, attention: torch.Tensor, attention_mask: torch.Tensor, is_special: torch.Tensor,
            segment: torch.Tensor | None = None) -> None:
        """attention: [batch, layer, head, query, key]; attention_mask, is_special, segment: [batch, tok]."""
        if tuple(attention.shape[1:3]) != self.shape:
            raise ProbingError(f"attention of shape {tuple(attention.shape)} does not fit {self.shape} heads")
        shares = unit_shares(attention, attention_mask, is_special, segment, self.rules)
        counted = shares.pop("counted")  # [batch] units with at least one content row
        paired = shares.pop("paired") & counted  # [batch]
        for name, value in shares.items():  # value: [batch, layer, head]
            keep = paired if name == "segment" else counted
            self.state_tensors[f"sum.{name}"] += value[keep].sum(dim=0).double().cpu()
        self.state_tensors["units"] += int(counted.sum())
        self.state_tensors["paired_units"] += int(paired.sum())

    def state(self) -> dict:
        return {**super().state(), "samples": list(self.samples)}

    def load_state(self, state: dict) -> "PatternAccumulator":
        super().load_state(state)
        self.samples = list(state.get("samples", []))
        return self

    def fresh(self) -> "PatternAccumulator":
        return PatternAccumulator(*self.shape, self.rules, self.keep_maps)

    def merge(self, other: "PatternAccumulator") -> "PatternAccumulator":
        super().merge(other)
        self.samples = sorted(self.samples + other.samples, key=lambda sample: sample["index"])[: self.keep_maps]
        return self

    def means(self) -> dict[str, np.ndarray]:
        """Mean share per head, float [layer, head]; ``segment`` is NaN without pairs."""
        units, paired = float(self.state_tensors["units"]), float(self.state_tensors["paired_units"])
        if units == 0:
            raise ProbingError("no input unit had a content token; nothing to classify")
        means = {name: (self.state_tensors[f"sum.{name}"] / units).numpy() for name in FEATURES if name != "segment"}
        means["segment"] = (
            (self.state_tensors["sum.segment"] / paired).numpy() if paired else np.full(self.shape, np.nan)
        )
        return means

    def result(self) -> dict:
        shares = self.means()
        types = classify(shares, self.rules)
        return {
            "rules": asdict(self.rules),
            "types": types.tolist(),
            "shares": {key: [[None if v != v else round(float(v), 4) for v in row] for row in value]
                       for key, value in shares.items()},
            "type_share_per_layer": type_shares(types),
            "units": int(self.state_tensors["units"]),
            "paired_units": int(self.state_tensors["paired_units"]),
            "state": {name: value for name, value in self.encoded_state().items()},
        }

    def encoded_state(self) -> dict:
        from probing.results.schema.arrays import encode_array

        return {name: encode_array(tensor.numpy()) for name, tensor in super().state().items()}


def unit_shares(
    attention: torch.Tensor,
    attention_mask: torch.Tensor,
    is_special: torch.Tensor,
    segment: torch.Tensor | None = None,
    rules: Rules = Rules(),
) -> dict[str, torch.Tensor]:
    """Each unit's four shares, float [batch, layer, head], plus bool [batch] ``counted``/``paired``."""
    attention = attention.float()
    device = attention.device
    real = attention_mask.to(device).bool()  # [batch, tok]
    special = is_special.to(device).bool() & real
    content = real & ~special  # [batch, tok]
    tokens = attention.shape[-1]
    num_rows = content.sum(dim=1).clamp(min=1).float()[:, None, None]  # [batch, 1, 1]

    def row_mean(per_row: torch.Tensor) -> torch.Tensor:  # [batch, layer, head, query] -> [batch, layer, head]
        return (per_row * content[:, None, None, :]).sum(dim=-1) / num_rows

    position = torch.arange(tokens, device=device)
    band = (position[:, None] - position[None, :]).abs() <= rules.band  # [query, key]
    content_keys = content[:, None, None, None, :]  # [batch, 1, 1, 1, key]
    to_content = (attention * content_keys).sum(dim=-1).clamp(min=1e-12)  # [batch, layer, head, query]
    # mean attention each key gets from the content rows: [batch, layer, head, key]
    column_means = (attention * content[:, None, None, :, None]).sum(dim=-2) / num_rows[..., None]
    top = min(rules.top_columns, tokens)
    # the band share uniform attention over the content keys would get: [batch, 1, 1, query]
    chance = (band & content_keys).sum(dim=-1) / content.sum(dim=1).clamp(min=1)[:, None, None, None]
    shares = {
        "special": row_mean((attention * special[:, None, None, None, :]).sum(dim=-1)),
        "columns": (column_means * real[:, None, None, :]).topk(top, dim=-1).values.sum(dim=-1),
        "diagonal": row_mean((attention * (band & content_keys)).sum(dim=-1) / to_content - chance),
    }
    if segment is None:
        segment = torch.zeros_like(attention_mask)
    segment = segment.to(device)
    same = (segment[:, :, None] == segment[:, None, :])[:, None, None] & content_keys  # [batch, 1, 1, q, k]
    shares["segment"] = row_mean((attention * same).sum(dim=-1) / to_content)
    shares["counted"] = content.any(dim=1)
    shares["paired"] = ((segment == 1) & content).any(dim=1) & ((segment == 0) & content).any(dim=1)
    return shares


def classify(shares: dict[str, np.ndarray], rules: Rules = Rules()) -> np.ndarray:
    """The type of every head from its mean shares (see :class:`Rules`): str array [layer, head].

    >>> one = lambda v: np.array([[v]])
    >>> classify({"columns": one(0.1), "diagonal": one(0.8), "segment": one(np.nan)}).tolist()
    [['diagonal']]
    """
    vertical = shares["columns"] >= rules.vertical
    diagonal = shares["diagonal"] >= rules.diagonal
    block = np.nan_to_num(shares["segment"], nan=0.0) >= rules.block
    conditions = [vertical & diagonal, diagonal, vertical, block]  # np.select: first true wins
    choices = ["vertical+diagonal", "diagonal", "vertical", "block"]
    return np.select(conditions, choices, default="heterogeneous").astype(object)


def type_shares(types: np.ndarray) -> dict[str, list[float]]:
    """Share of each type among the heads of every layer: type -> [layer]."""
    heads = types.shape[1]
    return {name: [float(value) for value in (types == name).sum(axis=1) / heads] for name in TYPES}


def agreement(predicted: dict[tuple[str, int, int], str], labels: list[dict]) -> dict:
    """Agreement of predicted types with hand labels (``model``, ``layer``, ``head`` from 1, ``label``).

    >>> agreement({("m", 0, 0): "block"}, [{"model": "m", "layer": "1", "head": "1", "label": "block"}])["accuracy"]
    1.0
    """
    pairs = [(row["label"], predicted[(row["model"], int(row["layer"]) - 1, int(row["head"]) - 1)]) for row in labels]
    if not pairs:
        raise ProbingError("no labelled head to compare with")
    confusion = {gold: {name: 0 for name in TYPES} for gold in TYPES}
    for gold, guess in pairs:
        confusion[gold][guess] += 1
    correct = sum(gold == guess for gold, guess in pairs)
    return {"heads": len(pairs), "correct": correct, "accuracy": correct / len(pairs), "confusion": confusion}


def plot_types(types: np.ndarray, title: str, path):
    """Layer x head grid coloured by type (counted from 1) beside the stacked type shares per layer."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    from probing.atomic import save_figure_atomic
    from probing.report.drawing import layer_head_heatmap, new_figure

    layers, heads = types.shape
    codes = np.vectorize(TYPES.index)(types)  # [layer, head]
    figure = new_figure(3.6 + 0.3 * heads, 1.7 + 0.3 * layers)
    (grid, bars) = figure.subplots(1, 2, gridspec_kw={"width_ratios": [heads, 7]})
    layer_head_heatmap(grid, codes, cmap=ListedColormap([COLORS[name] for name in TYPES]), vmin=-0.5,
                       vmax=len(TYPES) - 0.5)
    grid.set_title("type of each head", fontsize=9)
    shares = type_shares(types)
    left = np.zeros(layers)
    for name in TYPES:
        values = np.array(shares[name])
        bars.barh(range(layers), values, left=left, color=COLORS[name], height=0.8)
        left += values
    bars.set_ylim(layers - 0.5, -0.5)
    bars.set_yticks(range(layers), [str(layer + 1) for layer in range(layers)], fontsize=7)
    bars.set_xlim(0, 1)
    bars.set_xlabel("share of heads")
    bars.set_title("per layer", fontsize=9)
    figure.legend(
        handles=[Patch(color=COLORS[name], label=name) for name in TYPES],
        loc="lower center",
        ncol=3,
        fontsize=7,
        frameon=False,
    )
    figure.suptitle(title, fontsize=9)
    figure.tight_layout(rect=(0, 0.1, 1, 1))
    return save_figure_atomic(figure, path)


def plot_layer_maps(maps: list[np.ndarray], specials: list[np.ndarray], layer: int, title: str, path):
    """One layer's maps: each head's units side by side, two heads to a row (counted from 1).

    maps: per unit float [head, tok, tok] (real tokens only); specials: per unit
    bool [tok]. Special-token positions are ticked on both axes. Each map is
    shaded on its own scale (square root, 0 to its largest weight).
    """
    from matplotlib.colors import PowerNorm

    from probing.atomic import save_figure_atomic
    from probing.report.drawing import new_figure

    heads, units = maps[0].shape[0], len(maps)
    per_row = 2 if units <= 3 else 1
    rows = -(-heads // per_row)
    figure = new_figure(2.1 * per_row * units, 2.2 * rows + 0.3)
    axes = figure.subplots(rows, per_row * units, squeeze=False)
    for head in range(heads):
        for unit, (unit_maps, special) in enumerate(zip(maps, specials)):
            axis = axes[head // per_row, (head % per_row) * units + unit]
            ticks = np.flatnonzero(special)
            # each map on its own scale, square-root shaded: faint structure stays visible
            top = max(float(unit_maps[head].max()), 1e-6)
            axis.imshow(unit_maps[head], cmap="Greys", norm=PowerNorm(0.5, vmin=0, vmax=top), interpolation="nearest")
            axis.set_xticks(ticks, [""] * len(ticks))
            axis.set_yticks(ticks, [""] * len(ticks))
            axis.tick_params(length=3, color="red")
            for spine in axis.spines.values():  # a light frame: a dark one would hide the first and last columns
                spine.set_color("#9ecae1")
            axis.set_title(head_name(layer, head) + (f" (unit {unit + 1})" if units > 1 else ""), fontsize=8)
    for axis in axes.flat[heads * units :]:
        axis.set_visible(False)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout(rect=(0, 0, 1, 0.985))
    return save_figure_atomic(figure, path)
