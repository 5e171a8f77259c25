"""Add up the partial results of ``probing score --shard i/N`` into one result.

Every count in a result is an integer sum over sentences, and shard membership
depends on the sentence index alone (``pipeline.select_sentences``), so the
parts of a job array add up to exactly the result of one run: the same
``relations`` block, the same bootstrap replicate arrays, the same treebank
counts. Before adding anything the parts are checked to be parts *of the same
run*: same tool version, model, treebank bytes and options, shards of one
split that neither overlap nor leave a gap. Each mismatch is a
:class:`~probing.errors.ProbingError` that names the parts and the field.

Timing is the one block that is not a count of the data: ``seconds_total``
and ``seconds_model`` of the merged result are the sums over the parts
(compute spent, not the wall-clock time of the job array), and
``merged_from`` lists each part's file, shard, timing and creation time.

>>> shard_label({"index": 1, "count": 4})
'1/4'
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from pathlib import Path

from .errors import ProbingError
from .heldout import reattach_heldout
from .results import counts_from_result, encode_bootstrap, read_result, relations_summary

MODEL_IDENTITY = ("name_or_path", "revision", "commit", "architecture", "num_layers", "num_heads", "dtype",
                  "is_causal", "random_init")
"""Model fields every part must share; ``device`` may differ (spec: only float rounding at near-ties)."""

TREEBANK_IDENTITY = ("sha256", "sentences_total")
"""Treebank fields every part must share; the path may differ from machine to machine."""

TREEBANK_COPIED = ("path",)
"""Taken from the first part; every other treebank field is a count and is added."""

_OWN_BLOCKS = ("schema_version", "tool", "model", "treebank", "config", "relations", "bootstrap", "timing",
               "environment", "created", "heldout")
"""Top-level blocks this module builds; any other block must be equal in every part and is kept."""


def shard_label(shard: dict | None) -> str:
    return "whole run" if shard is None else f"{shard['index']}/{shard['count']}"


def merge_files(paths: Sequence[str | Path]) -> dict:
    """Read result files and merge them (see :func:`merge_results`)."""
    if not paths:
        raise ProbingError("give the result files of the shards to merge", source="PARTS")
    return merge_results([read_result(path) for path in paths], [str(path) for path in paths])


def merge_results(parts: Sequence[dict], names: Sequence[str]) -> dict:
    """One result from the results of the shards of a run; ``names`` label the parts in errors."""
    parts, names = list(parts), list(names)
    _check_same_run(parts, names)
    _check_shards(parts, names)
    counts = counts_from_result(parts[0])
    for part in parts[1:]:
        counts.merge(counts_from_result(part))
    first = parts[0]
    merged = {key: value for key, value in first.items() if key not in _OWN_BLOCKS}
    merged.update(
        {
            "schema_version": first["schema_version"],
            "tool": _merged_tool(parts),
            "model": {**first["model"], "device": _joined(part["model"].get("device") for part in parts)},
            "treebank": _merged_treebank(parts),
            "config": {**first["config"], "shard": None},
            "relations": relations_summary(counts),
            "bootstrap": encode_bootstrap(counts),
            "timing": _merged_timing(parts, counts.sentences),
            "environment": first.get("environment"),
            "merged_from": [_provenance(part, name) for part, name in zip(parts, names)],
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
    )
    # Parts scored with --select-on: held-out numbers of the merged counts, same DEV choice checked.
    return reattach_heldout(merged, parts)


def _check_same_run(parts: list[dict], names: list[str]) -> None:
    first, first_name = parts[0], names[0]
    for part, name in zip(parts[1:], names[1:]):
        for block, field in _identity_fields(first, part):
            mine, theirs = first.get(block, {}).get(field), part.get(block, {}).get(field)
            if mine != theirs:
                raise ProbingError(
                    f"parts are not of the same run: {block}.{field} is {mine!r} in {first_name} "
                    f"but {theirs!r} in {name}",
                    source=name,
                )
        for key in sorted((set(first) | set(part)) - set(_OWN_BLOCKS) - {"merged_from"}):
            if first.get(key) != part.get(key):
                raise ProbingError(
                    f"parts are not of the same run: their {key!r} blocks differ ({first_name} vs {name})", source=name
                )


def _identity_fields(first: dict, part: dict) -> list[tuple[str, str]]:
    """(block, field) pairs that must be equal: the whole config but the shard, and the identities."""
    config_fields = sorted((set(first["config"]) | set(part["config"])) - {"shard"})
    return (
        [("tool", "name"), ("tool", "version")]
        + [("model", field) for field in MODEL_IDENTITY]
        + [("treebank", field) for field in TREEBANK_IDENTITY]
        + [("config", field) for field in config_fields]
    )


def _check_shards(parts: list[dict], names: list[str]) -> None:
    """Shards of one split, each once, none missing."""
    owner: dict[int, str] = {}
    count = None
    for part, name in zip(parts, names):
        shard = part["config"].get("shard")
        if shard is None:
            raise ProbingError("is a whole run, not a shard (score parts with --shard i/N)", source=name)
        if count is None:
            count, count_name = shard["count"], name
        elif shard["count"] != count:
            raise ProbingError(
                f"parts split the treebank differently: {count_name} is one of {count} shards, "
                f"{name} is {shard_label(shard)}",
                source=name,
            )
        if shard["index"] in owner:
            raise ProbingError(
                f"shard {shard_label(shard)} twice: in {owner[shard['index']]} and in {name} (parts overlap)",
                source=name,
            )
        owner[shard["index"]] = name
    missing = [f"{index}/{count}" for index in range(count) if index not in owner]
    if missing:
        raise ProbingError(f"parts do not cover the treebank: shard {', '.join(missing)} missing", source="PARTS")


def _merged_tool(parts: list[dict]) -> dict:
    commits = {part["tool"].get("git_commit") for part in parts}
    return {**parts[0]["tool"], "git_commit": commits.pop() if len(commits) == 1 else None}


def _merged_treebank(parts: list[dict]) -> dict:
    merged = dict(parts[0]["treebank"])
    for part in parts[1:]:
        for key, value in part["treebank"].items():
            if key not in TREEBANK_IDENTITY + TREEBANK_COPIED:
                merged[key] = _added(merged.get(key), value, f"treebank.{key}")
    return merged


def _added(mine, theirs, where: str):
    """Counts add up; nested count blocks (``skipped``) add key by key."""
    if isinstance(theirs, dict) or isinstance(mine, dict):
        mine, theirs = mine or {}, theirs or {}
        return {key: _added(mine.get(key, 0), theirs.get(key, 0), f"{where}.{key}") for key in {**mine, **theirs}}
    if _is_count(mine) and _is_count(theirs):
        return mine + theirs
    if mine == theirs:
        return mine  # a description of the treebank, not a count
    raise ProbingError(f"parts differ in {where} ({mine!r} vs {theirs!r}), which is not a count to add up")


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _merged_timing(parts: list[dict], sentences: int) -> dict:
    seconds_total = sum(part["timing"].get("seconds_total") or 0.0 for part in parts)
    seconds_model = sum(part["timing"].get("seconds_model") or 0.0 for part in parts)
    return {
        "seconds_total": round(seconds_total, 3),
        "seconds_model": round(seconds_model, 3),
        "sentences_per_second": round(sentences / seconds_total, 2) if seconds_total else None,
        "summed_over_parts": len(parts),
    }


def _provenance(part: dict, name: str) -> dict:
    return {
        "path": name,
        "shard": shard_label(part["config"]["shard"]),
        "device": part["model"].get("device"),
        "timing": part["timing"],
        "created": part.get("created"),
    }


def _joined(values) -> str | None:
    distinct = list(dict.fromkeys(value for value in values if value is not None))
    return ",".join(distinct) if distinct else None
