"""The analyses probing knows: each one registers itself, and no central file lists them.

An analysis is a package (``probing/analyses/NAME/`` for the built-in ones, any importable module for a
plug-in) whose ``__init__`` calls :func:`register` with an :class:`Analysis` record: its name (the
``analysis`` field of its result files), its accumulator, its payload schema, its consistency checks,
its leaderboard tables and its commands. The record names each part by a ``"module:attribute"``
reference that is imported only when needed, so that registering imports no torch: leaderboards and
result validation read the registry without loading a model framework.

Analyses are found, once, in three places: every subpackage of :mod:`probing.analyses`; the entry-point
group ``probing.analyses`` of installed distributions (a plug-in's ``pyproject.toml`` names its module
there); and the modules listed in ``$PROBING_PLUGINS`` (comma-separated; what a subprocess such as
``torchrun`` inherits). A plug-in may also call :func:`register` directly before it uses the registry.

>>> "probe" in analyses().names()
True
>>> analyses()["probe"].load("accumulator").__name__
'ProbeAccumulator'
>>> analyses()["nosuch"]
Traceback (most recent call last):
probing.errors.ProbingError: unknown analysis 'nosuch'; use one of: ...
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import threading
from dataclasses import dataclass, field

from probing.errors import ProbingError
from probing.registry import Registry

ENTRY_POINT_GROUP = "probing.analyses"
PLUGINS_VARIABLE = "PROBING_PLUGINS"


@dataclass(frozen=True)
class Command:
    """One ``probing NAME`` command an analysis brings.

    ``module`` defines ``add_arguments(parser)`` and ``run(args) -> int``; ``order`` places it in
    ``probing --help`` (lower first); ``writes_result`` says that it writes one result JSON to ``--output``.
    A command that runs one analysis names, as a ``"module:attribute"`` reference, its ``library`` function,
    which takes the specs its options make (model, input, pass options, the analysis's options dataclass) and
    returns the result: what ``probing.run(name, ...)`` calls, with no command line on the way. Its options (the
    :class:`probing.engine.arguments.OptionSet` the command's parser is made from too) are the ``OPTIONS`` of the
    ``options`` module beside the library function (``probing.analyses.trees.options:OPTIONS`` for
    ``probing.analyses.trees.run:trees``) unless ``options`` names others. ``figures`` names a function of the
    analysis's options dataclass giving the :class:`probing.results.outputs.Figures` drawn beside the result,
    by the command's ``--output`` and by ``probing.run(..., output=)`` alike.
    """

    name: str
    help: str
    module: str
    order: int = 100
    writes_result: bool = True
    options: str | None = None
    library: str | None = None
    figures: str | None = None

    def figures_of(self, options):
        """What this command draws beside its result with ``options`` (its analysis's options dataclass), a
        probing.results.outputs.Figures; None when it draws nothing."""
        return resolve(self.figures)(options) if self.figures else None

    def option_set(self):
        """The command's :class:`probing.engine.arguments.OptionSet` (None: it has no library function)."""
        if self.library is None:
            return None
        return resolve(self.options or self.library.partition(":")[0].rpartition(".")[0] + ".options:OPTIONS")


@dataclass(frozen=True)
class Analysis:
    """What the rest of probing needs to know of one analysis; every part is a ``"module:attribute"``.

    - ``accumulator``: the :class:`probing.engine.accumulator.Accumulator` subclass whose ``result()`` makes the
      payload (merge, resume and ``--shard`` rebuild it from a result's state); None for an analysis whose results
      are made from other results, not by a pass over a model (importance): such a result has no parts to merge;
    - ``payload``: a mapping of field name to :class:`probing.results.schema.specs.Field`, the payload's schema
      (every result also has the common blocks); a built-in analysis's module beside it lists, in
      ``SECTIONS``, the blocks docs/results.md shows in tables of their own;
    - ``checks``: functions ``check(result) -> None`` that raise :class:`probing.results.schema.specs.Invalid`
      for numbers types alone cannot catch (a count above its total);
    - ``tables``: a function ``tables(results) -> list[Table]`` giving this analysis's leaderboard tables
      from result dicts of this analysis (None: it has no leaderboard table);
    - ``derived``: a function ``derived(result) -> str | None`` naming, in words, the first field of a block the
      result derives from its own counts (ablation's ``versus`` block) that is not what those counts give again;
      a leaderboard refuses such a result (an edited file) rather than show it (None: nothing to check);
    - ``commands``: the commands it adds to the command line;
    - ``upgrade``: a function ``upgrade(result, version) -> result`` that reads this analysis's payload as
      written under an older ``schema_version`` as the current one (None: its payload never changed).
    """

    name: str
    accumulator: str | None
    payload: str
    checks: tuple[str, ...] = ()
    tables: str | None = None
    commands: tuple[Command, ...] = ()
    upgrade: str | None = None
    derived: str | None = None
    extra: dict = field(default_factory=dict, compare=False)
    """Further named references an analysis wants to publish (``load`` finds them by name too)."""

    def load(self, part: str):
        """The object a part refers to (``"accumulator"``, ``"payload"``, ``"tables"``, ``"upgrade"``,
        ``"derived"``, or a key of ``extra``)."""
        named = ("accumulator", "payload", "tables", "upgrade", "derived")
        reference = getattr(self, part, None) if part in named else self.extra.get(part)
        if reference is None:
            raise ProbingError(f"analysis {self.name!r} has no {part}")
        return resolve(reference)

    def load_checks(self) -> list:
        return [resolve(reference) for reference in self.checks]


def resolve(reference: str):
    """``"package.module:attribute"`` -> the attribute (imported now); a dotted attribute steps into
    attributes, and into dicts by key.

    >>> resolve("probing.naming:head_name")(0, 0)
    '1-1'
    """
    module, _, attribute = reference.partition(":")
    if not attribute:
        raise ValueError(f"a reference is 'module:attribute', got {reference!r}")
    value = importlib.import_module(module)
    for name in attribute.split("."):
        value = value[name] if isinstance(value, dict) else getattr(value, name)
    return value


_ANALYSES: Registry[Analysis] = Registry("analysis")
_discovered = False
_lock = threading.RLock()


def register(analysis: Analysis) -> Analysis:
    """Add an analysis; registering the same record twice is harmless, another under a taken name is an error."""
    with _lock:
        if analysis.name in _ANALYSES.names():
            if _ANALYSES[analysis.name] == analysis:
                return analysis
            raise ValueError(f"an analysis named {analysis.name!r} is already registered")
        _ANALYSES.register(analysis.name, analysis)
    return analysis


def analyses() -> Registry[Analysis]:
    """Every analysis, the built-in ones and the plug-ins (found on the first call)."""
    global _discovered
    with _lock:
        if not _discovered:
            _discovered = True
            _discover()
    return _ANALYSES


def commands() -> dict[str, Command]:
    """Every analysis's commands by name, in ``probing --help`` order."""
    found = [command for name in analyses().names() for command in analyses()[name].commands]
    return {command.name: command for command in sorted(found, key=lambda command: (command.order, command.name))}


def _discover() -> None:
    package = importlib.import_module("probing.analyses")  # found by name: the registry sits below every analysis
    for module in pkgutil.iter_modules(package.__path__, prefix=f"{package.__name__}."):
        if module.ispkg:
            importlib.import_module(module.name)
    for module in _plugin_modules():
        try:
            importlib.import_module(module)
        except ImportError as error:
            raise ProbingError(f"cannot import the plug-in {module!r}: {error}", source=PLUGINS_VARIABLE) from None


def _plugin_modules() -> list[str]:
    from importlib.metadata import entry_points

    named = [point.module for point in entry_points(group=ENTRY_POINT_GROUP)]
    listed = [name.strip() for name in os.environ.get(PLUGINS_VARIABLE, "").split(",") if name.strip()]
    return list(dict.fromkeys(named + listed))
