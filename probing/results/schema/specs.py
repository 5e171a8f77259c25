"""What a result file holds, field by field: the one definition every writer and reader uses.

A result file is one JSON object. Every analysis writes the same provenance
blocks (``schema_version``, ``analysis``, ``tool``, ``model``, ``input``,
``config``, ``environment``, ``timing``, ``created``) and then its own payload.
The common blocks are declared below as data, each field with one line that
says what it holds, with the specs payloads are made of and the blocks several
analyses share; each analysis declares its payload and the checks its types
cannot express in its own package (``probing/analyses/NAME/payload.py``, named
by its registry record). :func:`validate` checks a result against both (types,
[layer][head] shapes, counts between 0 and their total, replicate array
shapes) before it is written and whenever one is read, so a damaged or
hand-edited file is one clear line naming the file and the field, never a
traceback deep in a merge or a leaderboard. ``python -m probing.results.schema``
prints all of it as Markdown (docs/results.md is made by it).

No torch here: leaderboards, plots and pages read result files without it.

>>> from probing.results.schema import validate
>>> validate({"schema_version": "2"}, source="r.json")
Traceback (most recent call last):
probing.errors.ProbingError: r.json: analysis: missing (which analysis made this file)
>>> encode_array(np.arange(4, dtype=np.int64).reshape(2, 2))["shape"]
[2, 2]
"""

from __future__ import annotations

import base64
import importlib
import json
import math
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from probing.errors import ProbingError

SCHEMA_VERSION = "3"
"""Written into every result; raised whenever a field below changes meaning or name."""

READABLE_VERSIONS = ("1", "2", "3")
"""Versions this release reads, each read as the current one (:func:`upgrade`). Version 1 files (probe
results of probing 0.1) lack ``analysis`` and ``model.fingerprint``; they are read as probe results. Version 2
probe files keep their replicate counts in ``bootstrap.arrays`` rather than in ``state``, where every
analysis keeps what its numbers are derived from."""

ARRAY_ENCODING = "base64(zlib(little-endian C-order array))"
PLANES_ENCODING = "base64(zlib(byte planes of the little-endian C-order array))"
LAYOUTS = ("bytes", "byte-planes")
"""How an array's bytes are ordered before zlib: as numpy lays them out (files without ``layout``), or in byte
planes (what :func:`encode_array` writes)."""

MAX_ARRAY_AXES = 8
MAX_ARRAY_NUMBERS = 1 << 31
"""An encoded array's bounds, checked on its declared shape before a byte is inflated."""

MAX_DEPTH = 64
"""Deepest nesting of objects and lists a result may have (the schema's deepest is about 10)."""

MAX_INTEGER = 2**63 - 1
"""Largest magnitude of an integer in a result (counts, seeds, shapes): an int64."""

MAX_RESULT_BYTES = 4 << 30
"""Largest result file read."""


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
    arrays: list = field(default_factory=list, compare=False)
    """(path, encoded array) of every array met: decoded only after the checks of their expected shapes."""


