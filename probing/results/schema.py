"""What a result file holds, field by field: the one definition every writer and reader uses.

A result file is one JSON object. Every analysis writes the same provenance
blocks (``schema_version``, ``analysis``, ``tool``, ``model``, ``input``,
``config``, ``environment``, ``timing``, ``created``) and then its own payload.
The fields are declared below as data, each with one line that says what it
holds; :func:`validate` checks a result against them (types, [layer][head]
shapes, counts between 0 and their total, replicate array shapes) before it is
written and whenever one is read, so a damaged or hand-edited file is one
clear line naming the file and the field, never a traceback deep in a merge or
a leaderboard. ``python -m probing.results.schema`` prints this as Markdown
(docs/results.md is made by it).

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
import json
import math
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from probing.errors import ProbingError

SCHEMA_VERSION = "2"
"""Written into every result; raised whenever a field below changes meaning or name."""

READABLE_VERSIONS = ("1", "2")
"""Versions this release reads. Version 1 files (probe results of probing 0.1) lack ``analysis``
and ``model.fingerprint``; they are read as probe results."""

ARRAY_ENCODING = "base64(zlib(little-endian C-order array))"

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
            raise Invalid(path, f"expected {self.describe}, found {_found(value)}")


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
            raise Invalid(path, f"{_found(value)} is not an interval [low <= high] within "
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
    """A compressed numeric array: ``{"shape": [...], "dtype": "int64"|"float64"|"float32", "data": base64}``."""

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
        if len(value["shape"]) > MAX_ARRAY_AXES or math.prod(value["shape"]) > MAX_ARRAY_NUMBERS:
            raise Invalid(f"{path}.shape", f"{_found(value['shape'])} is larger than any result holds (at most "
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


def encode_array(array: np.ndarray) -> dict:
    """An int64, float64 or float32 array as JSON: zlib at its default level 6 (on a decoder's 500 bootstrap
    replicates, 5% smaller than level 1, which keeps such a result under 5 MB; 0.6 s for 22 MB of counts).

    Integers are stored as int64, float32 arrays as float32 (trained float32 weights, exactly, in half the
    bytes), other floats as float64.

    >>> decode_array(encode_array(np.array([0.1], dtype=np.float32))).dtype.name
    'float32'
    """
    array = np.asarray(array)  # (ascontiguousarray would turn a 0-d array into shape [1])
    dtype = ("float32" if array.dtype == np.float32 else "float64") if array.dtype.kind == "f" else "int64"
    raw = array.astype(_LAYOUT[dtype]).tobytes()
    return {"shape": list(array.shape), "dtype": dtype, "data": base64.b64encode(zlib.compress(raw, 6)).decode("ascii")}


def decode_array(encoded: dict) -> np.ndarray:
    """The inverse of :func:`encode_array` (files without ``dtype`` hold int64, as probing 0.1 wrote)."""
    name = encoded.get("dtype", "int64")
    if name not in _LAYOUT:
        raise ValueError(f"unknown dtype {name!r} (known: {', '.join(_LAYOUT)})")
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

# ---------------------------------------------------------------------------- analysis payloads

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

CAUSAL_BEST = Nullable(
    Obj(
        {
            "layer": Field(LAYER, "from 0"),
            "head": Field(HEAD, "from 0"),
            "direction": Field(OneOf(("causal",)), "causal"),
            "accuracy": Field(SHARE, "correct / total"),
        }
    )
)

CAUSAL = Obj(
    {
        "heads": Field(Grid(), "correct counts of every head in the causal direction, [layer][head] from 0: the "
                               "later word of a pair attends most, among earlier words, to the earlier one"),
        "best": Field(CAUSAL_BEST, "the most accurate head in the causal direction (ties: lower layer, lower head); "
                                   "direction 'causal'"),
        "head_first": Field(COUNT, "pairs whose head precedes the dependent (what dep_to_head can reach; "
                                   "head_to_dep reaches the others)"),
    },
    "the causal direction of a decoder",
)

INTERVAL = Nullable(ListOf(SHARE, 2))

PAIRS_PARADIGM = Obj(
    {
        "field": Field(STR, "BLiMP's field (syntax, morphology, semantics, syntax_semantics, ...)"),
        "pairs": Field(COUNT, "pairs scored (the first --limit of the file, in file order)"),
        "accuracy": Field(SHARE, "share of pairs with log p(good) > log p(bad); a tie is wrong"),
        "interval": Field(INTERVAL, "95% percentile bootstrap interval over pairs, or null (--bootstrap 0)"),
        "right": Field(ListOf(BOOL), "each pair, in file order: right or not"),
        "log_p_good": Field(ListOf(NUMBER), "each pair's log p(grammatical sentence), natural log"),
        "log_p_bad": Field(ListOf(NUMBER), "each pair's log p(ungrammatical sentence)"),
    }
)

PAIRS_SUMMARY = Obj(
    {
        "paradigms": Field(COUNT, "paradigms in it"),
        "pairs": Field(COUNT, "pairs in it"),
        "accuracy": Field(Nullable(SHARE), "a field's: share right over its pairs; overall: the mean of the "
                                           "paradigm accuracies (BLiMP's convention)"),
        "interval": Field(INTERVAL, "95% percentile bootstrap interval (pairs resampled within each paradigm)"),
    }
)

PAIRS = Obj(
    {
        "overall": Field(PAIRS_SUMMARY, "the mean of the paradigm accuracies"),
        "fields": Field(MapOf(PAIRS_SUMMARY, "field"), "per BLiMP field"),
        "paradigms": Field(MapOf(PAIRS_PARADIGM, "UID"), "per paradigm"),
        "bootstrap": Field(Obj({"replicates": Field(COUNT, "0: no intervals"), "seed": Field(INT, ""),
                                "level": Field(SHARE, "")}), "how the intervals were drawn"),
        "context_token": Field(STR, "the one token before every sentence (BOS, else EOS)"),
    }
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
        "causal": Field(CAUSAL, "decoders only: the causal direction (each pair scored by its later word)",
                        required=False),
    }
)

BOOTSTRAP = Nullable(
    Obj(
        {
            "replicates": Field(COUNT, "Poisson bootstrap replicates over sentences"),
            "seed": Field(INT, "seed of the per-sentence weights"),
            "method": Field(STR, "'poisson'"),
            "arrays": Field(MapOf(Array(), "array"), "replicate counts (boot_total [B, R], boot_heads [B, R, 2, L, H], "
                                                     "boot_baselines [B, R, O]; decoders also boot_causal "
                                                     "[B, R, L, H])"),
        }
    )
)

_CHOSEN_HEAD = {"layer": Field(LAYER, "from 0"), "head": Field(HEAD, "from 0"),
                "direction": Field(DIRECTION, "dep_to_head or head_to_dep")}
_HEAD_REPORT = Nullable(Obj({**_CHOSEN_HEAD, "accuracy": Field(SHARE, "correct / pairs here"),
                             "interval": Field(Interval(), "bootstrap interval, or null")}))
_SHARE_REPORT = Obj({"accuracy": Field(SHARE, "correct / pairs here"),
                     "interval": Field(Interval(), "bootstrap interval, or null")})
_DIFFERENCE = Obj({"value": Field(SIGNED_SHARE, "head minus baseline accuracy"),
                   "interval": Field(Interval(-1.0, 1.0), "paired bootstrap interval, or null"),
                   "p_not_better": Field(Nullable(SHARE), "share of replicates where the head is not better")})
_PROBE_REPORT = Obj({
    "head": Field(_HEAD_REPORT, "the chosen head's accuracy here, or null"),
    "baseline": Field(Nullable(Obj({"offset": Field(INT, "signed"), **_SHARE_REPORT.fields})),
                      "the chosen offset's accuracy here, or null"),
    "difference": Field(Nullable(_DIFFERENCE), "head minus baseline, or null"),
})
_SELECT_ON_MODEL = Obj({"fingerprint": Field(Nullable(STR), "the model chosen with")})

PROBE_HELDOUT = Obj({
    "level": Field(LEVEL, "coverage of the intervals"),
    "replicates": Field(COUNT, "bootstrap replicates (0: no intervals)"),
    "seed": Field(Nullable(INT), "seed of the replicates"),
    "select_on": Field(Obj({"treebank": Field(Obj({"path": Field(STR, ""), "sha256": Field(STR, "")}),
                                              "the DEV treebank"),
                            "model": Field(_SELECT_ON_MODEL, "the DEV run's model")}), "the DEV run chosen on"),
    "report_on": Field(Obj({"path": Field(STR, ""), "sha256": Field(STR, "")}), "this result's treebank"),
    "relations": Field(MapOf(Obj({
        "pairs": Field(COUNT, "pairs of the relation here"),
        "dev": Field(Obj({"pairs": Field(COUNT, "pairs on DEV"),
                          "head": Field(Nullable(Obj({**_CHOSEN_HEAD, "accuracy": Field(SHARE, "on DEV"),
                                                      "ties": Field(COUNT, "heads tied on DEV")})), "or null"),
                          "baseline": Field(Nullable(Obj({"offset": Field(INT, "signed"),
                                                          "accuracy": Field(SHARE, "on DEV"),
                                                          "ties": Field(COUNT, "offsets tied")})), "or null")}),
                     "what DEV chose"),
        "heldout": Field(_PROBE_REPORT, "DEV's choice measured here"),
        "in_sample": Field(_PROBE_REPORT, "this treebank's own best, for comparison"),
    }), "relation"), "per relation: the DEV choice, its held-out and in-sample numbers"),
})

_COREF_CHOICE = Nullable(Obj({**_CHOSEN_HEAD, "accuracy": Field(SHARE, "on the mentions chosen on"),
                              "mentions": Field(COUNT, "scored mentions chosen on"),
                              "ties": Field(COUNT, "heads tied")}))
_COREF_TYPE_REPORT = Obj({
    "mentions": Field(COUNT, "scored mentions of the type"),
    "head": Field(_HEAD_REPORT, "the chosen head's accuracy, or null"),
    "baselines": Field(MapOf(Nullable(_SHARE_REPORT), "baseline"), "each baseline's accuracy, or null"),
    "difference": Field(MapOf(_DIFFERENCE, "baseline"), "head minus each baseline"),
})
COREF_REPORT = {
    "level": Field(LEVEL, "coverage of the intervals"),
    "types": Field(MapOf(_COREF_TYPE_REPORT, "type"), "per mention type"),
}
COREF_HELDOUT = Obj({
    **COREF_REPORT,
    "replicates": Field(COUNT, "bootstrap replicates (0: no intervals)"),
    "select_on": Field(Obj({"input": Field(Obj({"path": Field(STR, ""), "sha256": Field(STR, "")}), "DEV"),
                            "model": Field(_SELECT_ON_MODEL, "the DEV run's model")}), "the DEV run chosen on"),
    "dev": Field(_COREF_CHOICE, "the head chosen on DEV's all-mentions accuracy, or null"),
})

COREF_TYPES = ("all", "pronoun", "proper", "nominal")
"""The mention types of a coref result (``all`` first); probing.analyses.coref.report.TYPE_AXIS."""

COREF = Obj(
    {
        "window": Field(COUNT, "window length in tokens, special tokens included"),
        "types": Field(ListOf(STR), "the mention types: all, pronoun, proper, nominal"),
        "baseline_names": Field(ListOf(STR), "the baselines: nearest, head_match, rule_based"),
        "sieve_names": Field(ListOf(STR), "the rule-based baseline's sieves, earliest first"),
        "windows": Field(COUNT, "windows scored (each a run of whole sentences of one document)"),
        "words": Field(COUNT, "words in the scored windows"),
        "mentions": Field(MapOf(COUNT, "type"), "mentions whose head word lies in a scored window"),
        "scored": Field(MapOf(COUNT, "type"), "mentions with an antecedent (an earlier mention of their entity) in "
                                              "their window"),
        "heads": Field(MapOf(Obj({"dep_to_head": Field(Grid(), "correct counts"),
                                  "head_to_dep": Field(Grid(), "correct counts")}), "type"),
                       "per type, scored mentions whose predicted word is an antecedent's head word, [layer][head]"),
        "baselines": Field(MapOf(MapOf(COUNT, "baseline"), "type"), "per type, correct counts of each baseline"),
        "sieves": Field(MapOf(MapOf(COUNT, "sieve"), "type"), "per type, how often each sieve decided the rule-based "
                                                              "choice"),
        "best": Field(MapOf(BEST, "type"), "each type's own most accurate head, in-sample"),
        "in_sample": Field(Obj({**COREF_REPORT, "choice": Field(_COREF_CHOICE, "the head chosen, or null")}),
                           "the head chosen on these counts' all-mentions accuracy, reported by type"),
        "bootstrap": Field(Nullable(Obj({"replicates": Field(COUNT, "Poisson replicates over windows"),
                                         "seed": Field(INT, "seed of the per-window weights")})),
                           "replicate counts are in state (boot_scored, boot_heads, boot_baselines), or null"),
    }
)

VERSUS_SET = Obj(
    {
        "chosen": Field(Obj({
            "heads": Field(ListOf(ListOf(COUNT, 2)), "the chosen set's [layer, head] (from 0)"),
            "effect": Field(Nullable(NUMBER), "metric(disabled) - metric(intact) on the same units; null: no unit"),
            "interval": Field(Nullable(ListOf(NUMBER, 2)), "95% paired bootstrap interval of the effect"),
        }), "the chosen set (the top k heads of the relation on DEV)"),
        "random": Field(Nullable(Obj({
            "mean": Field(NUMBER, "mean effect of the matched random sets"),
            "percentiles": Field(ListOf(NUMBER, 2), "their 2.5th and 97.5th percentiles"),
            "draws": Field(COUNT, "matched random sets drawn"),
        })), "the matched random sets' effects, or null without draws"),
        "short_sets": Field(COUNT, "random sets smaller than the chosen one (a layer had too few heads left)"),
        "p_value": Field(Nullable(SHARE), "(1 + count) / (1 + draws), count the draws at least as harmful"),
    }
)

VERSUS = Obj(
    {
        "metric": Field(STR, "the metric's name (accuracy, loss, probe)"),
        "higher_is_better": Field(BOOL, "whether a drop of the metric is the harmful direction"),
        "parts": Field(MapOf(MapOf(VERSUS_SET, "chosen set REL@K"), "metric part"), "per metric part and chosen set"),
    }
)

SHARE_GRIDS = Obj({"special": Field(Nullable(Grid(SHARE)), "to special tokens, null without such words"),
                   "punctuation": Field(Nullable(Grid(SHARE)), "to punctuation words")})

INTERVAL = Nullable(ListOf(NUMBER, 2))

_NOOP_SHARE = Obj({"share": Field(SHARE, "mean share"),
                   "interval": Field(Interval(), "percentile bootstrap interval, or null")})
_NOOP_DIFFERENCE = Obj({"value": Field(SIGNED_SHARE, "difference of two shares"),
                        "interval": Field(Interval(-1.0, 1.0), "paired bootstrap interval, or null")})

NOOP_RELATION = Obj(
    {
        "words": Field(MapOf(COUNT, "group"), "words of each group: dependents, non_dependents, heads, non_heads"),
        "heads": Field(MapOf(SHARE_GRIDS, "group"), "[layer][head] mean shares from 0, per group of words and target"),
        "layers": Field(MapOf(MapOf(Nullable(ListOf(_NOOP_SHARE)), "target"), "group"),
                        "per group and target, each layer's mean over heads {share, interval} (null: no such words)"),
        "chosen": Field(Nullable(Obj({"layer": Field(COUNT, "from 0"), "head": Field(COUNT, "from 0"),
                                      "direction": Field(STR, "dep_to_head or head_to_dep"),
                                      "selection": Field(STR, "chosen on dev, or in-sample best"),
                                      "attending": Field(STR, "the group whose attention the direction reads: "
                                                              "dependents (dep_to_head) or heads (head_to_dep)"),
                                      "difference": Field(MapOf(_NOOP_DIFFERENCE, "target"),
                                                          "the others minus the attending words per target "
                                                          "{value, interval}"),
                                      "difference_dependents": Field(MapOf(_NOOP_DIFFERENCE, "target"),
                                                                     "non-dependents minus dependents per target",
                                                                     required=False)})),
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

TOKEN_NAMES = Field(Obj({"first_special": Field(STR, "[CLS], <s>, or 'first special'"),
                         "separator": Field(STR, "[SEP], </s>, or 'separator'")}),
                    "how tables name the first special token and the separators (surface, heads, gradients)")

STATE = Field(MapOf(Array(), "name"), "the accumulator's sums and counts, from which every other number of the "
                                      "payload is derived; probing merge adds them up")

# ---------------------------------------------------------------------------- trees (probing trees)

_HEAD = {"layer": Field(COUNT, "from 0"), "head": Field(COUNT, "from 0")}
_SENTENCES = Obj({"scored": Field(COUNT, "sentences with exactly one root word"),
                  "skipped": Field(MapOf(COUNT, "reason"), "sentences skipped: no_root, several_roots")})
_UAS_UUAS = Obj({"uas": Field(COUNT, "scored words whose predicted head is the gold head"),
                 "uuas": Field(COUNT, "scored words whose gold edge is a predicted edge in either direction")})
_GRIDS = Obj({"dep_to_head": Field(ListOf(ListOf(COUNT)), "[layer][head] from 0"),
              "head_to_dep": Field(ListOf(ListOf(COUNT)), "[layer][head] from 0")})
_TREE_BEST = Nullable(Obj({**_HEAD, "direction": Field(STR, "dep_to_head or head_to_dep"),
                           "correct": Field(COUNT, "its count"), "ties": Field(COUNT, "cells with that count"),
                           "accuracy": Field(SHARE, "correct / words")}))
_DECODING = Obj({
    "uas": Field(_GRIDS, "UAS counts of every head per direction"),
    "uuas": Field(_GRIDS, "UUAS counts of every head per direction"),
    "best_uas": Field(_TREE_BEST, "the best head by UAS here (in-sample; ties: lower layer, lower head, dep_to_head)"),
    "best_uuas": Field(_TREE_BEST, "the best head by UUAS here (in-sample)"),
})

_CAUSAL_TREE_BEST = Nullable(Obj({**_HEAD, "direction": Field(OneOf(("causal",)), "causal"),
                                  "correct": Field(COUNT, "its count"), "ties": Field(COUNT, "cells with that count"),
                                  "accuracy": Field(SHARE, "correct / words")}))
_CAUSAL_DECODING = Obj({
    "uas": Field(ListOf(ListOf(COUNT)), "UAS counts of every head, [layer][head] from 0"),
    "uuas": Field(ListOf(ListOf(COUNT)), "UUAS counts of every head"),
    "best_uas": Field(_CAUSAL_TREE_BEST, "the best head by UAS here (in-sample; ties: lower layer, lower head)"),
    "best_uuas": Field(_CAUSAL_TREE_BEST, "the best head by UUAS here (in-sample)"),
})
_CAUSAL_TREES = Obj({"max": Field(_CAUSAL_DECODING, "each word's head is its best-scoring word"),
                     "mst": Field(_CAUSAL_DECODING, "maximum spanning tree rooted at the gold root"),
                     "head_first": Field(COUNT, "scored words whose gold head precedes them: all dep_to_head can get "
                                                "right on a decoder (head_to_dep reaches the others)")})

TREES = Obj({
    "layers": Field(COUNT, "layers of the [layer][head] grids"),
    "heads": Field(COUNT, "heads per layer of the grids"),
    "sentences": Field(_SENTENCES, "sentences scored and skipped"),
    "words": Field(COUNT, "scored words: every word but the gold root and UPOS PUNCT"),
    "decodings": Field(Obj({"max": Field(_DECODING, "each word's head is its argmax (not a tree)"),
                            "mst": Field(_DECODING, "maximum spanning tree rooted at the gold root")}),
                       "per decoding: counts of every head and direction"),
    "baselines": Field(Obj({"right_branching": Field(_UAS_UUAS, "each word's head is the next word"),
                            "left_branching": Field(_UAS_UUAS, "each word's head is the previous word")}),
                       "positional trees on the same scored words"),
    "bootstrap": Field(Nullable(Obj({"replicates": Field(COUNT, "Poisson replicates over sentences"),
                                     "seed": Field(INT, "seed of the per-sentence weights"),
                                     "method": Field(STR, "'poisson'")})),
                       "replicate counts (in state) for intervals, or null (--bootstrap 0)"),
    "causal": Field(_CAUSAL_TREES, "decoders only: every head as a tree in the causal reading (an edge scored by "
                                   "its later word's attention to the earlier one, whichever is the head)",
                    required=False),
    "ensembles": Field(ListOf(Obj({"relation": Field(STR, "relation name"), "direction": Field(STR, "its direction"),
                                   "members": Field(ListOf(Obj(_HEAD)), "heads averaged"),
                                   "total": Field(COUNT, "pairs here"), "correct": Field(COUNT, "ensemble correct"),
                                   "single_correct": Field(COUNT, "its best single head's correct")})),
                       "held-out: each ensemble's relation counts here", required=False),
    "ensemble_trees": Field(Obj({"words": Field(COUNT, "scored words"), "uas": Field(COUNT, "directed"),
                                 "uuas": Field(COUNT, "undirected")}),
                            "held-out: trees decoded (mst) from all classic ensembles together", required=False),
    "causal_ensemble_trees": Field(Obj({"words": Field(COUNT, "scored words"), "uas": Field(COUNT, "directed"),
                                        "uuas": Field(COUNT, "undirected")}),
                                   "held-out, decoders only: trees decoded (mst) from the causal ensembles together, "
                                   "in the causal reading", required=False),
    "probes": Field(MapOf(Obj({"words": Field(COUNT, "scored words"), "argmax": Field(_UAS_UUAS, "per word"),
                               "mst": Field(_UAS_UUAS, "tree rooted at the gold root")}), "probe"),
                    "held-out: each trained probe's counts", required=False),
})

SELECTION = Obj({
    "made_on": Field(Obj({"path": Field(STR, "the selection treebank"), "sha256": Field(STR, "of its bytes"),
                          "sentences": Field(COUNT, "sentences scored"), "words": Field(COUNT, "scored words")}),
                     "the treebank the choices were made on"),
    "model": Field(Obj({"fingerprint": Field(STR, "the weights chosen with")}), "the model chosen with"),
    "reading": Field(Obj({"attention": Field(STR, "weights, ..."), "pool_from": Field(STR, "mean, first or max")}),
                     "how attention was read"),
    "options": Field(Obj({"relations": Field(ListOf(STR), "relations of the ensembles")}), "options of the choice"),
    "best_heads": Field(MapOf(MapOf(Nullable(Obj({**_HEAD, "direction": Field(STR, ""), "correct": Field(COUNT, ""),
                                                  "total": Field(COUNT, "")})), "metric"), "decoding"),
                        "per decoding and metric the best single head, with its counts on the selection treebank"),
    "causal_best_heads": Field(MapOf(MapOf(Nullable(Obj({**_HEAD, "direction": Field(OneOf(("causal",)), "causal"),
                                                         "correct": Field(COUNT, ""), "total": Field(COUNT, "")})),
                                         "metric"), "decoding"),
                               "decoders only: per decoding and metric the best head in the causal reading",
                               required=False),
    "ensembles": Field(ListOf(Obj({"relation": Field(STR, ""), "direction": Field(STR, ""),
                                   "members": Field(ListOf(Obj(_HEAD)), "from 0"),
                                   "correct": Field(COUNT, "on the selection treebank"),
                                   "single": Field(Obj(_HEAD), "the best single head it started from"),
                                   "single_correct": Field(COUNT, ""), "total": Field(COUNT, "pairs")})),
                       "per relation and direction the greedy ensemble"),
    "probes": Field(MapOf(Obj({"dim": Field(COUNT, "word vector size"),
                               "parameters": Field(MapOf(Array(dtype="float32"), "parameter"), "trained weights "
                                                   "(absent when written with --drop-probe-weights)", required=False),
                               "parameters_sha256": Field(STR, "sha256 of the dropped weights' canonical JSON (only "
                                                          "with --drop-probe-weights)", required=False),
                               "parameter_shapes": Field(MapOf(ListOf(INT), "parameter"), "the dropped weights' "
                                                         "shapes (only with --drop-probe-weights)", required=False),
                               "training": Field(Obj({"seed": Field(INT, "seed"), "epochs": Field(COUNT, "")}),
                                                 "the training record: optimiser, settings, loss per epoch")}), "probe"),
                    "trained attention probes (empty with --no-probes)"),
    "word_vectors": Field(Obj({"source": Field(STR, "input_embeddings or file")}), "the probes' word vectors"),
    "digest": Field(STR, "sha256 of the choices: parts with another digest never merge"),
})

_MEASURED = Nullable(Obj({"correct": Field(COUNT, "here"), "total": Field(COUNT, "here"),
                          "accuracy": Field(Nullable(SHARE), "correct / total"),
                          "interval": Field(Nullable(ListOf(SHARE, 2)), "95% bootstrap interval")}))

TREES_HELDOUT = Obj({
    "level": Field(SHARE, "coverage of the intervals"),
    "replicates": Field(COUNT, "bootstrap replicates (0: no intervals)"),
    "best_heads": Field(MapOf(MapOf(_MEASURED, "metric"), "decoding"), "the selection's best heads measured here"),
    "baselines": Field(MapOf(MapOf(_MEASURED, "metric"), "baseline"), "branching baselines measured here"),
    "causal_best_heads": Field(MapOf(MapOf(_MEASURED, "metric"), "decoding"),
                               "decoders only: the selection's best heads in the causal reading measured here",
                               required=False),
    "ensembles": Field(ListOf(Obj({"relation": Field(STR, ""), "accuracy": Field(Nullable(SHARE), "ensemble"),
                                   "single": Field(Obj({**_HEAD, "accuracy": Field(Nullable(SHARE), "here"),
                                                        "interval": Field(Nullable(ListOf(SHARE, 2)), "95%")}),
                                                   "its best single head (the one the search started from)")})),
                       "each ensemble's relation accuracy beside its best single head's", required=False),
    "ensemble_trees": Field(MapOf(_MEASURED, "metric"), "UAS and UUAS of the ensembles' trees", required=False),
    "causal_ensemble_trees": Field(MapOf(_MEASURED, "metric"), "decoders only: UAS and UUAS of the trees of the "
                                                               "causal ensembles", required=False),
    "probes": Field(MapOf(MapOf(MapOf(_MEASURED, "metric"), "decoding"), "probe"), "each probe's UAS and UUAS",
                    required=False),
})


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
                    "tokenized_apart_words": Field(COUNT, "words of running text that shared a piece with a "
                                                          "neighbour and were tokenized on their own (absent: none)",
                                                   required=False),
                    "half": Field(HALF, "the half of a one-split treebank scored (even or odd), its --limit "
                                        "and the rule", required=False),
                }
            ),
            "the treebank block of the probe's contract (docs/results.md)",
        ),
        "relations": Field(MapOf(RELATION, "relation"), "per relation: counts of every head and offset"),
        "bootstrap": Field(BOOTSTRAP, "replicate counts for intervals, or null (--bootstrap 0)"),
        "heldout": Field(PROBE_HELDOUT, "choice on a selection treebank, reported here with intervals",
                         required=False),
    },
    "patterns": {"types": Field(ListOf(ListOf(STR)), "[layer][head] pattern type"), "state": STATE},
    "compare": {"similarity": Field(Grid(NUMBER), "[layer][head] mean row cosine"), "state": STATE},
    "ablation": {"conditions": Field(ListOf(Obj({"label": Field(STR, "")})), "each condition's change"), "state": STATE,
                 "versus": Field(VERSUS, "a --chosen run: per metric part and chosen set, its effect against the "
                                         "matched random sets' (docs/dark-secrets.md)", required=False)},
    "trees": {
        "trees": Field(TREES, "counts of every head as a tree on this treebank, and of the selection's ensembles and "
                              "probes (derived from state)"),
        "selection": Field(SELECTION, "what was chosen and trained on the selection treebank (DEV): a later "
                                      "--select-on reads it", required=False),
        "heldout": Field(TREES_HELDOUT, "the selection's choices measured on this treebank, with intervals",
                         required=False),
        "state": STATE,
    },
    "coref": {
        "coref": Field(COREF, "antecedent counts per head, direction and mention type, and the baselines'"),
        "state": STATE,
        "heldout": Field(COREF_HELDOUT, "head chosen on a DEV treebank by all-mentions accuracy, reported here by "
                                        "type with intervals", required=False),
    },
    "pairs": {"pairs": Field(PAIRS, "minimal pairs (BLiMP): accuracy per paradigm, per field and overall, "
                                    "each pair's log-probabilities")},
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


@consistency_check("ablation")
def _versus_matches_the_conditions(result: dict) -> None:
    """A versus block names only chosen sets that ran, with their heads, and as many draws as ran."""
    if "versus" not in result:
        return
    labels = {condition["label"]: condition.get("heads", []) for condition in result["conditions"]}
    parts = result.get("metric", {}).get("parts")
    for part, sets in result["versus"]["parts"].items():
        if parts is not None and part not in parts:
            raise Invalid(f"versus.parts.{part}", f"is not a part of the metric ({', '.join(parts)})")
        for key, entry in sets.items():
            where = f"versus.parts.{part}.{key}"
            if labels.get(f"{key}:chosen") != entry["chosen"]["heads"]:
                raise Invalid(f"{where}.chosen.heads", f"are not the heads of condition {key}:chosen")
            draws = sum(1 for label in labels if label.startswith(f"{key}:random"))
            found = 0 if entry["random"] is None else entry["random"]["draws"]
            if found != draws and entry["chosen"]["effect"] is not None:  # a part without units has no draws
                raise Invalid(f"{where}.random.draws", f"says {found}, the result ran {draws} random sets for {key}")
            if entry["short_sets"] > draws:
                raise Invalid(f"{where}.short_sets", f"{entry['short_sets']} of {draws} draws")


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
        causal = entry.get("causal")
        if causal is not None:
            if not result["model"].get("is_causal"):
                raise Invalid(f"relations.{name}.causal", "present for a model that is not causal")
            if causal["head_first"] > total:
                raise Invalid(f"relations.{name}.causal.head_first", f"{causal['head_first']} of {total} pairs")
            for layer, row in enumerate(causal["heads"]):
                for head, count in enumerate(row):
                    if count > total:
                        raise Invalid(f"relations.{name}.causal.heads[{layer}][{head}]",
                                      f"{count} correct of {total} pairs")
    _probe_bootstrap_shapes(result)
    heldout = result.get("heldout")
    if heldout:
        if list(heldout["relations"]) != list(result["relations"]):
            raise Invalid("heldout.relations", f"has relations {_found(list(heldout['relations']))}, the result "
                                               f"{_found(list(result['relations']))}")
        for name, entry in heldout["relations"].items():
            if entry["pairs"] != result["relations"][name]["total"]:
                raise Invalid(f"heldout.relations.{name}.pairs",
                              f"{entry['pairs']}, but relations.{name}.total is {result['relations'][name]['total']}")


def _probe_bootstrap_shapes(result: dict) -> None:
    boot = result.get("bootstrap")
    if not boot:
        return
    relations, model = len(result["relations"]), result["model"]
    expected = {
        "boot_total": [boot["replicates"], relations],
        "boot_heads": [boot["replicates"], relations, 2, model["num_layers"], heads_per_layer(result)],
        "boot_baselines": [boot["replicates"], relations, len(result["config"].get("offsets", [])) or None],
    }
    if "boot_causal" in boot["arrays"]:
        expected["boot_causal"] = expected["boot_heads"][:2] + expected["boot_heads"][3:]
    for name, shape in expected.items():
        if name not in boot["arrays"]:
            raise Invalid(f"bootstrap.arrays.{name}", "missing")
        found = boot["arrays"][name]["shape"]
        if len(found) != len(shape) or any(want is not None and want != got for want, got in zip(shape, found)):
            raise Invalid(f"bootstrap.arrays.{name}.shape", f"is {found}, expected {[s if s else 'O' for s in shape]}")
        if decoded(boot["arrays"][name], f"bootstrap.arrays.{name}").min(initial=0) < 0:
            raise Invalid(f"bootstrap.arrays.{name}", "holds a negative count")


@consistency_check("trees")
def _tree_counts_within_totals(result: dict) -> None:
    """Every count at most its total, UAS at most UUAS (a directed hit is an undirected one), grids of the
    declared shape, a held-out block only with a selection."""
    trees = result["trees"]
    words, layers, heads = trees["words"], trees["layers"], trees["heads"]

    def within(path: str, uas: int, uuas: int, total: int) -> None:
        if uuas > total:
            raise Invalid(path, f"{uuas} correct of {total} words")
        if uas > uuas:
            raise Invalid(path, f"UAS count {uas} exceeds the UUAS count {uuas}")

    for decoding, entry in trees["decodings"].items():
        for metric in ("uas", "uuas"):
            for direction, grid in entry[metric].items():
                if len(grid) != layers or any(len(row) != heads for row in grid):
                    raise Invalid(f"trees.decodings.{decoding}.{metric}.{direction}",
                                  f"is not a grid of {layers} layers x {heads} heads")
        for direction in entry["uas"]:
            for layer, (uas_row, uuas_row) in enumerate(zip(entry["uas"][direction], entry["uuas"][direction])):
                for head, (uas, uuas) in enumerate(zip(uas_row, uuas_row)):
                    within(f"trees.decodings.{decoding}.uas.{direction}[{layer}][{head}]", uas, uuas, words)
    causal = trees.get("causal")
    if causal is not None and not result["model"].get("is_causal"):
        raise Invalid("trees.causal", "present for a model that is not causal")
    if causal is not None and causal["head_first"] > words:
        raise Invalid("trees.causal.head_first", f"{causal['head_first']} of {words} words")
    for decoding, entry in ((key, value) for key, value in (causal or {}).items() if key != "head_first"):
        for metric in ("uas", "uuas"):
            if len(entry[metric]) != layers or any(len(row) != heads for row in entry[metric]):
                raise Invalid(f"trees.causal.{decoding}.{metric}", f"is not a grid of {layers} layers x {heads} heads")
        for layer, (uas_row, uuas_row) in enumerate(zip(entry["uas"], entry["uuas"])):
            for head, (uas, uuas) in enumerate(zip(uas_row, uuas_row)):
                within(f"trees.causal.{decoding}[{layer}][{head}]", uas, uuas, words)
    for name, entry in trees["baselines"].items():
        within(f"trees.baselines.{name}", entry["uas"], entry["uuas"], words)
    for index, entry in enumerate(trees.get("ensembles", [])):
        for key in ("correct", "single_correct"):
            if entry[key] > entry["total"]:
                raise Invalid(f"trees.ensembles[{index}].{key}", f"{entry[key]} correct of {entry['total']} pairs")
    for name in ("ensemble_trees", "causal_ensemble_trees"):
        if name in trees:
            within(f"trees.{name}", trees[name]["uas"], trees[name]["uuas"], trees[name]["words"])
    for name, entry in trees.get("probes", {}).items():
        for decoding in ("argmax", "mst"):
            within(f"trees.probes.{name}.{decoding}", entry[decoding]["uas"], entry[decoding]["uuas"], entry["words"])
    if "heldout" in result and not result.get("selection"):
        raise Invalid("heldout", "present without the selection it measures")
    if "causal_best_heads" in (result.get("heldout") or {}) and causal is None:
        raise Invalid("heldout.causal_best_heads", "present without the causal counts (trees.causal) it comes from")


@consistency_check("coref")
def _coref_counts_within_totals(result: dict) -> None:
    coref = result["coref"]
    for block in ("mentions", "scored", "heads", "baselines", "sieves"):
        if sorted(coref[block]) != sorted(COREF_TYPES):
            raise Invalid(f"coref.{block}", f"has types {sorted(coref[block])}, expected {list(COREF_TYPES)}")
    for block in ("mentions", "scored"):
        parts = sum(coref[block][name] for name in COREF_TYPES[1:])
        if parts != coref[block]["all"]:
            raise Invalid(f"coref.{block}", f"the types add up to {parts}, not all ({coref[block]['all']})")
    for name in COREF_TYPES:
        scored = coref["scored"][name]
        if scored > coref["mentions"][name]:
            raise Invalid(f"coref.scored.{name}", f"{scored} scored of {coref['mentions'][name]} mentions")
        for direction, grid in coref["heads"][name].items():
            for layer, row in enumerate(grid):
                for head, count in enumerate(row):
                    if count > scored:
                        raise Invalid(f"coref.heads.{name}.{direction}[{layer}][{head}]",
                                      f"{count} correct of {scored} scored mentions")
        for baseline, count in coref["baselines"][name].items():
            if count > scored:
                raise Invalid(f"coref.baselines.{name}.{baseline}", f"{count} correct of {scored} scored mentions")
        decided = sum(coref["sieves"][name].values())
        if decided != scored:
            raise Invalid(f"coref.sieves.{name}", f"decide {decided} mentions, not the {scored} scored")
    for block, report in (("coref.in_sample", coref["in_sample"]), ("heldout", result.get("heldout"))):
        if report and sorted(report["types"]) != sorted(COREF_TYPES):
            raise Invalid(f"{block}.types", f"has types {sorted(report['types'])}, expected {list(COREF_TYPES)}")
    boot = coref.get("bootstrap")
    state = result["state"]
    model = result["model"]
    types, kinds = len(COREF_TYPES), len(coref["baseline_names"])
    heads = heads_per_layer(result)
    expected = {"scored": [types], "heads": [types, 2, model["num_layers"], heads],
                "baselines": [types, kinds]}
    if boot:
        expected.update({f"boot_{name}": [boot["replicates"], *shape] for name, shape in list(expected.items())})
    for name, shape in expected.items():
        if name not in state:
            raise Invalid(f"state.{name}", "missing")
        if state[name]["shape"] != shape:
            raise Invalid(f"state.{name}.shape", f"is {state[name]['shape']}, expected {shape}")
    if int(decoded(state["scored"], "state.scored")[0]) != coref["scored"]["all"]:
        raise Invalid("state.scored", "disagrees with coref.scored")


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
            raise Invalid(path, f"{_found(item)} is larger than any number a result holds")


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
            raise Invalid("schema_version", f"expected one of {', '.join(READABLE_VERSIONS)}, found {_found(version)}")
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


def _payload_of(analysis) -> tuple[Mapping[str, Field], list[ConsistencyCheck]]:
    """The payload schema and consistency checks of a registered analysis (a plug-in's too, from its record)."""
    from probing.plugins import analyses

    registry = analyses()
    if not isinstance(analysis, str) or analysis not in registry.names():
        raise Invalid("analysis", f"expected one of {', '.join(registry.names())}, found {_found(analysis)}")
    record = registry[analysis]
    return record.load("payload"), [*_CHECKS.get(analysis, []), *record.load_checks()]


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
        "Made by `python -m probing.results.schema` from `probing/results/schema.py`, the definition every writer and reader uses.",
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
    for analysis, fields in _payloads_of_packages().items():
        lines += ["", f"## Payload of `{analysis}`", ""] + _table(fields)
        for name, declared in fields.items():
            if getattr(declared.spec, "fields", None):  # an Obj (run as __main__, this module's class is another)
                lines += ["", f"### `{name}` ({analysis})", ""] + _table(declared.spec.fields)
    lines += ["", "### `relations.NAME` (probe)", ""] + _table(RELATION.fields)
    lines += ["", "### `relations.NAME.causal` (probe, decoders)", ""] + _table(CAUSAL.fields)
    for name, block in (("trees", TREES), ("selection", SELECTION), ("heldout", TREES_HELDOUT)):
        lines += ["", f"### `{name}` (trees)", ""] + _table(block.fields)
    lines += ["", "### `heldout` (probe)", ""] + _table(PROBE_HELDOUT.fields)
    lines += ["", "### `heldout` (coref)", ""] + _table(COREF_HELDOUT.fields)
    lines += ["", "## Reference files (`leaderboard --reference`)", ""] + _table(REFERENCE.fields["reference"].spec.fields)
    lines += ["", f"Arrays are stored as `{ARRAY_ENCODING}` with their `shape` and `dtype`.", ""]
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


def _payloads_of_packages() -> dict[str, Mapping[str, Field]]:
    """The built-in analyses that declare their payload in their own package, not in :data:`PAYLOADS`."""
    from probing.plugins import analyses

    registry = analyses()
    return {name: registry[name].load("payload") for name in sorted(registry.names())  # registered in import order
            if registry[name].payload.startswith("probing.analyses.")}


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
        for group, targets in entry["layers"].items():
            for target, layers in targets.items():
                if layers is not None and len(layers) != result["model"]["num_layers"]:
                    raise Invalid(f"noop.relations.{name}.layers.{group}.{target}",
                                  f"has {len(layers)} layers, the model {result['model']['num_layers']}")
