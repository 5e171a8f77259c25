"""The type language result files are declared in: a :class:`Spec` checks one JSON value and names the path of
an offence (:class:`Invalid`); :class:`Field` and :class:`Obj` make blocks of them, :class:`Grid` the [layer][head]
lists a model's shape decides (:class:`Shape`), :class:`Array` an encoded array (its bytes decoded only after
every check, by :func:`decoded`).

>>> Obj({"layer": Field(LAYER, "from 0")}).check({"layer": 2}, "best", Shape(num_layers=2))
Traceback (most recent call last):
probing.results.schema.specs.Invalid: best.layer: layer 2 does not exist: the model has 2 layers (from 0)
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from probing.results.schema.arrays import MAX_ARRAY_AXES, MAX_ARRAY_NUMBERS, decode_array


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


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value) -> bool:
    return (is_int(value) or isinstance(value, float)) and math.isfinite(value)


STR = _Simple("a string", lambda v: isinstance(v, str))
BOOL = _Simple("true or false", lambda v: isinstance(v, bool))
INT = _Simple("an integer", is_int)
COUNT = _Simple("a count (an integer >= 0)", lambda v: is_int(v) and v >= 0)
NUMBER = _Simple("a finite number", is_number)
SHARE = _Simple("a number between 0 and 1", lambda v: is_number(v) and -1e-9 <= v <= 1 + 1e-9)
SECONDS = _Simple("a number of seconds >= 0", lambda v: is_number(v) and v >= 0)
NON_NEGATIVE = _Simple("a finite number >= 0", lambda v: is_number(v) and v >= 0)
ANY = _Simple("any value", lambda v: True)
SIGNED_SHARE = _Simple("a number between -1 and 1", lambda v: is_number(v) and -1 - 1e-9 <= v <= 1 + 1e-9)
LEVEL = _Simple("a coverage strictly between 0 and 1", lambda v: is_number(v) and 0 < v < 1)


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
        if not all(is_int(n) and n >= 0 for n in value["shape"]):
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