def shown(value) -> str:
    """A value as a refusal quotes it: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Simple(Spec):
    def __init__(self, describe: str, test: Callable[[object], bool]):
        self.describe, self._test = describe, test

    def check(self, value, path, shape):
        if not self._test(value):
            raise Invalid(path, f"expected {self.describe}, found {shown(value)}")


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
NON_NEGATIVE = _Simple("a finite number >= 0", lambda v: _is_number(v) and v >= 0)
ANY = _Simple("any value", lambda v: True)
SIGNED_SHARE = _Simple("a number between -1 and 1", lambda v: _is_number(v) and -1 - 1e-9 <= v <= 1 + 1e-9)
LEVEL = _Simple("a coverage strictly between 0 and 1", lambda v: _is_number(v) and 0 < v < 1)


class OneOf(Spec):
    """One of a fixed set of strings (a direction, a loss, a behaviour label)."""

    def __init__(self, choices: tuple[str, ...]):
        self.choices = choices
        self.describe = " or ".join(choices)

    def check(self, value, path, shape):
        if value not in self.choices:
            raise Invalid(path, f"expected {self.describe}, found {shown(value)}")


DIRECTION = OneOf(("dep_to_head", "head_to_dep"))


class Index(Spec):
    """A layer or head index from 0, below the model's count (``Shape``): a layer 99 of a 2-layer model is
    refused here, not shown as head "100-2"."""

    def __init__(self, axis: str):
        self.axis = axis
        self.describe = f"a {axis} index from 0"

    def check(self, value, path, shape):
        COUNT.check(value, path, shape)
        bound = shape.num_layers if self.axis == "layer" else shape.num_heads
        if bound is not None and value >= bound:
            raise Invalid(path, f"{self.axis} {value} does not exist: the model has {bound} {self.axis}s (from 0)")


LAYER, HEAD = Index("layer"), Index("head")


class Interval(Spec):
    """``[low, high]`` within ``[lowest, highest]``, low <= high; null where there was no bootstrap. (Whether it
    holds the estimate is not checked: a percentile bootstrap interval of few replicates may leave it out.)"""

    def __init__(self, lowest: float = 0.0, highest: float = 1.0):
        self.lowest, self.highest = lowest, highest
        self.describe = f"null or [low, high] within [{lowest:g}, {highest:g}]"

    def check(self, value, path, shape):
        if value is None:
            return
        ListOf(NUMBER, 2).check(value, path, shape)
        low, high = value
        if not self.lowest - 1e-9 <= low <= high <= self.highest + 1e-9:
            raise Invalid(path, f"{shown(value)} is not an interval [low <= high] within "
                                f"[{self.lowest:g}, {self.highest:g}]")


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
            raise Invalid(path, f"expected {self.describe}, found {shown(value)}")
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
            raise Invalid(path, f"expected {self.describe}, found {shown(value)}")
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
            raise Invalid(path, f"expected {self.describe}, found {shown(value)}")
        for key, item in value.items():
            self.value.check(item, f"{path}.{key}", shape)


@dataclass(frozen=True)
class Section:
    """A block of a payload that docs/results.md shows in a table of its own, under its path in the result.

    A payload module lists its sections in ``SECTIONS``, beside its ``PAYLOAD``.

    >>> Section("relations.NAME.causal", Obj({}), note="decoders").heading("probe")
    '### `relations.NAME.causal` (probe, decoders)'
    """

    path: str
    block: "Obj"
    note: str = ""
    """Who has the block, beside the analysis ("decoders")."""

    def heading(self, analysis: str) -> str:
        return f"### `{self.path}` ({', '.join(part for part in (analysis, self.note) if part)})"


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
            raise Invalid(path, f"expected {self.describe}, found {shown(value)}")
        for name, declared in self.fields.items():
            where = f"{path}.{name}" if path else name
            if name not in value:
                if declared.required:
                    raise Invalid(where, f"missing ({declared.doc})")
                continue
            declared.spec.check(value[name], where, shape)


class Array(Spec):
    """A compressed numeric array: ``{"shape": [...], "dtype": "int64"|"float64"|"float32", "layout":
    "byte-planes", "data": base64}`` (``layout`` absent in older files)."""

    describe = "an encoded array"

    def __init__(self, dtype: str | None = None, rank: int | None = None):
        self.dtype, self.rank = dtype, rank

    def check(self, value, path, shape):
        if not isinstance(value, dict) or not isinstance(value.get("shape"), list) or not isinstance(value.get("data"), str):
            raise Invalid(path, f"expected {self.describe} with shape and data, found {shown(value)}")
        if not all(_is_int(n) and n >= 0 for n in value["shape"]):
            raise Invalid(f"{path}.shape", f"expected a list of sizes, found {shown(value['shape'])}")
        if self.rank is not None and len(value["shape"]) != self.rank:
            raise Invalid(f"{path}.shape", f"expected {self.rank} axes, found {len(value['shape'])}")
        if len(value["shape"]) > MAX_ARRAY_AXES or math.prod(value["shape"]) > MAX_ARRAY_NUMBERS:
            raise Invalid(f"{path}.shape", f"{shown(value['shape'])} is larger than any result holds (at most "
                                           f"{MAX_ARRAY_AXES} axes and {MAX_ARRAY_NUMBERS} numbers)")
        shape.arrays.append((path, value))


def decoded(encoded: dict, path: str) -> np.ndarray:
    """:func:`decode_array`, its failure an :class:`Invalid` at ``path``."""
    try:
        return decode_array(encoded)
    except (ValueError, zlib.error, TypeError) as error:
        raise Invalid(path, f"cannot be decoded ({error})") from None


# ---------------------------------------------------------------------------- arrays


_LAYOUT = {"int64": "<i8", "float64": "<f8", "float32": "<f4"}
"""Each stored dtype's little-endian layout."""


