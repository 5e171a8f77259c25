"""Options declared once, read from a command line or from keyword arguments alike.

An :class:`Option` says what one option of a run is: its flags, the type of its value, its default, one value or
several, its choices, its help. A spec or an analysis's options dataclass declares its fields with :func:`option`
(the field's name is the option's: ``batch_size`` is ``--batch-size``), and :func:`options_of` gives them as an
:class:`OptionSet`. probing.commands.common.add_options turns a set into argparse arguments for the command line;
:meth:`OptionSet.values` reads the keyword arguments of the Python API with the same types and the same checks,
without argparse, and :func:`spec_from` builds a spec from either reading. A new option is one field.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Toy:
...     limit: int | None = option(type=positive_int, metavar="N", help="only the first N units")
...     relations: tuple = option(("det",), several=True, metavar="REL", help="relations")
>>> toy = options_of(Toy, command="probing toy")
>>> spec_from(Toy, toy.values({"limit": "3", "relations": "amod"}))
Toy(limit=3, relations=['amod'])
>>> toy.values({"limit": "abc"})
Traceback (most recent call last):
probing.errors.ProbingError: --limit: must be an integer, got 'abc'
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from probing.errors import ProbingError

OPTION = "probing.option"
"""The key of a dataclass field's metadata that holds its option (see :func:`option`)."""


class BadValue(ValueError):
    """A value an option's type refuses; the message says why, the caller names the option."""


# ---------------------------------------------------------------------------- value types


def whole_number(text: str) -> int:
    """An integer a result can hold (int64: probing.results.schema.bounds.MAX_INTEGER), so that a count such as
    ``--limit 99999999999999999999`` is refused here, not after the pass when its result is written."""
    from probing.results.schema.bounds import MAX_INTEGER

    try:
        value = int(text)
    except ValueError:
        raise BadValue(f"must be an integer, got {text!r}") from None
    if abs(value) > MAX_INTEGER:
        raise BadValue(f"must be at most {MAX_INTEGER} (the largest number a result holds), got {value}")
    return value


