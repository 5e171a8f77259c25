"""Add up the parts of one run (``--shard i/N`` job arrays) into the result of one run, for any analysis.

Every number a result is made from is a sum over units (integer counts, or
float sums with their counts), and shard membership depends on the unit index
alone, so the parts add up to the result one process would have written:
identical counts, float statistics equal to rounding. Before adding anything
the parts are checked to be parts *of the same run* (probing.results.identity: tool
version, analysis, model fingerprint, input bytes, every option but the
shard) and shards of one split that neither overlap nor leave a gap. Each
mismatch is one line that names the parts and the field.

Timing is the one block that is not a count of the data: the merged seconds
(each where every part has it) are sums over the parts (compute spent), by
the pass statistics' one rule (probing.results.pass_statistics), and
``merged_from`` lists each part's file, shard, device and time.

>>> shard_label({"index": 1, "count": 4})
'1/4'
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from probing.errors import ProbingError
from probing.plugins import analyses
from probing.results.identity import difference, run_identity
from probing.results.io import now_iso, read_result
from probing.results.pass_statistics import merged_timing


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
    record = analyses()[parts[0]["analysis"]]
    if record.accumulator is None:  # made from other results (importance): nothing was split, nothing adds up
        raise ProbingError(f"is a result of {record.name}, made from other result files, not by a pass: it has no "
                           "shards to merge", source=names[0])
    _check_same_run(parts, names)
    _check_shards(parts, names)
    cls = record.load("accumulator")
    counts = [cls.from_result(part) for part in parts]
    _check_same_run(parts, names, counts)
    total = counts[0]
    for part in counts[1:]:
        total.merge(part)
    first = parts[0]
    merged = {
        **first,
        "tool": {**first["tool"], "git_commit": _same(part["tool"].get("git_commit") for part in parts)},
        "model": {**first["model"], "device": _joined(part["model"].get("device") for part in parts),
                  **_paths(parts)},
        "input": _merged_counts(parts, "input"),
        "config": {**first["config"], "shard": None},
        "timing": _merged_timing(parts),
        "merged_from": [_provenance(part, name) for part, name in zip(parts, names)],
        "created": now_iso(),
    }
    merged.update(total.result())
    return cls.finish_merge(merged, parts) if hasattr(cls, "finish_merge") else merged


def _check_same_run(parts: list[dict], names: list[str], counts: list | None = None) -> None:
    """The one comparison of parts: their run identities (probing.results.identity) and, given the accumulators
    ``counts`` rebuilt from them, the options their counts were made with (an ablate --chosen run's conditions and
    heads, which its draws and its chosen heads decide). A mismatch is one line naming both files and the first
    field that differs, with both values."""
    def identity(index: int) -> dict:
        return run_identity(parts[index]) if counts is None else {"counts": counts[index].count_options()}

    first = identity(0)
    for index, name in enumerate(names[1:], start=1):
        other = identity(index)
        found = difference(first, other, labels=(names[0], name))
        if not found:
            continue
        hint = ""
        if counts is not None:  # the options that decide the field, where the accumulator names them
            mine, theirs = first["counts"], other["counts"]
            key = next((key for key in mine if isinstance(theirs, dict) and difference(mine[key], theirs.get(key))),
                       None) if isinstance(mine, dict) else None
            options = getattr(counts[0], "identity_options", {}).get(key)
            hint = f" (give every part the same {options})" if options else ""
        raise ProbingError(f"parts are not of the same run: {found}{hint}", source=name)


def _check_shards(parts: list[dict], names: list[str]) -> None:
    """Shards of one split, each once, none missing."""
    owner: dict[int, str] = {}
    count = count_name = None
    for part, name in zip(parts, names):
        shard = part["config"].get("shard")
        if shard is None:
            raise ProbingError("is a whole run, not a shard (run the parts with --shard i/N)", source=name)
        if count is None:
            count, count_name = shard["count"], name
        elif shard["count"] != count:
            raise ProbingError(
                f"parts split the input differently: {count_name} is one of {count} shards, {name} is "
                f"{shard_label(shard)}",
                source=name,
            )
        if shard["index"] in owner:
            raise ProbingError(
                f"shard {shard_label(shard)} twice: in {owner[shard['index']]} and in {name} (parts overlap)", source=name
            )
        owner[shard["index"]] = name
    missing = [f"{index}/{count}" for index in range(count) if index not in owner]
    if missing:
        raise ProbingError(f"parts do not cover the input: shard {', '.join(missing)} missing", source="PARTS")


def _merged_counts(parts: list[dict], block: str) -> dict:
    """A block whose integer fields are counts of the part (added up) and whose other fields describe
    the whole input (kept from the first part; ``units_total`` is the file's, the same in every part)."""
    merged = dict(parts[0][block])
    for part in parts[1:]:
        for key, value in part[block].items():
            if key in ("units_total", "limit", "half") or not _is_count(value) and not isinstance(value, dict):
                continue
            merged[key] = _added(merged.get(key), value)
    return merged


def _added(mine, theirs):
    if isinstance(theirs, dict) or isinstance(mine, dict):
        mine, theirs = mine or {}, theirs or {}
        return {key: _added(mine.get(key, 0), theirs.get(key, 0)) for key in {**mine, **theirs}}
    return (mine or 0) + theirs if _is_count(theirs) else mine


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _merged_timing(parts: list[dict]) -> dict:
    return {**merged_timing([part["timing"] for part in parts]), "summed_over_parts": len(parts)}


def _provenance(part: dict, name: str) -> dict:
    return {"path": name, "shard": shard_label(part["config"]["shard"]), "device": part["model"].get("device"),
            "timing": part["timing"], "created": part.get("created")}


def _same(values):
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def _paths(parts) -> dict:
    """``attention_path`` as the parts ran (each path moves counts only through float rounding at near-ties)."""
    joined = _joined(part["model"].get("attention_path") for part in parts)
    return {"attention_path": joined} if joined else {}


def _joined(values) -> str | None:
    distinct = list(dict.fromkeys(value for value in values if value is not None))
    return ",".join(distinct) if distinct else None