def encode_array(array: np.ndarray, layout: str = "byte-planes") -> dict:
    """An int64, float64 or float32 array as JSON: its bytes in byte planes, then zlib at level 6 (``layout=
    "bytes"``: as numpy lays them out, as files before byte planes held them; for comparisons and tests).

    Counts and replicate sums are small numbers in 8 bytes: in byte planes (every number's lowest byte,
    then every second byte, ...; HDF5 and Blosc call it the shuffle filter) the high planes are long runs of
    zeros, so zlib finds them at once: over the committed results, two thirds of the size and 4 times as fast
    as zlib over the bytes as numpy lays them out (benchmarks/RESULTS.md, "Result arrays").
    Integers are stored as int64, float32 arrays as float32 (trained float32 weights, exactly, in half the
    bytes), other floats as float64.

    >>> encoded = encode_array(np.array([[1, 2], [3, 258]]))
    >>> encoded["layout"], decode_array(encoded).tolist()
    ('byte-planes', [[1, 2], [3, 258]])
    >>> decode_array(encode_array(np.array([0.1], dtype=np.float32))).dtype.name
    'float32'
    """
    array = np.asarray(array)  # (ascontiguousarray would turn a 0-d array into shape [1])
    dtype = ("float32" if array.dtype == np.float32 else "float64") if array.dtype.kind == "f" else "int64"
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r} (known: {', '.join(LAYOUTS)})")
    numbers = np.ascontiguousarray(array.astype(_LAYOUT[dtype])).reshape(-1)  # [number]
    if layout == "bytes":
        return {"shape": list(array.shape), "dtype": dtype,
                "data": base64.b64encode(zlib.compress(numbers.tobytes(), 6)).decode("ascii")}
    planes = numbers.view(np.uint8).reshape(numbers.size, numbers.itemsize).T  # [byte, number]
    return {"shape": list(array.shape), "dtype": dtype, "layout": layout,
            "data": base64.b64encode(zlib.compress(np.ascontiguousarray(planes).tobytes(), 6)).decode("ascii")}


