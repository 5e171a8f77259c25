"""Where attention goes regardless of syntax (Clark et al. 2019, section 3).

Per layer and head, the average token-level attention to the first special
token ([CLS], ``<s>``), to the other special tokens (separators: [SEP],
``</s>``), to ``.`` and ``,``, to the token itself, to the previous token
(from token i to token i-1) and to the next (i to i+1); attention from
separators to separators and from every other token to separators; and the
entropy of each head's attention rows, overall and from the first special
token, beside the entropy of uniform attention over the same keys.

"Average" is over query tokens: every real (non-padding) query of every
unit weighs the same, special tokens included, as in the paper's notebook
(which averages over a unit's tokens and then over units; here longer units
weigh more). A query's previous/next share is 0 where it has no such
neighbour. Entropies are in nats; the uniform baseline of a query is the log
of the number of keys it can see (all real keys, or those up to itself in a
causal model).

>>> import torch
>>> attention = torch.tensor([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]).view(1, 1, 1, 3, 3)
>>> roles = TokenRoles.from_masks(torch.ones(1, 3), torch.tensor([[1, 0, 1]]), torch.zeros(1, 3))
>>> stats = SurfaceStats(1, 1)
>>> stats.update(attention, roles)
>>> result = stats.result()
>>> result["heads"]["first_special"], result["heads"]["previous"], result["heads"]["self"]
([[0.5]], [[0.333333]], [[0.5]])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..inputs import TokenBatch

DECIMALS = 6


@dataclass(frozen=True)
class TokenRoles:
    """Float masks [batch, tok] of what each token is; padding is 0 in every mask.

    ``first``: a special token that starts the unit ([CLS], ``<s>``);
    ``separator``: every other special token ([SEP], ``</s>``; T5's closing ``</s>``);
    ``other``: every real token that is not a separator (the first special token included).
    """

    real: torch.Tensor
    first: torch.Tensor
    separator: torch.Tensor
    punctuation: torch.Tensor

    @property
    def other(self) -> torch.Tensor:
        return self.real - self.separator

    def to(self, device) -> "TokenRoles":
        return TokenRoles(self.real.to(device), self.first.to(device), self.separator.to(device), self.punctuation.to(device))

    @classmethod
    def from_masks(cls, real, special, punctuation) -> "TokenRoles":
        """Roles from 0/1 masks [batch, tok] of real, special and punctuation tokens."""
        real = real.float()
        special = special.float() * real
        first = torch.zeros_like(special)
        first[:, 0] = special[:, 0]  # units are padded on the right: column 0 starts every unit
        return cls(real=real, first=first, separator=special - first, punctuation=punctuation.float() * real)

    @classmethod
    def of_batch(cls, batch: TokenBatch) -> "TokenRoles":
        return cls.from_masks(batch.attention_mask, batch.is_special, batch.is_punctuation)


def _share(keys: str, queries: str = "real") -> Callable:
    """Sum over queries of the attention mass each puts on keys of one role -> [layer, head]."""

    def compute(attention: torch.Tensor, roles: TokenRoles) -> torch.Tensor:
        return torch.einsum("blhqk,bk,bq->lh", attention, getattr(roles, keys), getattr(roles, queries))

    return compute


def _diagonal(offset: int) -> Callable:
    """Sum over queries of the attention on the key ``offset`` places away (-1: previous)."""

    def compute(attention: torch.Tensor, roles: TokenRoles) -> torch.Tensor:
        # diagonal(offset=-1) holds A[i+1, i]: query i+1 looking at its previous token.
        values = attention.diagonal(offset=offset, dim1=-2, dim2=-1)  # [batch, layer, head, tok - |offset|]
        queries = roles.real[:, -offset:] if offset < 0 else roles.real[:, : roles.real.shape[1] - offset]
        return torch.einsum("blhq,bq->lh", values, queries)

    return compute


def _entropy(queries: str) -> Callable:
    """Sum over queries of the entropy (nats) of their attention rows."""

    def compute(attention: torch.Tensor, roles: TokenRoles) -> torch.Tensor:
        entropy = -torch.special.xlogy(attention, attention).sum(dim=-1)  # [batch, layer, head, query]
        return torch.einsum("blhq,bq->lh", entropy, getattr(roles, queries))

    return compute


@dataclass(frozen=True)
class Statistic:
    """One per-head statistic: how to sum it over a batch, and over which queries it is averaged."""

    compute: Callable
    queries: str
    description: str
    keys: str | None = None
    """The role of the keys it measures: None (not measured) when no such token was seen."""


STATISTICS: dict[str, Statistic] = {
    "first_special": Statistic(
        _share("first"), "real", "attention to the special token that starts a unit ([CLS], <s>)", "first"
    ),
    "separator": Statistic(_share("separator"), "real", "attention to the other special tokens ([SEP], </s>)", "separator"),
    "punctuation": Statistic(_share("punctuation"), "real", "attention to '.' and ','", "punctuation"),
    "self": Statistic(_diagonal(0), "real", "attention to the token itself"),
    "previous": Statistic(_diagonal(-1), "real", "attention from token i to token i-1"),
    "next": Statistic(_diagonal(1), "real", "attention from token i to token i+1"),
    "separator_to_separator": Statistic(
        _share("separator", "separator"), "separator", "attention from separators to separators", "separator"
    ),
    "other_to_separator": Statistic(
        _share("separator", "other"), "other", "attention from every other token to separators", "separator"
    ),
    "entropy": Statistic(_entropy("real"), "real", "entropy (nats) of a query's attention"),
    "first_special_entropy": Statistic(
        _entropy("first"), "first", "entropy (nats) of the first special token's attention"
    ),
}
"""Name -> statistic. A new statistic is one entry here."""

UNIFORM = {"entropy": "real", "first_special_entropy": "first"}
"""Entropy statistic -> the queries whose uniform-attention entropy is its baseline."""


def visible_keys(real: torch.Tensor, causal: bool) -> torch.Tensor:
    """[batch, query]: how many keys each query can attend to (0 for padding queries)."""
    lengths = real.sum(dim=1, keepdim=True)  # [batch, 1]
    if not causal:
        return lengths * real
    positions = torch.arange(1, real.shape[1] + 1, dtype=real.dtype).unsqueeze(0)
    return torch.minimum(positions, lengths) * real


class SurfaceStats:
    """Running sums of every :data:`STATISTICS` entry per layer and head, and query counts.

    ``update`` takes one batch of attention ``[batch, layer, head, query, key]``;
    ``merge`` adds another accumulator's sums (shards, processes); ``result``
    gives the averages.
    """

    def __init__(self, num_layers: int, num_heads: int):
        self.num_layers, self.num_heads = num_layers, num_heads
        self.sums = {name: torch.zeros(num_layers, num_heads, dtype=torch.float64) for name in STATISTICS}
        self.queries = {group: 0.0 for group in ("real", "first", "separator", "other", "punctuation")}
        self.uniform = {name: 0.0 for name in UNIFORM}
        self.units = 0

    def update(self, attention: torch.Tensor, roles: TokenRoles, *, causal: bool = False) -> None:
        """Add one batch; ``attention`` is [batch, layer, head, query, key], roles [batch, tok]."""
        attention = attention.float()
        roles = roles.to(attention.device)
        for name, statistic in STATISTICS.items():
            self.sums[name] += statistic.compute(attention, roles).double().cpu()
        for group in self.queries:
            self.queries[group] += float(getattr(roles, group).sum())
        log_keys = torch.log(visible_keys(roles.real, causal).clamp_min(1))  # [batch, query]
        for name, group in UNIFORM.items():
            self.uniform[name] += float((log_keys * getattr(roles, group)).sum())
        self.units += attention.shape[0]

    def merge(self, other: "SurfaceStats") -> "SurfaceStats":
        if (other.num_layers, other.num_heads) != (self.num_layers, self.num_heads):
            raise ValueError("cannot merge statistics of models of different shapes")
        for name in self.sums:
            self.sums[name] += other.sums[name]
        for group in self.queries:
            self.queries[group] += other.queries[group]
        for name in self.uniform:
            self.uniform[name] += other.uniform[name]
        self.units += other.units
        return self

    def means(self) -> dict[str, torch.Tensor | None]:
        """Name -> float64 [layer, head] averages; None where no query, or no key, of its kind was seen
        (a decoder's input has no [CLS] or [SEP]: not "0% attention to [SEP]")."""
        return {
            name: (self.sums[name] / self.queries[statistic.queries])
            if self.queries[statistic.queries] and (statistic.keys is None or self.queries[statistic.keys])
            else None
            for name, statistic in STATISTICS.items()
        }

    def result(self) -> dict:
        """The ``surface`` part of a result file: per-head and per-layer averages, baselines, counts."""
        means = self.means()
        return {
            "heads": {name: _rounded(value) for name, value in means.items()},
            "layer_means": {name: None if value is None else _rounded(value.mean(dim=1)) for name, value in means.items()},
            "uniform_entropy": {
                name: round(self.uniform[name] / self.queries[group], DECIMALS) if self.queries[group] else None
                for name, group in UNIFORM.items()
            },
            "queries": {group: int(count) for group, count in self.queries.items()},
            "units": self.units,
            "definitions": {name: statistic.description for name, statistic in STATISTICS.items()},
        }


def _rounded(value: torch.Tensor | None):
    return None if value is None else torch.round(value, decimals=DECIMALS).tolist()