def positive_int(text: str) -> int:
    """
    >>> positive_int("0")
    Traceback (most recent call last):
    probing.engine.arguments.BadValue: must be a positive integer, got 0
    """
    value = whole_number(text)
    if value < 1:
        raise BadValue(f"must be a positive integer, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = whole_number(text)
    if value < 0:
        raise BadValue(f"must be 0 or more, got {value}")
    return value


def positive_at_most(cap: int, unit: str) -> Callable[[str], int]:
    """The type of a count with a stated cap: a positive integer of ``unit``, at most ``cap``.

    >>> heads = positive_at_most(256, "heads")
    >>> heads("25")
    25
    >>> heads("300")
    Traceback (most recent call last):
    probing.engine.arguments.BadValue: must be at most 256 heads, got 300
    """
    return _capped(positive_int, cap, lambda value: f"must be at most {cap} {unit}, got {value}")


def at_most(cap: int, unit: str) -> Callable[[str], int]:
    """The type of a count from 0 to ``cap`` ``unit``.

    >>> at_most(32, "units")("33")
    Traceback (most recent call last):
    probing.engine.arguments.BadValue: must be 0 to 32 units, got 33
    """
    return _capped(non_negative_int, cap, lambda value: f"must be 0 to {cap} {unit}, got {value}")


def _capped(read: Callable[[str], int], cap: int, refusal: Callable[[int], str]) -> Callable[[str], int]:
    def count(text: str) -> int:
        value = read(text)
        if value > cap:
            raise BadValue(refusal(value))
        return value

    return count


def share(text: str) -> float:
    """A share strictly between 0 and 1 (``--mask-rate``)."""
    try:
        value = float(text)
    except ValueError:
        raise BadValue(f"must be a number between 0 and 1, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise BadValue(f"must lie strictly between 0 and 1, got {text}")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise BadValue(f"must be a number of seconds, got {text!r}") from None
    if not value >= 0:
        raise BadValue(f"must be 0 or more seconds, got {text}")
    return value


class RegistryChoices:
    """Choices read from a registry the first time a value is checked or listed: the registries of readings and
    poolings live beside their torch code, so that an option given none of their names (or a bad option
    elsewhere) is checked without importing torch.

    >>> formats = RegistryChoices("probing.report.renderers", "FORMATS")
    >>> "md" in formats, "rst" in formats
    (True, False)
    """

    def __init__(self, module: str, name: str):
        self._module, self._name = module, name

    def _names(self) -> list[str]:
        registry = getattr(importlib.import_module(self._module), self._name)
        return registry.names()

    def __contains__(self, value: object) -> bool:
        return value in self._names()

    def __iter__(self):
        return iter(self._names())


# ---------------------------------------------------------------------------- options


@dataclass(frozen=True)
class Option:
    """One option: ``dest`` its name in a reading (``batch_size``), ``flags`` how the command line spells it.

    ``several``: one value or more (a single value given to the API is one); ``flag``: takes no value and stores
    ``const``; ``append``: each use adds a value; ``group`` the section of ``--help`` it is listed in;
    ``exclusive`` names the options that exclude each other (an :class:`OptionSet` says which such group needs one).
    """

    dest: str
    flags: tuple[str, ...]
    help: str = ""
    type: Callable[[str], Any] | None = None
    default: Any = None
    several: bool = False
    flag: bool = False
    const: Any = True
    append: bool = False
    choices: Any = None
    required: bool = False
    metavar: str | None = None
    group: str | None = None
    exclusive: str | None = None

    @property
    def name(self) -> str:
        """How errors call it: its first flag."""
        return self.flags[0]

    def convert(self, value, *, check_choices: bool = True) -> Any:
        """One value as parsing its text gives it (the type, then the choices); a refusal names the option."""
        converted, refused = value, None
        if self.type is not None:
            try:
                converted = self.type(value if isinstance(value, str) else str(value))
            except BadValue as error:
                refused = str(error)
        if refused is not None:  # raised outside the handler: one error, nothing chained under it
            raise ProbingError(refused, source=self.name)
        if self.type is None and isinstance(value, os.PathLike):  # a path given as a Path, as text on a command line
            converted = os.fspath(value)
        elif self.type is None and not isinstance(value, str):
            raise ProbingError(f"takes text, got {value!r}", source=self.name)
        if check_choices and self.choices is not None and converted not in self.choices:
            listed = ", ".join(str(choice) for choice in self.choices)
            raise ProbingError(f"invalid choice {converted!r} (choose from {listed})", source=self.name)
        return converted

    def initial(self) -> Any:
        """What a reading holds when the option is not given (a text default goes through the type, as argparse
        does, but not its choices: a registry's choices are read lazily, and reading them for a default would import
        torch before a bad option could be refused; several values are a list)."""
        if isinstance(self.default, str) and not self.flag:
            return self.convert(self.default, check_choices=False)
        if isinstance(self.default, tuple) and (self.several or self.append):
            return list(self.default)
        return self.default


def option(default: Any = None, *, help: str, flags: tuple[str, ...] = (), **details) -> Any:
    """A dataclass field that is an option (``details``: the other fields of :class:`Option`); its flag is
    ``--`` and the field's name with dashes unless ``flags`` says otherwise."""
    if details.get("flag"):
        default = bool(default)
    declared = {"default": default, "help": help, "flags": tuple(flags), **details}
    return dataclasses.field(default=default, metadata={OPTION: declared})


def options_of(cls, *, only: Iterable[str] | None = None, exclude: Iterable[str] = (), group: str | None = None,
               command: str = "") -> "OptionSet":
    """The options a dataclass declares with :func:`option`, in field order (``only``/``exclude``: by name;
    ``group``: the ``--help`` section of those that name none)."""
    wanted, dropped = (None if only is None else list(only)), set(exclude)
    found = []
    for field in dataclasses.fields(cls):
        declared = field.metadata.get(OPTION)
        if declared is None or field.name in dropped or (wanted is not None and field.name not in wanted):
            continue
        flags = declared["flags"] or ("--" + field.name.replace("_", "-"),)
        found.append(Option(dest=field.name, **{**declared, "flags": flags,
                                                 "group": declared.get("group") or group}))
    if wanted is not None:
        found.sort(key=lambda entry: wanted.index(entry.dest))
    return OptionSet(tuple(found), command=command)


def spec_from(cls, values: Mapping, **changes):
    """``cls`` built from a reading (:meth:`OptionSet.values`, or the command line's ``vars(args)``): each of its
    fields that the reading holds, then ``changes``. The one translation from options to specs."""
    names = {field.name for field in dataclasses.fields(cls) if field.init}
    return cls(**{**{name: values[name] for name in names if name in values}, **changes})


def settled(values: Mapping, spec) -> dict:
    """``values`` with what ``spec`` (built from them) made of its options: a spec may fill in a default that
    depends on another option (ablate's ``--k`` and ``--random`` with ``--chosen``), and a result records what ran.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Sets:
    ...     k: list | None = None
    ...     def __post_init__(self):
    ...         self.k = self.k or [1]
    >>> settled({"k": None, "limit": 3}, Sets())
    {'k': [1], 'limit': 3}
    """
    return {**values, **{field.name: getattr(spec, field.name) for field in dataclasses.fields(spec)
                         if field.name in values}}


@dataclass(frozen=True)
class OptionSet:
    """The options of one command, in ``--help`` order; ``needs_one``: the exclusive groups one of whose options
    must be given; ``fixed``: values a reading holds with no option to change them; ``command`` (``probing
    trees``) is what errors point to; ``spec`` the analysis's options dataclass its reading builds."""

    options: tuple[Option, ...] = ()
    needs_one: tuple[str, ...] = ()
    fixed: Mapping = dataclasses.field(default_factory=dict)
    command: str = ""
    spec: type | None = None

    def __add__(self, other: "OptionSet") -> "OptionSet":
        return OptionSet(self.options + other.options, self.needs_one + other.needs_one,
                         {**self.fixed, **other.fixed}, self.command or other.command, self.spec or other.spec)

    def named(self, command: str, *, spec: type | None = None, needs_one: tuple[str, ...] = (),
              **fixed) -> "OptionSet":
        """This set as the options of ``command`` whose analysis takes ``spec``, with its required exclusive
        groups and fixed values."""
        return dataclasses.replace(self, command=command, spec=spec or self.spec,
                                   needs_one=self.needs_one + needs_one, fixed={**self.fixed, **fixed})

    def changed(self, dest: str, **changes) -> "OptionSet":
        """The set with option ``dest`` changed (a command's own help or default)."""
        return dataclasses.replace(self, options=tuple(dataclasses.replace(entry, **changes) if entry.dest == dest
                                                       else entry for entry in self.options))

    def __getitem__(self, dest: str) -> Option:
        return next(entry for entry in self.options if entry.dest == dest)

    def defaults(self) -> dict:
        """The reading of no option at all."""
        return {**{entry.dest: entry.initial() for entry in self.options}, **self.fixed}

    def values(self, keywords: Mapping) -> dict:
        """The reading of ``keywords`` (each option by its name, or by a flag's name with underscores: ``limit=20``
        for ``--limit 20``, ``no_progress=True``; a list for several values, ``True`` for a flag; None and False
        leave an option out), with the command line's types, choices, required options and exclusions: every
        refusal one :class:`ProbingError` naming the option.

        >>> toy = OptionSet((Option("heads", ("--heads",), append=True, exclusive="which"),
        ...                  Option("each_head", ("--each-head",), flag=True, exclusive="which")),
        ...                 needs_one=("which",), command="probing toy")
        >>> toy.values({"heads": "1-1"})
        {'heads': ['1-1'], 'each_head': None}
        >>> toy.values({"heads": ["1-1"], "each_head": True})
        Traceback (most recent call last):
        probing.errors.ProbingError: --each-head: not allowed with argument --heads
        >>> toy.values({})
        Traceback (most recent call last):
        probing.errors.ProbingError: probing toy: one of the arguments --heads --each-head is required
        """
        by_name = {}
        for entry in self.options:
            by_name.update({flag.lstrip("-").replace("-", "_"): entry for flag in entry.flags})
            by_name.setdefault(entry.dest, entry)
        if "help" in keywords:  # the command line's --help prints and exits; here there is no such option
            raise ProbingError(f"the options are the command line's: see {self.command} --help", source="help")
        reading, given = self.defaults(), []
        for name, value in keywords.items():
            entry = by_name.get(name)
            if entry is None:
                flag = "--" + name.replace("_", "-")
                raise ProbingError(f"{self.command} has no such option (see {self.command} --help)", source=flag)
            if value is None or value is False:
                continue
            given.append(entry)
            reading[entry.dest] = self._value(entry, value, reading[entry.dest])
        self._check_given(given)
        return reading

    @staticmethod
    def _value(entry: Option, value, current):
        several = isinstance(value, (list, tuple))
        if entry.flag:
            if value is not True:
                raise ProbingError(f"is a flag: give True, got {value!r}", source=entry.name)
            return entry.const
        if entry.append:
            return [*(current or []), *(entry.convert(item) for item in (value if several else [value]))]
        if entry.several:
            values = [entry.convert(item) for item in (value if several else [value])]
            if not values:
                raise ProbingError("expected at least one value", source=entry.name)
            return values
        if several:
            raise ProbingError(f"takes one value, got {len(value)}", source=entry.name)
        return entry.convert(value)

    def _check_given(self, given: list[Option]) -> None:
        missing = [entry.name for entry in self.options if entry.required and entry not in given]
        if missing:
            raise ProbingError(f"required (see {self.command} --help)", source=", ".join(missing))
        groups: dict[str, list[Option]] = {}
        for entry in self.options:
            if entry.exclusive:
                groups.setdefault(entry.exclusive, [])
        for entry in given:
            if entry.exclusive and entry not in groups[entry.exclusive]:
                groups[entry.exclusive].append(entry)
        for name, chosen in groups.items():
            if len(chosen) > 1:
                raise ProbingError(f"not allowed with argument {chosen[0].name}", source=chosen[1].name)
            if name in self.needs_one and not chosen:
                names = " ".join(entry.name for entry in self.options if entry.exclusive == name)
                raise ProbingError(f"one of the arguments {names} is required", source=self.command)


NO_NUMBER_OPTIONS = frozenset({
    "output", "checkpoint", "checkpoint_every", "resume", "progress", "quiet", "follow_symlinks", "workers",
    "figure", "figure_format", "top", "scores_only", "drop_probe_weights", "save_results",
})
"""Options that change no number of a result: where it goes, what of it is kept, how it is shown, how fast it is
made (``--workers`` reads ahead; ``--scores-only`` and ``--drop-probe-weights`` leave out what the numbers come
from). A run may be resumed with any of them changed."""

RECORDED_ELSEWHERE = frozenset({"model", "revision", "treebank", "text", "labels", "blimp", "minimal_pairs",
                                "batch_size", "shard", "device", "device_map"})
"""Options that a result records by what they read or in a block of their own, and a checkpoint by the same: the
weights by their fingerprint (``model``), the input by its sha256 (``input``), a pair set's pinned files
(``blimp``, ``minimal_pairs``), ``batch_size`` and ``shard`` in ``config``; the device and its map move floats only at
near-ties (parts of one run may differ in them, as in ``batch_size``)."""


def recorded_options(values: Mapping) -> dict:
    """Every option of a command that can change a number of its result, by its name in ``values`` (a reading of
    its options, or ``vars(args)``), with DEV's fingerprint (its spec and the sha256 of its bytes,
    :func:`probing.stats.heldout.dev_fingerprint`) where the command chooses on DEV: what a result's
    ``config.options`` holds and a checkpoint's identity refuses to see changed. Every option is one unless it is
    in :data:`NO_NUMBER_OPTIONS` or :data:`RECORDED_ELSEWHERE`, so a new option is recorded until someone says it
    changes nothing.

    >>> recorded_options({"k": [1, 4], "random": 10, "output": "x.json", "model": "m", "quiet": True})
    {'k': [1, 4], 'random': 10}
    """
    recorded = {name: list(value) if isinstance(value, tuple) else value for name, value in sorted(values.items())
                if name not in NO_NUMBER_OPTIONS and name not in RECORDED_ELSEWHERE and not callable(value)}
    if "select_on" in recorded:
        from probing.stats.heldout import dev_fingerprint

        recorded["select_on"] = dev_fingerprint(values.get("treebank"), recorded["select_on"])
    return recorded


PATH_METAVARS = frozenset({"FILE", "FILE_OR_NAME", "FOLDER", "ID_OR_FOLDER", "CSV", "DEV", "RESULT", "PART", "MORE", "MAP",
                           "REFERENCE", "SURFACE"})
"""The metavars of options and positionals that name a file or folder."""


def check_path_names(named: Iterable[tuple[str, str | None, Any]]) -> None:
    """Refuse a path with a component longer than the system allows (ENAMETOOLONG), naming the option, before
    anything looks at it: ``Path.exists()`` raises on such a name instead of answering False. ``named``: (option,
    metavar, value) of each option given.

    >>> check_path_names([("--output", "FILE", "a/" + "b" * 300)])
    Traceback (most recent call last):
    probing.errors.ProbingError: --output: a name in the path is 300 bytes long; file names can be at most 255
    """
    try:
        longest = os.pathconf("/", "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        longest = 255
    for flag, metavar, values in named:
        if metavar not in PATH_METAVARS:
            continue
        for value in values if isinstance(values, list) else [values]:
            if not isinstance(value, str):
                continue
            size = max(len(part.encode("utf-8", "surrogateescape")) for part in value.split(os.sep))
            if size > longest:
                raise ProbingError(f"a name in the path is {size} bytes long; file names can be at most {longest}",
                                   source=flag)