def decode_array(encoded: dict) -> np.ndarray:
    """The inverse of :func:`encode_array` (files without ``dtype`` hold int64, as probing 0.1 wrote; files
    without ``layout`` hold the bytes as numpy lays them out, as results of schema versions 1 to 3 before byte
    planes did)."""
    name = encoded.get("dtype", "int64")
    if name not in _LAYOUT:
        raise ValueError(f"unknown dtype {name!r} (known: {', '.join(_LAYOUT)})")
    layout = encoded.get("layout", "bytes")
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r} (known: {', '.join(LAYOUTS)})")
    dtype = np.dtype(_LAYOUT[name])
    size = math.prod(encoded["shape"])  # Python integers: a shape of 2**70 cannot overflow
    if size > MAX_ARRAY_NUMBERS:
        raise ValueError(f"its shape {encoded['shape']} needs {size} numbers, more than any result holds")
    # Inflate no further than the shape needs: 3 MB of zeros must not become 3 GiB before the size check.
    inflater = zlib.decompressobj()
    raw = inflater.decompress(base64.b64decode(encoded["data"], validate=True), size * dtype.itemsize + 1)
    if len(raw) != size * dtype.itemsize or inflater.unconsumed_tail:
        found = "more" if len(raw) > size * dtype.itemsize or inflater.unconsumed_tail else len(raw) // dtype.itemsize
        raise ValueError(f"holds {found} numbers, its shape {encoded['shape']} needs {size}")
    if layout == "byte-planes":
        planes = np.frombuffer(raw, dtype=np.uint8).reshape(dtype.itemsize, size)  # [byte, number]
        raw = np.ascontiguousarray(planes.T).tobytes()
    return np.frombuffer(raw, dtype=dtype).reshape(encoded["shape"])


# ---------------------------------------------------------------------------- the common blocks

TOOL = Obj(
    {
        "name": Field(STR, "always 'probing'"),
        "version": Field(STR, "the package version that wrote the file"),
        "git_commit": Field(Nullable(STR), "commit of the source checkout, null for an installed package"),
    }
)

TOKENIZER = Obj(
    {
        "class": Field(STR, "the transformers tokenizer class"),
        "fast": Field(BOOL, "a Rust (fast) tokenizer"),
        "alignment": Field(STR, "how pieces were matched to words"),
        "prefix_space": Field(Nullable(STR), "how a byte-level BPE tokenizer gets a space before each word, or null"),
    }
)

HALF = Obj(
    {
        "half": Field(OneOf(("even", "odd")), "the sentences of an even or of an odd 0-based index"),
        "limit": Field(Nullable(COUNT), "the --limit the half was taken of, or null (the whole file)"),
        "rule": Field(STR, "the rule in words"),
    }
)

MODEL = Obj(
    {
        "name_or_path": Field(STR, "hub id or local folder, as given"),
        "name": Field(STR, "the name tables and plots use (folder name or hub id)", required=False),
        "revision": Field(Nullable(STR), "hub branch, tag or commit as asked"),
        "commit": Field(Nullable(STR), "hub commit resolved at load time, null for a local folder"),
        "fingerprint": Field(STR, "what identifies the model: sha256 of its weight, config and tokenizer files, "
                                  "the hub commit, or the random-init recipe; resume, merge and held-out selection "
                                  "compare it"),
        "architecture": Field(STR, "the transformers class of the checkpoint"),
        "num_layers": Field(COUNT, "layers of the scored self-attention stack"),
        "num_heads": Field(COUNT, "heads per layer of that stack (rollout results: 1, see config.attention)"),
        "dtype": Field(STR, "weights' dtype: float32, float16 or bfloat16"),
        "device": Field(STR, "where the model ran (several, comma-separated, in a merged result or for a model "
                             "spread by --device-map)"),
        "attention_path": Field(STR, "how attention was read: fused (the forward pass ran SDPA, each layer's weights "
                                     "rebuilt from its queries and keys), eager (each layer's weights taken from its "
                                     "attention module) or returned (every layer's, as the model returns them); "
                                     "several, comma-separated, in a merged result", required=False),
        "is_causal": Field(BOOL, "measured at load time: no head attends to a later token"),
        "random_init": Field(BOOL, "the architecture with seeded random weights (the untrained control)"),
        "stack": Field(STR, "the self-attention scored: encoder, or decoder", required=False),
        "tokenizer": Field(TOKENIZER, "tokenizer class, fast or not, alignment method, prefix-space rule",
                           required=False),
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
        "half": Field(HALF, "the half of a one-split treebank read (even or odd), its --limit and the rule",
                      required=False),
        "tokenized_apart_words": Field(COUNT, "words of running text that shared a piece with a neighbour and "
                                              "were tokenized on their own (absent: none)", required=False),
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
        "seconds_total": Field(SECONDS, "wall-clock seconds of the run's passes: a held-out run's DEV and TEST "
                                        "passes together (summed over parts in a merge)"),
        "seconds_model": Field(SECONDS, "of which in the model's forward passes"),
        "seconds_waiting_for_input": Field(SECONDS, "of which the model waited for its next batch: reading, "
                                                    "tokenising and batching not hidden behind it (absent in older "
                                                    "files)", required=False),
        "seconds_selecting_on_dev": Field(SECONDS, "of which the DEV pass of a held-out run that scored DEV itself "
                                                   "(absent otherwise)", required=False),
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
                           "gradients, trees, coref, noop, pairs)"),
    "tool": Field(TOOL, "the program that wrote the file"),
    "model": Field(MODEL, "the checkpoint, identified by its fingerprint"),
    "input": Field(INPUT, "the text the model read, identified by its sha256"),
    "config": Field(CONFIG, "every option that decides the numbers"),
    "environment": Field(ENVIRONMENT, "Python, platform and package versions"),
    "timing": Field(TIMING, "how long it took"),
    "created": Field(STR, "ISO 8601 time the file was written"),
    "merged_from": Field(ListOf(Obj({"path": Field(STR, "a part's file")})), "the parts of a merged result", required=False),
}

