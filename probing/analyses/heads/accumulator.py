"""Clusters of heads (Clark et al. 2019, section 6): how alike two heads attend.

The distance between heads a and b is the Jensen-Shannon divergence of their
attention rows, averaged over every real query token of every unit:

    JS(P, Q) = H(M) - (H(P) + H(Q)) / 2,   M = (P + Q) / 2,   in nats (0 .. ln 2).

Smoothing: :data:`SMOOTHING` (1e-10) is added to every real key's weight of
a row, and the row renormalised, so that no probability is exactly zero
(padding keys stay out). Each row's sum is taken in float32 and the sums
over rows in float64, so identical heads come out within ~1e-7 nats of 0
rather than exactly 0. Heads are then embedded in two dimensions by metric
multidimensional scaling (scikit-learn's SMACOF, seeded) of the
Jensen-Shannon *distance* sqrt(JS), which, unlike the divergence, is a metric.

Each head also gets a behaviour label from its surface statistics
(:mod:`probing.analyses.heads.behaviour`): the share rule with the largest
share above its threshold, else ``broad`` when its mean entropy is near that
of uniform attention, else ``other``.

>>> import torch
>>> same = torch.tensor([[0.5, 0.5], [0.9, 0.1]]).view(1, 1, 1, 2, 2).expand(1, 1, 2, 2, 2)
>>> divergence = HeadDivergence(1, 2)
>>> divergence.update(same, torch.ones(1, 2))
>>> divergence.summary()["mean"]
[[0.0, 0.0], [0.0, 0.0]]
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import torch

from probing.analyses.heads.behaviour import behaviour_rules, behaviours
from probing.analyses.surface.accumulator import SurfaceAccumulator
from probing.engine.accumulator import Accumulator, BatchView
from probing.engine.token_roles import TokenRoles, normalised_rows

SMOOTHING = 1e-10
"""Added to every real key's attention weight before renormalising the row."""

CHUNK_CELLS = 1 << 23
"""Cap on heads x rows x keys in one step, to bound memory (~32 MB per float32 tensor)."""

TINY = 1e-30
"""Floor inside the logarithm, so that padding keys (weight 0) add 0 * log(TINY) = 0."""

DECIMALS = 7


