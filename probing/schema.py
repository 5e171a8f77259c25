"""What a result file holds, field by field: the one definition every writer and reader uses.

A result file is one JSON object. Every analysis writes the same provenance
blocks (``schema_version``, ``analysis``, ``tool``, ``model``, ``input``,
``config``, ``environment``, ``timing``, ``created``) and then its own payload.
The fields are declared below as data, each with one line that says what it
holds; :func:`validate` checks a result against them (types, [layer][head]
shapes, counts between 0 and their total, replicate array shapes) before it is
written and whenever one is read, so a damaged or hand-edited file is one
clear line naming the file and the field, never a traceback deep in a merge or
a leaderboard. ``python -m probing.schema`` prints this as Markdown
(docs/results.md is made by it).

No torch here: leaderboards, plots and pages read result files without it.

>>> from probing.schema import validate
>>> validate({"schema_version": "2"}, source="r.json")
Traceback (most recent call last):
probing.errors.ProbingError: r.json: analysis: missing (which analysis made this file)
>>> encode_array(np.arange(4, dtype=np.int64).reshape(2, 2))["shape"]
[2, 2]
"""

from __future__ import annotations

import base64
import math
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from .errors import ProbingError

SCHEMA_VERSION = "2"
"""Written into every result; raised whenever a field below changes meaning or name."""

READABLE_VERSIONS = ("1", "2")
"""Versions this release reads. Version 1 files (probe results of probing 0.1) lack ``analysis``
and ``model.fingerprint``; they are read as probe results."""

ARRAY_ENCODING = "base64(zlib(little-endian C-order array))"


# ---------------------------------------------------------------------------- value specs


class Spec:
    """A rule for one JSON value; ``check`` raises :class:`Invalid` with the path of the offence."""

    describe = "a value"

    def check(self, value, path: str, shape: "Shape") -> None:
        raise NotImplementedError


class Invalid(Exception):
    def __init__(self, path: str, problem: str):
        super().__init__(f"{path}: {problem}")


@dataclass(frozen=True)
class Shape:
    """What [layer][head] grids must measure: the model's layers and the reading's heads per layer."""

    num_layers: int | None = None
    num_heads: int | None = None