# ---------------------------------------------------------------------------- what several payloads share

BEST = Nullable(
    Obj(
        {
            "layer": Field(LAYER, "from 0"),
            "head": Field(HEAD, "from 0"),
            "direction": Field(DIRECTION, "dep_to_head or head_to_dep"),
            "accuracy": Field(SHARE, "correct / total"),
        }
    )
)
"""A relation's (probe) or a mention type's (coref) most accurate head, or null."""

CHOSEN_HEAD = {"layer": Field(LAYER, "from 0"), "head": Field(HEAD, "from 0"),
               "direction": Field(DIRECTION, "dep_to_head or head_to_dep")}
HEAD_REPORT = Nullable(Obj({**CHOSEN_HEAD, "accuracy": Field(SHARE, "correct / pairs here"),
                            "interval": Field(Interval(), "bootstrap interval, or null")}))
SHARE_REPORT = Obj({"accuracy": Field(SHARE, "correct / pairs here"),
                    "interval": Field(Interval(), "bootstrap interval, or null")})
DIFFERENCE = Obj({"value": Field(SIGNED_SHARE, "head minus baseline accuracy"),
                  "interval": Field(Interval(-1.0, 1.0), "paired bootstrap interval, or null"),
                  "p_not_better": Field(Nullable(SHARE), "share of replicates where the head is not better")})
SELECT_ON_MODEL = Obj({"fingerprint": Field(Nullable(STR), "the model chosen with")})
"""The blocks of a head chosen on one input and measured on another, as the probe's and coref's held-out
reports both write them."""


TOKEN_NAMES = Field(Obj({"first_special": Field(STR, "[CLS], <s>, or 'first special'"),
                         "separator": Field(STR, "[SEP], </s>, or 'separator'")}),
                    "how tables name the first special token and the separators (surface, heads, gradients)")

STATE = Field(MapOf(Array(), "name"), "the accumulator's sums and counts, from which every other number of the "
                                      "payload is derived; probing merge adds them up")

# ---------------------------------------------------------------------------- validation