class HeadDivergence:
    """Running sum over query rows of JS divergence between every pair of heads.

    Heads are numbered ``layer * num_heads + head``. ``update`` takes attention
    [batch, layer, head, query, key] and a real-token mask [batch, tok].
    """

    def __init__(self, num_layers: int, num_heads: int):
        self.num_layers, self.num_heads = num_layers, num_heads
        count = num_layers * num_heads
        self.sums = torch.zeros(count, count, dtype=torch.float64)  # [head, head], upper triangle filled
        self.rows = torch.zeros((), dtype=torch.float64)

    def update(self, attention: torch.Tensor, real: torch.Tensor) -> None:
        rows = smoothed_rows(attention, real)  # [head, row, key]
        count, row_count = rows.shape[0], rows.shape[1]
        if row_count == 0:
            return
        # Per-row sums in float32 (short, exact enough), totals over rows in float64.
        entropy = -torch.special.xlogy(rows, rows).sum(dim=-1).double().sum(dim=-1)  # [head]
        step = max(1, CHUNK_CELLS // (row_count * rows.shape[2]))
        sums = torch.zeros(count, count, dtype=torch.float64)
        # For each offset d, the pairs (a, a + d) of all heads a at once: contiguous slices added
        # by broadcasting, no gather of pair indices (this step is memory-bound).
        for offset in range(1, count):
            for start in range(0, count - offset, step):
                stop = min(start + step, count - offset)
                both = rows[start:stop] + rows[start + offset : stop + offset]  # [pair, row, key]: P + Q = 2M
                logs = both.clamp_min(TINY).log_()  # padding keys are 0 in both: 0 * log(TINY) = 0
                dots = torch.einsum("prk,prk->pr", both, logs)  # sum over keys of (P+Q) log(P+Q), per row
                # H(M) = -1/2 sum (P+Q) log(P+Q) + log 2 per row, as each row of P + Q sums to 2.
                mixed = -0.5 * dots.double().sum(dim=-1) + math.log(2) * row_count
                first, second = entropy[start:stop], entropy[start + offset : stop + offset]
                heads = torch.arange(start, stop)
                # JS >= 0 in exact arithmetic; clip float noise (identical heads).
                sums[heads, heads + offset] = (mixed - 0.5 * (first + second)).clamp_min(0).cpu()
        self.sums += sums
        self.rows += row_count

    def matrix(self) -> np.ndarray:
        """Symmetric [head, head] mean divergence (nats), zero diagonal."""
        upper = (self.sums / max(float(self.rows), 1.0)).numpy()
        return upper + upper.T

    def summary(self) -> dict:
        return {
            "mean": np.round(self.matrix(), DECIMALS).tolist(),
            "rows": int(self.rows),
            "units": "nats",
            "smoothing": f"add {SMOOTHING:g} to each real key's weight, then renormalise the row",
            "head_order": "layer * num_heads + head, both from 0",
        }


class HeadsAccumulator(Accumulator):
    """Head divergences beside the surface statistics that label each head's behaviour.

    State: the surface statistics' (``surface.*``) and ``divergence`` [head, head], ``rows``.
    """

    analysis = "heads"

    def __init__(self, num_layers: int, num_heads: int, *, causal: bool = False, token_names: dict | None = None,
                 seed: int = 0):
        super().__init__()
        self.surface = SurfaceAccumulator(num_layers, num_heads, causal=causal, token_names=token_names)
        self.divergence = HeadDivergence(num_layers, num_heads)
        self.seed = seed
        self.state_tensors = {**{f"surface.{k}": v for k, v in self.surface.state_tensors.items()},
                              "divergence": self.divergence.sums, "rows": self.divergence.rows}

    def identity(self) -> dict:
        return {**self.surface.identity(), "analysis": self.analysis}

    def fresh(self) -> "HeadsAccumulator":
        surface = self.surface
        return HeadsAccumulator(surface.num_layers, surface.num_heads, causal=surface.causal,
                                token_names=surface.token_names, seed=self.seed)

    @classmethod
    def for_result(cls, result: dict) -> "HeadsAccumulator":
        model = result["model"]
        return cls(model["num_layers"], result["surface"]["num_heads"], causal=model["is_causal"],
                   token_names=result.get("token_names"), seed=result["config"].get("seed", 0))

    def update(self, view: BatchView) -> None:
        attention = view.attention if view.reading == "weights" else normalised_rows(view.attention)
        self.add(attention, TokenRoles.of_view(view))

    def add(self, attention: torch.Tensor, roles: TokenRoles) -> None:
        """One batch: attention [batch, layer, head, query, key], roles [batch, tok]."""
        self.surface.add(attention, roles)
        self.divergence.update(attention, roles.real)

    def result(self) -> dict:
        surface = self.surface.result()
        matrix = self.divergence.matrix()
        heads = {
            "divergence": self.divergence.summary(),
            "mds": [[round(float(v), 6) for v in row] for row in embed(matrix, seed=self.seed)],
            "mds_of": "sqrt of the mean Jensen-Shannon divergence (the Jensen-Shannon distance)",
            "behaviour": behaviours(surface["surface"]),
            "behaviour_rules": behaviour_rules(),
        }
        return {"token_names": surface["token_names"], "surface": surface["surface"], "heads": heads,
                "state": self.encoded_state()}


def smoothed_rows(attention: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """Real query rows of every head, smoothed: [layer * head, row, key].

    attention: [batch, layer, head, query, key]; real: [batch, tok] (1 real, 0 padding).
    """
    batch, layers, heads, tokens, _ = attention.shape
    real = real.to(attention.device).float()
    keys = real.unsqueeze(1).expand(batch, tokens, tokens)  # [batch, query, key]: the real keys of each row
    selected = real.reshape(-1).bool()  # [batch * query]
    rows = attention.float().permute(1, 2, 0, 3, 4).reshape(layers * heads, batch * tokens, tokens)
    rows, keys = rows[:, selected], keys.reshape(batch * tokens, tokens)[selected]  # [head, row, key], [row, key]
    rows = rows + SMOOTHING * keys
    return rows / rows.sum(dim=-1, keepdim=True)


def embed(divergence: np.ndarray, seed: int = 0) -> np.ndarray:
    """2-D coordinates [head, 2] by metric MDS of the Jensen-Shannon distance sqrt(JS)."""
    from sklearn.manifold import MDS

    distance = np.sqrt(np.clip(divergence, 0.0, None))
    parameters = inspect.signature(MDS).parameters
    if "metric_mds" in parameters:  # scikit-learn >= 1.8 renamed the options
        options = {"metric_mds": True, "metric": "precomputed", "init": "classical_mds"}
    else:
        options = {"metric": True, "dissimilarity": "precomputed", "n_init": 4}
    return MDS(n_components=2, random_state=seed, **options).fit_transform(distance)


def probe_marks(probe: dict, num_layers: int, num_heads: int) -> list[dict]:
    """The best head per relation of a ``probing score`` result: [{relation, layer, head, accuracy}]."""
    from probing.errors import ProbingError

    model = probe.get("model", {})
    reading = probe.get("config", {}).get("attention", "weights")
    # the probe's grids: one "head" per layer when it read rollout, like this run's when it does
    probe_heads = 1 if reading == "rollout" else model.get("num_heads")
    if (model.get("num_layers"), probe_heads) != (num_layers, num_heads):
        raise ProbingError(
            f"the probe result has {model.get('num_layers')}x{probe_heads} heads ({reading}), "
            f"this run reads {num_layers}x{num_heads}",
            source="--probe",
        )
    marks = []
    for relation, entry in probe.get("relations", {}).items():
        best = entry.get("best")
        if best is not None:
            marks.append({"relation": relation, "layer": best["layer"], "head": best["head"], "accuracy": best["accuracy"]})
    return marks
