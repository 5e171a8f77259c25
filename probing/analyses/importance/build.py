"""An ``importance`` result from an ``ablate --each-head`` result and a DEV probe result (no model pass, no torch).

The result keeps the ablation's model and input blocks (the weights disabled and the units measured), names both
source files with their sha256, and holds, per metric part, the map (effect, its 95% interval, harm; [layer][head]
grids), per relation DEV's accuracy grid, per relation and part the syntax-against-harm test, and per relation
the chosen head's rank in its layer band and in the model (probing.analyses.importance.syntax).
"""

from __future__ import annotations

import time

import numpy as np

from probing.analyses.importance.maps import HeadMap, head_map
from probing.analyses.importance.syntax import band_layers, chosen_head, dev_accuracy, rank_among, syntax_against_harm
from probing.errors import ProbingError
from probing.results.io import environment_block, now_iso, tool_block
from probing.results.schema import SCHEMA_VERSION
from probing.stats.intervals import LEVEL, bootstrap_block

DEFAULT_PERMUTATIONS = 10_000
"""Within-layer permutations of the DEV accuracies per test (causal.md, section 5)."""

DEV_MAY_DIFFER = ("relations", "offsets")
"""DEV's config fields that need not be the ablation's: DEV holds the relations it was scored on, and its offsets
choose nothing here (ablate --chosen's rule for a DEV result)."""


def importance_result(ablation: dict, dev: dict, *, sources: dict, relations=None,
                      permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0) -> dict:
    """The result (common blocks and payload) of the map of ``ablation`` set against ``dev``'s accuracies on
    ``relations`` (default: every relation of DEV). ``sources``: {"ablation": ..., "dev": ...}, each the
    ``path`` given (errors name it) and the ``sha256`` of its bytes."""
    started = time.perf_counter()
    relations = list(dev["relations"] if relations is None else dict.fromkeys(relations))  # each once, in order
    _check_dev(dev, ablation, relations, sources["dev"]["path"])
    found = head_map(ablation, source=sources["ablation"]["path"])
    low, high = found.intervals(LEVEL)
    parts = list(found.metric["parts"])
    accuracy, syntax, chosen = {}, {}, {}
    for relation in relations:
        scored = dev["relations"][relation]
        grid, direction = dev_accuracy(scored)
        accuracy[relation] = {"pairs": int(scored["total"]), "accuracy": _grid(grid), "direction": direction.tolist()}
        syntax[relation] = dict(zip(parts, syntax_against_harm(grid, found.harm, found.replicate_harm,
                                                               permutations=permutations, seed=seed)))
        head = chosen_head(scored)
        chosen[relation] = {"head": head, "parts": dict(zip(parts, _ranks(found, head, low, high)))}
    config = ablation["config"]
    return {
        "schema_version": SCHEMA_VERSION, "analysis": "importance", "tool": tool_block(),
        "model": ablation["model"], "input": ablation["input"],
        "config": {"attention": config.get("attention", "weights"), "limit": config.get("limit"), "shard": None,
                   "metric": config["metric"], "metric_options": config.get("metric_options", {}),
                   "options": {"relations": relations, "permutations": permutations, "seed": seed}},
        "environment": environment_block(),
        "timing": {"seconds_total": round(time.perf_counter() - started, 3), "seconds_model": 0.0},
        "created": now_iso(),
        "sources": {
            "ablation": _source(sources["ablation"], ablation),
            "dev": {**_source(sources["dev"], dev), "input": {key: dev["input"][key] for key in ("path", "sha256")},
                    "units": dev["input"]["units_used"]}},
        "metric": {key: found.metric[key] for key in ("name", "description", "higher_is_better", "parts")},
        "bootstrap": bootstrap_block(config["bootstrap"]["replicates"], config["bootstrap"]["seed"], method=None,
                                     level=LEVEL),
        "permutations": {"count": permutations, "seed": seed, "within": "layer", "sided": "harmful"},
        "map": {part: {"effect": _grid(found.effect[p]), "low": _grid(low[p]), "high": _grid(high[p]),
                       "harm": _grid(found.harm[p])} for p, part in enumerate(parts)},
        "accuracy": accuracy,
        "syntax": syntax,
        "chosen": chosen,
    }


def _ranks(found: HeadMap, head: dict, low, high) -> list[dict | None]:
    """Per metric part, the chosen ``head``'s effect, harm, interval and ranks in its band and in the model;
    None for a part without units (no map, nothing to rank)."""
    layer, number, layers = head["layer"], head["head"], found.effect.shape[1]
    ranks = []
    for p, effect in enumerate(found.effect):
        if not np.all(np.isfinite(effect)):
            ranks.append(None)
            continue
        ranks.append({"effect": float(effect[layer, number]), "harm": float(found.harm[p][layer, number]),
                      "interval": _pair(low[p][layer, number], high[p][layer, number]),
                      **{name: rank_among(effect, layer, number, layers=rows, higher_is_better=found.higher_is_better)
                         for name, rows in (("band", band_layers(layer, layers)), ("model", range(layers)))}})
    return ranks


def _check_dev(dev: dict, ablation: dict, relations: list[str], where: str) -> None:
    """DEV is a probe result of the ablation's model, read as it was read, of other sentences than the ones
    measured (probing.stats.heldout.check_dev_test, the one DEV/TEST check), holding every relation with pairs."""
    from probing.stats.heldout import check_dev_test

    model = ablation["model"]
    planned = {"input": ablation["input"], "model": model,
               "config": {**{key: ablation["config"][key] for key in ("attention", "pooling")
                             if key in ablation["config"]},
                          **{key: model[key] for key in ("stack", "prepended_token", "random_init") if key in model}}}
    check_dev_test(dev, planned, source=where, may_differ=DEV_MAY_DIFFER, relations=relations, planned=True,
                   run="the ablation")
    empty = [relation for relation in relations if not dev["relations"][relation]["total"]]
    if empty:
        having = [name for name, entry in dev["relations"].items() if entry["total"]]
        raise ProbingError(f"relation {empty[0]!r} has no pair on DEV, so no head has an accuracy on it; give "
                           f"--relations among {', '.join(having) or 'none'}", source=where)


def _source(given: dict, result: dict) -> dict:
    """A source file as the result names it: the path given, the sha256 of its bytes, when its result was made."""
    return {"path": given["path"], "sha256": given["sha256"], "created": result["created"]}


def _grid(values) -> list[list[float | None]]:
    """A [layer, head] array as a result holds it: lists of floats, null where a value is undefined."""
    return [[float(value) if np.isfinite(value) else None for value in row] for row in np.asarray(values, dtype=float)]


def _pair(low: float, high: float) -> list[float] | None:
    return [float(low), float(high)] if np.isfinite(low) and np.isfinite(high) else None