def upgrade(result: dict) -> dict:
    """A result of any readable version, read as the current one: a version-1 probe result gains ``analysis``,
    ``input`` and the fingerprint; then the analysis's own ``upgrade`` (its registry record) reads its payload
    as this version's. A current result comes back as it is.

    >>> upgrade({"schema_version": SCHEMA_VERSION, "analysis": "toy"})["schema_version"] == SCHEMA_VERSION
    True
    """
    version = result.get("schema_version")
    if version == SCHEMA_VERSION:
        return result
    if version == "1":
        result = _from_version_1(result)
    analysis = result.get("analysis")
    from probing.plugins import analyses

    registry = analyses()
    if isinstance(analysis, str) and analysis in registry.names() and registry[analysis].upgrade is not None:
        result = registry[analysis].load("upgrade")(result, version)
    return {**result, "schema_version": SCHEMA_VERSION}


def _from_version_1(result: dict) -> dict:
    """A version-1 probe result with the blocks version 2 added (``analysis``, ``input``, the fingerprint)."""
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


class _NotANumber(ValueError):
    pass


def _refuse_constant(name: str):
    raise _NotANumber(name)


def parse_json(text: str, *, source: str) -> object:
    """JSON text as Python values, with the bounds every reader needs before it looks inside: no ``NaN`` or
    ``Infinity`` (not JSON, and no count or accuracy is one), no integer of more digits than Python reads, no
    nesting deeper than Python's parser survives. What :func:`validate` checks comes next.

    >>> parse_json('{"accuracy": NaN}', source="r.json")
    Traceback (most recent call last):
    probing.errors.ProbingError: r.json: not a JSON result file (it holds NaN, which is not a number a result may hold)
    """
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except _NotANumber as error:
        problem = f"it holds {error}, which is not a number a result may hold"
    except json.JSONDecodeError as error:
        problem = f"line {error.lineno}: {error.msg}"
    except RecursionError:
        problem = f"nested deeper than a result can be (at most {MAX_DEPTH} levels)"
    except ValueError as error:  # Python's limit on the digits of an integer (4300)
        problem = f"a number is too long to read ({str(error).split(';')[0]})"
    raise ProbingError(f"not a JSON result file ({problem})", source=source) from None


def check_bounds(value: object) -> None:
    """Every value of a result within bounds, whatever block it is in (declared or not): nesting at most
    :data:`MAX_DEPTH`, integers within int64, floats finite. Iterative, so a deep file cannot exhaust the stack."""
    pending = [(value, "", 0)]
    while pending:
        item, path, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise Invalid(path or "(top level)", f"nested deeper than a result can be (at most {MAX_DEPTH} levels)")
        if isinstance(item, dict):
            pending += [(child, f"{path}.{key}" if path else str(key), depth + 1) for key, child in item.items()]
        elif isinstance(item, list):
            pending += [(child, f"{path}[{index}]", depth + 1) for index, child in enumerate(item)]
        elif isinstance(item, float) and not math.isfinite(item):
            raise Invalid(path, f"{item} is not a number a result may hold")
        elif _is_int(item) and abs(item) > MAX_INTEGER:
            raise Invalid(path, f"{shown(item)} is larger than any number a result holds")


def validate(result: object, *, source: str | None = None) -> dict:
    """Check a result object against this schema; return it (version-1 files upgraded).

    Raises ProbingError naming ``source`` and the first offending field.
    """
    try:
        if not isinstance(result, dict):
            raise Invalid("(top level)", f"expected a JSON object, found {type(result).__name__}")
        check_bounds(result)
        version = result.get("schema_version")
        if version not in READABLE_VERSIONS:
            if isinstance(version, str) and version.isdigit() and int(version) > int(SCHEMA_VERSION):
                raise Invalid("schema_version", f"{version} was written by a newer probing (this one reads "
                                                f"{', '.join(READABLE_VERSIONS)}): upgrade probing to read it")
            raise Invalid("schema_version", f"expected one of {', '.join(READABLE_VERSIONS)}, found {shown(version)}")
        result = upgrade(result)
        analysis = result.get("analysis")
        if "analysis" not in result:
            raise Invalid("analysis", f"missing ({COMMON['analysis'].doc.split(' (')[0]})")
        payload, checks = _payload_of(analysis)
        shape = Shape()
        model = result.get("model")
        if isinstance(model, dict) and _is_int(model.get("num_layers")) and _is_int(model.get("num_heads")):
            shape = Shape(model["num_layers"], heads_per_layer(result))
        Obj({**COMMON, **payload}).check(result, "", shape)
        for check in checks:  # the shapes an analysis expects, before any array is inflated
            check(result)
        for path, encoded in shape.arrays:
            decoded(encoded, path)
    except Invalid as error:
        raise ProbingError(str(error), source=source) from None
    return result


