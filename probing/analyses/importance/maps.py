"""The importance map: what disabling each head alone does to a metric, from an ``ablate --each-head`` result.

Such a result holds, per condition (the intact model, then every head alone), the metric's value on each of its
parts and its bootstrap replicates (``--scores-only`` keeps them as they are; a file of sums gives them through
probing.analyses.ablation.scores.result_scores). A head's **effect** is metric(head disabled) - metric(intact) on
the same units; its **harm** is the effect in the metric's harmful direction (a drop of an accuracy, a rise of a
loss), so that a larger harm is always a head the metric needs more.

The replicates are paired: every condition is counted on the same resampled units. A ratio metric's and the
probe's replicates weigh each unit by Poisson draws seeded by (seed, unit index) alone
(probing.stats.bootstrap.poisson_weights, the same weights whichever heads are disabled), and BLiMP's pairs are
drawn within each paradigm from (seed, paradigm index) for all conditions at once
(probing.analyses.ablation.pair_parts). So replicate(head disabled) - replicate(intact) is the effect on one
resample of the units, and its percentiles are the effect's paired interval.

Pure numpy (no torch): it runs on result files.

>>> conditions = [{"label": "none", "heads": []}] + [{"label": f"1-{h + 1}", "heads": [[0, h]]} for h in range(2)]
>>> each_head_conditions({"model": {"num_layers": 1, "num_heads": 2}, "config": {}, "conditions": conditions})
array([[1, 2]])
>>> harm_of(np.array([-0.1, 0.2]), higher_is_better=True).tolist()
[0.1, -0.2]
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from probing.errors import ProbingError
from probing.stats.intervals import LEVEL


def harm_of(effect, higher_is_better: bool):
    """The effect in the metric's harmful direction: a drop of an accuracy (higher is better), a rise of a loss."""
    return -effect if higher_is_better else effect


def each_head_conditions(result: dict, source: str = "the ablation result") -> np.ndarray:
    """int [layer, head]: the condition that disables each head alone, in an ``ablate --each-head`` result (the
    intact model first, then one condition per head of the model, each head once); any other result is refused
    in one line."""
    from probing.results.schema.validation import heads_per_layer

    conditions = result["conditions"]
    shape = (result["model"]["num_layers"], heads_per_layer(result))
    index = np.zeros(shape, dtype=np.int64)
    alone = [number for number, condition in enumerate(conditions[1:], start=1) if len(condition["heads"]) == 1]
    if conditions[0]["heads"] or len(alone) != len(conditions) - 1 or len(alone) != index.size:
        raise ProbingError(f"is not a result of ablate --each-head: it needs the intact model and each of the model's "
                           f"{index.size} heads disabled alone, and has {len(conditions) - 1} other conditions "
                           f"({len(alone)} of one head)", source=source)
    for number in alone:
        layer, head = conditions[number]["heads"][0]
        if index[layer, head]:
            raise ProbingError(f"disables head {layer}-{head} (from 0) twice: not a result of ablate --each-head",
                               source=source)
        index[layer, head] = number
    return index


@dataclass(frozen=True)
class HeadMap:
    """Every head's effect on every metric part, and the same on each bootstrap replicate of the units.

    ``effect`` [part, layer, head]; ``replicates`` [replicate, part, layer, head] (NaN where a replicate drew no
    unit of the part); ``metric``: the ablation result's block (name, description, higher_is_better, parts).
    """

    metric: dict
    effect: np.ndarray
    replicates: np.ndarray

    @property
    def higher_is_better(self) -> bool:
        return bool(self.metric["higher_is_better"])

    @property
    def harm(self) -> np.ndarray:
        """[part, layer, head]: :func:`harm_of` every effect."""
        return harm_of(self.effect, self.higher_is_better)

    @property
    def replicate_harm(self) -> np.ndarray:
        """[replicate, part, layer, head]: :func:`harm_of` every replicate's effect."""
        return harm_of(self.replicates, self.higher_is_better)

    def intervals(self, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
        """low and high [part, layer, head] of each effect's percentile interval over the replicates that drew a
        unit (probing.stats.intervals.finite_interval's rule, every head at once); NaN where none did."""
        finite = np.where(np.isfinite(self.replicates), self.replicates, np.nan)
        tail = 100.0 * (1.0 - level) / 2.0
        with warnings.catch_warnings():  # a part no replicate measured: numpy warns of its all-NaN slices
            warnings.simplefilter("ignore", RuntimeWarning)
            low, high = np.nanpercentile(finite, [tail, 100.0 - tail], axis=0)
        return low, high


def head_map(result: dict, source: str = "the ablation result") -> HeadMap:
    """The :class:`HeadMap` of an ``ablate --each-head`` result (validated), from its values and replicates."""
    from probing.analyses.ablation.scores import result_scores

    index = each_head_conditions(result, source)
    if (result["config"].get("shard") or None) is not None:
        raise ProbingError("is one shard of the ablation: its units are a part of the run's; merge the shards first "
                           "(probing merge)", source=source)
    values, replicates = result_scores(result)                    # [condition, part], [replicate, condition, part]
    if replicates.shape[0] == 0:
        raise ProbingError("holds no bootstrap replicate: the map's intervals need them (ablate --bootstrap N)",
                           source=source)
    effect = values[index] - values[0]                            # [layer, head, part]
    paired = replicates[:, index] - replicates[:, :1, None]       # [replicate, layer, head, part]
    return HeadMap(result["metric"], np.moveaxis(effect, -1, 0), np.moveaxis(paired, -1, 1))