def _found(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Simple(Spec):
    def __init__(self, describe: str, test: Callable[[object], bool]):
        self.describe, self._test = describe, test

    def check(self, value, path, shape):
        if not self._test(value):
            raise Invalid(path, f"expected {self.describe}, found {_found(value)}")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


STR = _Simple("a string", lambda v: isinstance(v, str))
BOOL = _Simple("true or false", lambda v: isinstance(v, bool))
INT = _Simple("an integer", _is_int)
COUNT = _Simple("a count (an integer >= 0)", lambda v: _is_int(v) and v >= 0)
NUMBER = _Simple("a finite number", _is_number)
SHARE = _Simple("a number between 0 and 1", lambda v: _is_number(v) and -1e-9 <= v <= 1 + 1e-9)
SECONDS = _Simple("a number of seconds >= 0", lambda v: _is_number(v) and v >= 0)
ANY = _Simple("any value", lambda v: True)


class Nullable(Spec):
    def __init__(self, inner: Spec):
        self.inner = inner
        self.describe = f"{inner.describe} or null"

    def check(self, value, path, shape):
        if value is not None:
            self.inner.check(value, path, shape)


class ListOf(Spec):
    def __init__(self, item: Spec, length: int | None = None):
        self.item, self.length = item, length
        self.describe = f"a list of {item.describe}"

    def check(self, value, path, shape):
        if not isinstance(value, list):
            raise Invalid(path, f"expected {self.describe}, found {_found(value)}")
        if self.length is not None and len(value) != self.length:
            raise Invalid(path, f"expected {self.length} entries, found {len(value)}")
        for index, item in enumerate(value):
            self.item.check(item, f"{path}[{index}]", shape)


class Grid(Spec):
    """A [layer][head] list of lists, as many as the model has (``Shape``)."""

    def __init__(self, item: Spec = COUNT):
        self.item = item
        self.describe = f"a [layer][head] grid of {item.describe}"

    def check(self, value, path, shape):
        rows = ListOf(ListOf(self.item, shape.num_heads), shape.num_layers)
        if not isinstance(value, list):
            raise Invalid(path, f"expected {self.describe}, found {_found(value)}")
        if shape.num_layers is not None and len(value) != shape.num_layers:
            raise Invalid(path, f"expected {shape.num_layers} layers, found {len(value)}")
        rows.check(value, path, shape)


class MapOf(Spec):
    """An object whose keys are names (relations, offsets, statistics) and whose values follow ``value``."""

    def __init__(self, value: Spec, key_doc: str = "name"):
        self.value, self.key_doc = value, key_doc
        self.describe = f"an object of {key_doc} -> {value.describe}"

    def check(self, value, path, shape):
        if not isinstance(value, dict):
            raise Invalid(path, f"expected {self.describe}, found {_found(value)}")
        for key, item in value.items():
            self.value.check(item, f"{path}.{key}", shape)


@dataclass(frozen=True)
class Field:
    spec: Spec
    doc: str
    required: bool = True


class Obj(Spec):
    """An object with declared fields; undeclared fields are allowed (other tools may add some)."""

    def __init__(self, fields: Mapping[str, Field], describe: str = "an object"):
        self.fields = dict(fields)
        self.describe = describe

    def check(self, value, path, shape):
        if not isinstance(value, dict):
            raise Invalid(path, f"expected {self.describe}, found {_found(value)}")
        for name, declared in self.fields.items():
            where = f"{path}.{name}" if path else name
            if name not in value:
                if declared.required:
                    raise Invalid(where, f"missing ({declared.doc})")
                continue
            declared.spec.check(value[name], where, shape)


class Array(Spec):
    """A compressed numeric array: ``{"shape": [...], "dtype": "int64"|"float64", "data": base64}``."""

    describe = "an encoded array"

    def __init__(self, dtype: str | None = None, rank: int | None = None):
        self.dtype, self.rank = dtype, rank

    def check(self, value, path, shape):
        if not isinstance(value, dict) or not isinstance(value.get("shape"), list) or not isinstance(value.get("data"), str):
            raise Invalid(path, f"expected {self.describe} with shape and data, found {_found(value)}")
        if not all(_is_int(n) and n >= 0 for n in value["shape"]):
            raise Invalid(f"{path}.shape", f"expected a list of sizes, found {_found(value['shape'])}")
        if self.rank is not None and len(value["shape"]) != self.rank:
            raise Invalid(f"{path}.shape", f"expected {self.rank} axes, found {len(value['shape'])}")
        try:
            decode_array(value)
        except (ValueError, zlib.error, TypeError) as error:
            raise Invalid(path, f"cannot be decoded ({error})") from None


# ---------------------------------------------------------------------------- arrays


def encode_array(array: np.ndarray) -> dict:
    """An int64 or float64 array as JSON: zlib level 1 (fast; arrays of counts compress well)."""
    array = np.asarray(array)  # (ascontiguousarray would turn a 0-d array into shape [1])
    dtype = "float64" if array.dtype.kind == "f" else "int64"
    raw = array.astype("<f8" if dtype == "float64" else "<i8").tobytes()
    return {"shape": list(array.shape), "dtype": dtype, "data": base64.b64encode(zlib.compress(raw, 1)).decode("ascii")}


def decode_array(encoded: dict) -> np.ndarray:
    """The inverse of :func:`encode_array` (files without ``dtype`` hold int64, as probing 0.1 wrote)."""
    dtype = {"int64": "<i8", "float64": "<f8"}[encoded.get("dtype", "int64")]
    raw = zlib.decompress(base64.b64decode(encoded["data"], validate=True))
    size = int(np.prod(encoded["shape"], dtype=np.int64))
    if len(raw) != size * 8:
        raise ValueError(f"holds {len(raw) // 8} numbers, its shape {encoded['shape']} needs {size}")
    return np.frombuffer(raw, dtype=dtype).reshape(encoded["shape"])


# ---------------------------------------------------------------------------- the common blocks

TOOL = Obj(
    {
        "name": Field(STR, "always 'probing'"),
        "version": Field(STR, "the package version that wrote the file"),
        "git_commit": Field(Nullable(STR), "commit of the source checkout, null for an installed package"),
    }
)

MODEL = Obj(
    {
        "name_or_path": Field(STR, "hub id or local folder, as given"),
        "name": Field(STR, "the name tables and plots use (folder name or hub id)", required=False),
        "revision": Field(Nullable(STR), "hub branch, tag or commit as asked"),
        "commit": Field(Nullable(STR), "hub commit resolved at load time, null for a local folder"),
        "fingerprint": Field(STR, "what identifies the weights: sha256 of the weight files, the hub commit, or the "
                                  "random-init recipe; resume, merge and held-out selection compare it"),
        "architecture": Field(STR, "the transformers class of the checkpoint"),
        "num_layers": Field(COUNT, "layers of the scored self-attention stack"),
        "num_heads": Field(COUNT, "heads per layer of that stack (rollout results: 1, see config.attention)"),
        "dtype": Field(STR, "weights' dtype: float32, float16 or bfloat16"),
        "device": Field(STR, "where the model ran (several, comma-separated, in a merged result)"),
        "is_causal": Field(BOOL, "measured at load time: no head attends to a later token"),
        "random_init": Field(BOOL, "the architecture with seeded random weights (the untrained control)"),
        "stack": Field(STR, "the self-attention scored: encoder, or decoder", required=False),
        "tokenizer": Field(Obj({}), "tokenizer class, fast or not, alignment method, prefix-space rule", required=False),
    }
)

INPUT = Obj(
    {
        "path": Field(STR, "the file read (a named treebank is resolved to its file)"),
        "sha256": Field(STR, "of the file's bytes"),
        "kind": Field(STR, "treebank, text, or documents (treebank windows for coreference)"),
        "pairs": Field(BOOL, "consecutive sentences paired as segments A and B", required=False),
        "units_total": Field(COUNT, "units in the file (sentences, lines, pairs or windows)"),
        "units_used": Field(COUNT, "units that reached the model (after --limit, --shard and skips)"),
        "skipped": Field(MapOf(COUNT, "reason"), "units not used, by reason (too_long, ...)"),
    }
)

ENVIRONMENT = Obj(
    {
        "python": Field(STR, "Python version"),
        "platform": Field(STR, "operating system and machine"),
        "packages": Field(MapOf(Nullable(STR), "package"), "versions of the packages that decide the numbers"),
    }
)

TIMING = Obj(
    {
        "seconds_total": Field(SECONDS, "wall-clock seconds of the run (summed over parts in a merge)"),
        "seconds_model": Field(SECONDS, "of which in the model's forward passes"),
    }
)

CONFIG = Obj(
    {
        "attention": Field(STR, "how attention was read: weights, norms or rollout", required=False),
        "batch_size": Field(COUNT, "units per batch (decides nothing but float rounding at near-ties)", required=False),
        "max_length": Field(Nullable(COUNT), "longest input in tokens; longer units were skipped", required=False),
        "limit": Field(Nullable(COUNT), "only the first N units of the input", required=False),
        "shard": Field(Nullable(Obj({"index": Field(COUNT, "from 0"), "count": Field(COUNT, "shards in all")})),
                       "this part of a split run, or null for a whole run", required=False),
        "training_step": Field(COUNT, "the training step of the scored weights (a checkpoint-STEP folder, or the "
                                      "step a training callback scored at; 0 for the random-init control)",
                               required=False),
    }
)

COMMON = {
    "schema_version": Field(STR, f"'{SCHEMA_VERSION}'; readers refuse newer versions"),
    "analysis": Field(STR, "which analysis made this file (probe, surface, heads, patterns, compare, ablation, "
                           "gradients, trees, coref, noop)"),
    "tool": Field(TOOL, "the program that wrote the file"),
    "model": Field(MODEL, "the checkpoint, identified by its fingerprint"),
    "input": Field(INPUT, "the text the model read, identified by its sha256"),
    "config": Field(CONFIG, "every option that decides the numbers"),
    "environment": Field(ENVIRONMENT, "Python, platform and package versions"),
    "timing": Field(TIMING, "how long it took"),
    "created": Field(STR, "ISO 8601 time the file was written"),
    "merged_from": Field(ListOf(Obj({"path": Field(STR, "a part's file")})), "the parts of a merged result", required=False),
}

# ---------------------------------------------------------------------------- analysis payloads

BEST = Nullable(
    Obj(
        {
            "layer": Field(COUNT, "from 0"),
            "head": Field(COUNT, "from 0"),
            "direction": Field(STR, "dep_to_head or head_to_dep"),
            "accuracy": Field(SHARE, "correct / total"),
        }
    )
)

RELATION = Obj(
    {
        "total": Field(COUNT, "(dependent, head) pairs scored"),
        "heads": Field(Obj({"dep_to_head": Field(Grid(), "correct counts"), "head_to_dep": Field(Grid(), "correct counts")}),
                       "correct predictions of every head, per direction, [layer][head] from 0"),
        "baselines": Field(MapOf(COUNT, "offset"), "correct predictions of each fixed offset (-3 .. +3)"),
        "best": Field(BEST, "the most accurate head (ties: lower layer, lower head, dep_to_head first)"),
        "best_baseline": Field(Nullable(Obj({"offset": Field(INT, "signed"), "accuracy": Field(SHARE, "")})),
                               "the most accurate offset (ties: the offset listed first)"),
        "reachable": Field(MapOf(COUNT, "direction"), "pairs each direction can get right at all (causal stacks see "
                                                      "one side)", required=False),
        "best_reachable": Field(BEST, "the best head by accuracy over reachable pairs", required=False),
    }
)

BOOTSTRAP = Nullable(
    Obj(
        {
            "replicates": Field(COUNT, "Poisson bootstrap replicates over sentences"),
            "seed": Field(INT, "seed of the per-sentence weights"),
            "method": Field(STR, "'poisson'"),
            "arrays": Field(MapOf(Array(), "array"), "replicate counts (boot_total [B, R], boot_heads [B, R, 2, L, H], "
                                                     "boot_baselines [B, R, O])"),
        }
    )
)

SHARE_GRIDS = Obj({"special": Field(Nullable(Grid(SHARE)), "to special tokens, null without such words"),
                   "punctuation": Field(Nullable(Grid(SHARE)), "to punctuation words")})

INTERVAL = Nullable(ListOf(NUMBER, 2))

NOOP_RELATION = Obj(
    {
        "words": Field(MapOf(COUNT, "group"), "words of each group: dependents, non_dependents, heads, non_heads"),
        "heads": Field(MapOf(SHARE_GRIDS, "group"), "[layer][head] mean shares from 0, per group of words and target"),
        "layers": Field(Obj({}), "per group and target, each layer's mean over heads {share, interval}"),
        "chosen": Field(Nullable(Obj({"layer": Field(COUNT, "from 0"), "head": Field(COUNT, "from 0"),
                                      "direction": Field(STR, "dep_to_head or head_to_dep"),
                                      "selection": Field(STR, "chosen on dev, or in-sample best"),
                                      "attending": Field(STR, "the group whose attention the direction reads: "
                                                              "dependents (dep_to_head) or heads (head_to_dep)"),
                                      "difference": Field(Obj({}), "the others minus the attending words per target "
                                                                   "{value, interval}")})),
                        "the relation's chosen head with {share, interval} per group and target; null when the "
                        "probe had none or merged parts chose differently"),
    }
)

NOOP = Obj(
    {
        "num_heads": Field(COUNT, "heads per layer"),
        "targets": Field(ListOf(STR), "special, punctuation"),
        "words": Field(COUNT, "words whose attention was measured"),
        "sentences": Field(COUNT, "sentences measured"),
        "replicates": Field(COUNT, "Poisson bootstrap replicates over sentences (0: no intervals)"),
        "seed": Field(INT, "seed of the per-sentence bootstrap weights"),
        "level": Field(SHARE, "coverage of every interval"),
        "relations": Field(MapOf(NOOP_RELATION, "relation"), "per relation"),
    }
)

STATE = Field(MapOf(Array(), "name"), "the accumulator's sums and counts, from which every other number of the "
                                      "payload is derived; probing merge adds them up")

PAYLOADS: dict[str, dict[str, Field]] = {
    "probe": {
        "treebank": Field(
            Obj(
                {
                    "path": Field(STR, "the treebank file"),
                    "sha256": Field(STR, "of its bytes"),
                    "sentences_total": Field(COUNT, "sentences in the file"),
                    "sentences_scored": Field(COUNT, "sentences scored (after --limit, --shard, skips)"),
                    "words_scored": Field(COUNT, "words of the scored sentences"),
                    "skipped": Field(MapOf(COUNT, "reason"), "sentences not scored, by reason"),
                    "unk_substituted_words": Field(COUNT, "words that gave no piece and were replaced by the unknown token"),
                }
            ),
            "the treebank block of the probe's contract (docs/results.md)",
        ),
        "relations": Field(MapOf(RELATION, "relation"), "per relation: counts of every head and offset"),
        "bootstrap": Field(BOOTSTRAP, "replicate counts for intervals, or null (--bootstrap 0)"),
        "heldout": Field(Obj({}), "choice on a selection treebank, reported here with intervals", required=False),
    },
    "surface": {"surface": Field(Obj({}), "per-head shares and entropies (derived from state)"), "state": STATE},
    "heads": {"heads": Field(Obj({}), "divergences, MDS map, behaviours (derived from state)"), "state": STATE},
    "patterns": {"types": Field(ListOf(ListOf(STR)), "[layer][head] pattern type"), "state": STATE},
    "compare": {"similarity": Field(Grid(NUMBER), "[layer][head] mean row cosine"), "state": STATE},
    "gradients": {"gradients": Field(Obj({}), "mean |dL/dA| by kind of key (derived from state)"), "state": STATE},
    "ablation": {"conditions": Field(ListOf(Obj({"label": Field(STR, "")})), "each condition's change"), "state": STATE},
    "trees": {"trees": Field(Obj({}), "UAS and UUAS counts per head, direction and decoding"), "state": STATE},
    "coref": {"coref": Field(Obj({}), "antecedent counts per head, direction and mention type"), "state": STATE},
    "noop": {"noop": Field(NOOP, "shares of attention to special tokens and punctuation from each relation's "
                                 "dependents and from other words (derived from state)"), "state": STATE},
}
"""Analysis -> its payload fields; every result has :data:`COMMON` besides."""

ConsistencyCheck = Callable[[dict], None]
_CHECKS: dict[str, list[ConsistencyCheck]] = {}


def consistency_check(analysis: str) -> Callable[[ConsistencyCheck], ConsistencyCheck]:
    """Register a check of one analysis's numbers that types alone cannot express (count <= total)."""

    def add(function: ConsistencyCheck) -> ConsistencyCheck:
        _CHECKS.setdefault(analysis, []).append(function)
        return function

    return add


@consistency_check("probe")
def _probe_counts_within_totals(result: dict) -> None:
    treebank = result["treebank"]
    if treebank["sentences_scored"] > treebank["sentences_total"]:
        raise Invalid("treebank.sentences_scored", f"{treebank['sentences_scored']} is more than sentences_total "
                                                   f"({treebank['sentences_total']})")
    offsets = [str(offset) for offset in result["config"].get("offsets", [])]
    for name, entry in result["relations"].items():
        total = entry["total"]
        for direction, grid in entry["heads"].items():
            for layer, row in enumerate(grid):
                for head, count in enumerate(row):
                    if count > total:
                        raise Invalid(f"relations.{name}.heads.{direction}[{layer}][{head}]",
                                      f"{count} correct of {total} pairs")
        for offset, count in entry["baselines"].items():
            if count > total:
                raise Invalid(f"relations.{name}.baselines.{offset}", f"{count} correct of {total} pairs")
        if offsets and sorted(entry["baselines"], key=int) != sorted(offsets, key=int):
            raise Invalid(f"relations.{name}.baselines", f"has offsets {list(entry['baselines'])}, config says {offsets}")
        for direction, count in (entry.get("reachable") or {}).items():
            if count > total:
                raise Invalid(f"relations.{name}.reachable.{direction}", f"{count} of {total} pairs")
    _probe_bootstrap_shapes(result)


def _probe_bootstrap_shapes(result: dict) -> None:
    boot = result.get("bootstrap")
    if not boot:
        return
    relations, model = len(result["relations"]), result["model"]
    expected = {
        "boot_total": [boot["replicates"], relations],
        "boot_heads": [boot["replicates"], relations, 2, model["num_layers"],
                       1 if result["config"].get("attention") == "rollout" else model["num_heads"]],
        "boot_baselines": [boot["replicates"], relations, len(result["config"].get("offsets", [])) or None],
    }
    for name, shape in expected.items():
        if name not in boot["arrays"]:
            raise Invalid(f"bootstrap.arrays.{name}", "missing")
        found = boot["arrays"][name]["shape"]
        if len(found) != len(shape) or any(want is not None and want != got for want, got in zip(shape, found)):
            raise Invalid(f"bootstrap.arrays.{name}.shape", f"is {found}, expected {[s if s else 'O' for s in shape]}")
        if decode_array(boot["arrays"][name]).min(initial=0) < 0:
            raise Invalid(f"bootstrap.arrays.{name}", "holds a negative count")


# ---------------------------------------------------------------------------- validation


def upgrade(result: dict) -> dict:
    """A version-1 probe result, read as version 2 (it lacks ``analysis``, ``input`` and the fingerprint)."""
    if result.get("schema_version") != "1":
        return result
    treebank = result.get("treebank") or {}
    model = dict(result.get("model") or {})
    model.setdefault("fingerprint", model.get("commit") or f"path:{model.get('name_or_path')}")
    upgraded = {
        **result,
        "analysis": "probe",
        "model": model,
        "input": {
            "path": treebank.get("path", ""),
            "sha256": treebank.get("sha256", ""),
            "kind": "treebank",
            "units_total": treebank.get("sentences_total", 0),
            "units_used": treebank.get("sentences_scored", 0),
            "skipped": treebank.get("skipped", {}),
        },
    }
    upgraded.setdefault("environment", {"python": "", "platform": "", "packages": {}})
    return upgraded


def validate(result: object, *, source: str | None = None) -> dict:
    """Check a result object against this schema; return it (version-1 files upgraded).

    Raises ProbingError naming ``source`` and the first offending field.
    """
    try:
        if not isinstance(result, dict):
            raise Invalid("(top level)", f"expected a JSON object, found {type(result).__name__}")
        version = result.get("schema_version")
        if version not in READABLE_VERSIONS:
            if isinstance(version, str) and version.isdigit() and int(version) > int(SCHEMA_VERSION):
                raise Invalid("schema_version", f"{version} was written by a newer probing (this one reads "
                                                f"{', '.join(READABLE_VERSIONS)}): upgrade probing to read it")
            raise Invalid("schema_version", f"expected one of {', '.join(READABLE_VERSIONS)}, found {_found(version)}")
        result = upgrade(result)
        analysis = result.get("analysis")
        if "analysis" not in result:
            raise Invalid("analysis", f"missing ({COMMON['analysis'].doc.split(' (')[0]})")
        if analysis not in PAYLOADS:
            raise Invalid("analysis", f"expected one of {', '.join(PAYLOADS)}, found {_found(analysis)}")
        shape = Shape()
        model = result.get("model")
        if isinstance(model, dict) and _is_int(model.get("num_layers")) and _is_int(model.get("num_heads")):
            # rollout has one map per layer: its grids have one "head" per layer
            rollout = isinstance(result.get("config"), dict) and result["config"].get("attention") == "rollout"
            shape = Shape(model["num_layers"], 1 if rollout else model["num_heads"])
        Obj({**COMMON, **PAYLOADS[analysis]}).check(result, "", shape)
        for check in _CHECKS.get(analysis, []):
            check(result)
    except Invalid as error:
        raise ProbingError(str(error), source=source) from None
    return result


# ---------------------------------------------------------------------------- documentation


def markdown() -> str:
    """The fields above as Markdown tables (docs/results.md is this text)."""
    lines = [
        "# Result files",
        "",
        "Made by `python -m probing.schema` from `probing/schema.py`, the definition every writer and reader uses.",
        f"Schema version {SCHEMA_VERSION}. Every file has the common blocks, then the payload of its `analysis`.",
        "Layers and heads are indexed from 0 in files (tables and plots count from 1). Unlisted fields may be",
        "added by later versions; listed ones keep their names and meanings until the version changes.",
        "",
        "## Common blocks",
        "",
    ]
    lines += _table(COMMON)
    for name, block in (("tool", TOOL), ("model", MODEL), ("input", INPUT), ("config (shared part)", CONFIG),
                        ("environment", ENVIRONMENT), ("timing", TIMING)):
        lines += ["", f"### `{name}`", ""] + _table(block.fields)
    for analysis, fields in PAYLOADS.items():
        lines += ["", f"## Payload of `{analysis}`", ""] + _table(fields)
    lines += ["", "### `relations.NAME` (probe)", ""] + _table(RELATION.fields)
    lines += ["", f"Arrays are stored as `{ARRAY_ENCODING}` with their `shape` and `dtype`.", ""]
    return "\n".join(lines)


def _table(fields: Mapping[str, Field]) -> list[str]:
    rows = ["| field | type | holds |", "| --- | --- | --- |"]
    for name, declared in fields.items():
        optional = "" if declared.required else " (optional)"
        rows.append(f"| `{name}` | {declared.spec.describe}{optional} | {declared.doc} |")
    return rows


if __name__ == "__main__":
    print(markdown())


@consistency_check("noop")
def _noop_groups_add_up(result: dict) -> None:
    block = result["noop"]
    for name, entry in block["relations"].items():
        for group, rest in (("dependents", "non_dependents"), ("heads", "non_heads")):
            found, other = entry["words"].get(group, 0), entry["words"].get(rest, 0)
            if found + other != block["words"]:
                raise Invalid(f"noop.relations.{name}.words", f"{group} ({found}) and {rest} ({other}) do not add "
                                                              f"up to the words ({block['words']})")