def heads_per_layer(result: dict) -> int:
    """The heads of each layer a result's [layer][head] grids hold: the model's, or one under rollout (one map
    per layer).

    >>> heads_per_layer({"model": {"num_heads": 12}, "config": {"attention": "rollout"}})
    1
    """
    config = result.get("config")
    rollout = isinstance(config, dict) and config.get("attention") == "rollout"
    return 1 if rollout else result["model"]["num_heads"]


def _payload_of(analysis) -> tuple[Mapping[str, Field], list[Callable[[dict], None]]]:
    """The payload schema and consistency checks of a registered analysis (a plug-in's too, from its record)."""
    from probing.plugins import analyses

    registry = analyses()
    if not isinstance(analysis, str) or analysis not in registry.names():
        raise Invalid("analysis", f"expected one of {', '.join(registry.names())}, found {shown(analysis)}")
    record = registry[analysis]
    return record.load("payload"), record.load_checks()


REFERENCE = Obj({
    "reference": Field(Obj({
        "model": Field(STR, "the model the paper measured"),
        "short_citation": Field(STR, "what the table's rows say: Clark et al. 2019, Table 1"),
        "citation": Field(STR, "the full citation, in the table's notes"),
        "treebank": Field(STR, "the data the figures are on"),
        "selection": Field(STR, "in-sample or held-out", required=False),
        "note": Field(STR, "what differs from this tool's numbers", required=False),
        "analysis": Field(OneOf(("probe",)), "the table the figures join (only probe's take references)",
                          required=False),
        "relations": Field(MapOf(Obj({
            "layer": Field(COUNT, "from 0", required=False),
            "head": Field(COUNT, "from 0", required=False),
            "direction": Field(DIRECTION, "dep_to_head or head_to_dep", required=False),
            "accuracy": Field(SHARE, "as a share (0.868), not a percentage"),
            "baseline": Field(Obj({"offset": Field(INT, "signed"), "accuracy": Field(SHARE, "as a share")}),
                              "the best offset's figure", required=False),
        }), "relation"), "per relation, the figures quoted"),
    }), "figures quoted from a paper (leaderboard --reference)"),
})
"""A reference file of quoted figures: ``leaderboard --reference FILE`` validates it like a result."""


def validate_reference(data: object, *, source: str | None = None) -> dict:
    """Check a reference file's figures; return them.

    >>> validate_reference({"reference": {"model": "BERT"}}, source="ref.json")
    Traceback (most recent call last):
    probing.errors.ProbingError: ref.json: reference.short_citation: missing (what the table's rows say: Clark et al. 2019, Table 1)
    """
    try:
        if not isinstance(data, dict):
            raise Invalid("(top level)", f"expected a JSON object, found {type(data).__name__}")
        check_bounds(data)
        REFERENCE.check(data, "", Shape())
    except Invalid as error:
        raise ProbingError(str(error), source=source) from None
    return data


# ---------------------------------------------------------------------------- documentation


