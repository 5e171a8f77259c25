"""Each head's behaviour label from its surface statistics (Clark et al. 2019, section 6): the share rule with
the largest share above its threshold (:data:`BEHAVIOURS`, in order), else ``broad`` when its mean entropy is at
least :data:`BROAD_ENTROPY_RATIO` of the uniform-attention entropy, else ``other``.

No torch: the payload schema names the labels, and validation runs without a model framework.

>>> surface = {"heads": {"entropy": [[0.1, 2.0]], "previous": [[0.9, 0.1]], "next": [[0.0, 0.0]],
...            "first_special": None, "separator": None, "punctuation": None},
...            "uniform_entropy": {"entropy": 2.2}}
>>> behaviours(surface)
[['previous', 'broad']]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Behaviour:
    """A share rule: a head whose ``statistic`` exceeds ``threshold`` attends to ``label``."""

    label: str
    statistic: str
    threshold: float


BEHAVIOURS = (
    Behaviour("previous", "previous", 0.5),
    Behaviour("next", "next", 0.5),
    Behaviour("first special", "first_special", 0.4),
    Behaviour("separator", "separator", 0.4),
    Behaviour("punctuation", "punctuation", 0.3),
)
"""Share rules; of those that hold, the one with the largest share labels the head.

Most of a head's attention for the positional rules (the paper's "previous/next
token" heads); less for the special tokens and punctuation, which many heads of
sentence-embedding models share with each other (all-mpnet-base-v2's middle
layers give about 35% to ``</s>`` and 25% to ``.``/``,``)."""

BROAD_ENTROPY_RATIO = 0.8
"""A head whose mean entropy is at least this share of the uniform entropy attends broadly."""

LABELS = tuple(rule.label for rule in BEHAVIOURS) + ("broad", "other")


def behaviours(surface: dict) -> list[list[str]]:
    """Behaviour label [layer][head] from the ``surface`` part of a result (see module doc)."""
    heads = surface["heads"]
    entropy = np.array(heads["entropy"], dtype=float)  # [layer, head]; every real query has one
    shares = np.stack([_array(heads[rule.statistic], entropy.shape) for rule in BEHAVIOURS])  # [rule, layer, head]
    thresholds = np.array([rule.threshold for rule in BEHAVIOURS]).reshape(-1, 1, 1)
    passing = np.where(shares > thresholds, shares, -np.inf)
    best = passing.argmax(axis=0)  # [layer, head]
    any_rule = np.isfinite(passing.max(axis=0))
    uniform = surface["uniform_entropy"]["entropy"] or 0.0
    broad = entropy >= BROAD_ENTROPY_RATIO * uniform
    labels = np.where(any_rule, np.array([rule.label for rule in BEHAVIOURS], dtype=object)[best], "other")
    labels = np.where(~any_rule & broad, "broad", labels)
    return labels.tolist()


def behaviour_rules() -> dict:
    """The thresholds, as written into results."""
    return {
        "shares": {rule.label: {"statistic": rule.statistic, "above": rule.threshold} for rule in BEHAVIOURS},
        "broad": {"entropy_at_least_times_uniform": BROAD_ENTROPY_RATIO},
        "tie_break": "largest share among the share rules that hold; then broad; else other",
    }


def _array(values, shape: tuple[int, ...]) -> np.ndarray:
    """A [layer][head] list as floats; all NaN when the statistic was not measured (None)."""
    if values is None:
        return np.full(shape, np.nan)
    return np.array(values, dtype=float)
