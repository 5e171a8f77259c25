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

Under a reading other than the raw weights (``--attention norms``), rows are
first divided by their sum over real keys, so a share is the share of what
arrives (the norm-based rows do not sum to 1).

>>> import torch
>>> attention = torch.tensor([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]).view(1, 1, 1, 3, 3)
>>> from probing.engine.token_roles import TokenRoles
>>> roles = TokenRoles.from_masks(torch.ones(1, 3), torch.tensor([[1, 0, 1]]), torch.zeros(1, 3))
>>> stats = SurfaceAccumulator(1, 1)
>>> stats.add(attention, roles)
>>> result = stats.result()["surface"]
>>> result["heads"]["first_special"], result["heads"]["previous"], result["heads"]["self"]
([[0.5]], [[0.333333]], [[0.5]])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from probing.analyses.surface.payload import DECIMALS, QUERY_GROUPS
from probing.engine.accumulator import Accumulator, BatchView
from probing.engine.token_roles import TokenRoles, normalised_rows


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


class SurfaceAccumulator(Accumulator):
    """Running sums of every :data:`STATISTICS` entry per layer and head, and query counts.

    State: ``sum.NAME`` float64 [layer, head]; ``queries.GROUP``, ``uniform.NAME`` and
    ``units`` float64 scalars. ``result`` gives the averages.
    """

    analysis = "surface"

    def __init__(self, num_layers: int, num_heads: int, *, causal: bool = False, token_names: dict | None = None):
        super().__init__()
        self.num_layers, self.num_heads, self.causal = num_layers, num_heads, causal
        self.token_names = token_names or {"first_special": "first special", "separator": "separator"}
        zeros = lambda *shape: torch.zeros(shape, dtype=torch.float64)  # noqa: E731
        self.state_tensors = {f"sum.{name}": zeros(num_layers, num_heads) for name in STATISTICS}
        self.state_tensors.update({f"queries.{group}": zeros() for group in QUERY_GROUPS})
        self.state_tensors.update({f"uniform.{name}": zeros() for name in UNIFORM})
        self.state_tensors["units"] = zeros()

    def identity(self) -> dict:
        return {"analysis": self.analysis, "shape": [self.num_layers, self.num_heads], "causal": self.causal}

    @classmethod
    def for_result(cls, result: dict) -> "SurfaceAccumulator":
        model = result["model"]
        return cls(model["num_layers"], result["surface"]["num_heads"], causal=model["is_causal"],
                   token_names=result.get("token_names"))

    reads = "layers"
    """A pass hands it one layer at a time (update_layer, then update_batch): it never holds the model's attention."""

    def update(self, view: BatchView) -> None:
        attention = view.attention
        if view.reading != "weights":
            attention = normalised_rows(attention)
        self.add(attention, TokenRoles.of_view(view))

    def update_layer(self, view: BatchView, layer: int) -> None:
        attention = view.attention if view.reading == "weights" else normalised_rows(view.attention)
        attention = attention.float()  # [batch, 1, head, query, key]
        roles = self._roles(view).to(attention.device)
        for name, statistic in STATISTICS.items():
            self.state_tensors[f"sum.{name}"][layer] += statistic.compute(attention, roles)[0].double().cpu()

    def update_batch(self, view: BatchView) -> None:
        self._count_queries(self._roles(view), len(view.batch))
        self._batch_roles = None

    def _roles(self, view: BatchView) -> TokenRoles:
        """The batch's roles, made once for all its layers."""
        cached = getattr(self, "_batch_roles", None)
        if cached is None or cached[0] is not view.batch:
            cached = self._batch_roles = (view.batch, TokenRoles.of_view(view))
        return cached[1]

    def add(self, attention: torch.Tensor, roles: TokenRoles) -> None:
        """Add one batch: attention [batch, layer, head, query, key], roles [batch, tok]."""
        attention = attention.float()
        roles = roles.to(attention.device)
        state = self.state_tensors
        for name, statistic in STATISTICS.items():
            state[f"sum.{name}"] += statistic.compute(attention, roles).double().cpu()
        self._count_queries(roles, attention.shape[0])

    def _count_queries(self, roles: TokenRoles, units: int) -> None:
        state = self.state_tensors
        for group in QUERY_GROUPS:
            state[f"queries.{group}"] += float(getattr(roles, group).sum())
        log_keys = torch.log(visible_keys(roles.real, self.causal).clamp_min(1))  # [batch, query]
        for name, group in UNIFORM.items():
            state[f"uniform.{name}"] += float((log_keys * getattr(roles, group)).sum())
        state["units"] += units

    @property
    def queries(self) -> dict[str, float]:
        """How many queries of each kind were summed (real, first, separator, other, punctuation)."""
        return {group: float(self.state_tensors[f"queries.{group}"]) for group in QUERY_GROUPS}

    @property
    def units(self) -> int:
        return int(self.state_tensors["units"])

    def means(self) -> dict[str, torch.Tensor | None]:
        """Name -> float64 [layer, head] averages; None where no query, or no key, of its kind was seen
        (a decoder's input has no [CLS] or [SEP]: not "0% attention to [SEP]")."""
        state = self.state_tensors
        queries = {group: float(state[f"queries.{group}"]) for group in QUERY_GROUPS}
        return {
            name: (state[f"sum.{name}"] / queries[statistic.queries])
            if queries[statistic.queries] and (statistic.keys is None or queries[statistic.keys])
            else None
            for name, statistic in STATISTICS.items()
        }

    def result(self) -> dict:
        """The ``surface`` block: per-head and per-layer averages, baselines, counts (and the state)."""
        state = self.state_tensors
        means = self.means()
        queries = {group: float(state[f"queries.{group}"]) for group in QUERY_GROUPS}
        surface = {
            "num_heads": self.num_heads,
            "heads": {name: _rounded(value) for name, value in means.items()},
            "layer_means": {name: None if value is None else _rounded(value.mean(dim=1)) for name, value in means.items()},
            "uniform_entropy": {
                name: round(float(state[f"uniform.{name}"]) / queries[group], DECIMALS) if queries[group] else None
                for name, group in UNIFORM.items()
            },
            "queries": {group: int(count) for group, count in queries.items()},
            "units": int(state["units"]),
            "definitions": {name: statistic.description for name, statistic in STATISTICS.items()},
        }
        return {"token_names": self.token_names, "surface": surface, "state": self.encoded_state()}



def _rounded(value: torch.Tensor | None):
    return None if value is None else torch.round(value, decimals=DECIMALS).tolist()