def markdown() -> str:
    """The fields above as Markdown tables (docs/results.md is this text)."""
    lines = [
        "# Result files",
        "",
        "Made by `python -m probing.results.schema` from `probing/results/schema.py` (the common blocks) and each "
        "analysis's `payload.py` (its payload), the definition every writer and reader uses.",
        f"Schema version {SCHEMA_VERSION}. Every file has the common blocks, then the payload of its `analysis`.",
        f"Files of versions {', '.join(v for v in READABLE_VERSIONS if v != SCHEMA_VERSION)} are read as this one: "
        "version-1 probe results gain the blocks version 2 added, and version-2 probe results, which kept",
        "their replicate sums in `bootstrap.arrays`, have their counts and those sums moved into `state`.",
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
    for analysis, fields, sections in _payloads_of_packages():
        lines += ["", f"## Payload of `{analysis}`", ""] + _table(fields)
        for section in sections:
            lines += ["", section.heading(analysis), ""] + _table(section.block.fields)
    lines += ["", "## Reference files (`leaderboard --reference`)", ""] + _table(REFERENCE.fields["reference"].spec.fields)
    lines += ["", f"Arrays are stored as `{PLANES_ENCODING}` with their `shape`, `dtype` and `layout: byte-planes`: "
                  "every number's first byte, then every second byte, and so on (small counts in 8 bytes leave long "
                  "runs of zero bytes that zlib packs at once). Files written before byte planes have no `layout` "
                  f"and hold `{ARRAY_ENCODING}`.", ""]
    lines += [
        "## What is validated",
        "",
        "Every result is checked when it is written and whenever any command reads it (leaderboard, plot, merge,",
        "transfer, explore, `heads --probe`, `score`/`trees`/`coref --select-on`), and reference files the same way,",
        "before a number is used, an array inflated or a table built. A file that fails is one line naming the file",
        "and the field, exit status 2. Beyond the tables above:",
        "",
        "- the JSON itself: no `NaN` or `Infinity`, no integer of more than 4300 digits or beyond int64, nesting at",
        f"  most {MAX_DEPTH} levels, at most {MAX_RESULT_BYTES >> 30} GiB;",
        "- accuracies and shares between 0 and 1 (they are shares in files; tables show percentages), differences",
        "  between -1 and 1, coverage levels strictly between 0 and 1;",
        "- intervals are `[low, high]` with low <= high, within those bounds (whether an interval holds its estimate",
        "  is not checked: a percentile bootstrap interval of few replicates may leave it out);",
        "- layer and head indices of chosen heads (in-sample and held-out) exist in the model the result records",
        "  (rollout results: one head per layer); [layer][head] grids have the model's shape;",
        "- counts are integers >= 0 and at most their totals; a held-out block has the result's relations (coref:",
        "  its mention types) and their pair counts;",
        f"- encoded arrays: at most {MAX_ARRAY_AXES} axes and {MAX_ARRAY_NUMBERS} numbers by their declared shape,",
        "  the shape an analysis expects (bootstrap replicates, coref state) checked before any byte is inflated, and",
        "  inflated no further than the shape needs.",
        "",
    ]
    return "\n".join(lines)


def _payloads_of_packages() -> list[tuple[str, Mapping[str, Field], tuple["Section", ...]]]:
    """Each built-in analysis's name, payload and sections (its payload module's ``SECTIONS``), in the order
    ``probing --help`` lists their commands (an analysis without a command last); plug-ins document themselves."""
    from probing.plugins import analyses

    registry = analyses()
    built_in = [registry[name] for name in registry.names() if registry[name].payload.startswith("probing.analyses.")]
    built_in.sort(key=lambda record: (min((command.order for command in record.commands), default=math.inf),
                                      record.name))
    return [(record.name, record.load("payload"),
             getattr(importlib.import_module(record.payload.partition(":")[0]), "SECTIONS", ()))
            for record in built_in]


def _table(fields: Mapping[str, Field]) -> list[str]:
    rows = ["| field | type | holds |", "| --- | --- | --- |"]
    for name, declared in fields.items():
        optional = "" if declared.required else " (optional)"
        rows.append(f"| `{name}` | {declared.spec.describe}{optional} | {declared.doc} |")
    return rows


if __name__ == "__main__":
    print(markdown())
