"""The Python API: one call per question, results as objects (docs/api.md).

``probing.score`` runs what ``probing score`` runs, held-out included: a bare
treebank name with dev and test splits (``"en_ewt"``) chooses every head on
dev and reports it on test with 95% intervals, ``select_on=`` names another
dev treebank (or a dev result file), and anything else is in-sample.
``probing.trees`` and ``probing.coref`` run those analyses the same way,
and ``probing.run`` any command that writes a result (surface, heads,
patterns, gradients, compare, ablate ...), with the command's options as
keyword arguments. ``probing.read`` gives the object of any result file the
command line wrote. Objects keep the JSON as ``result.data`` and add per-head arrays
``[layer, head, direction]``, the chosen heads with their intervals, and
``to_frame()`` (pandas, the extra ``frames``), with layers and heads
from 1 as in the tables.

This module is the facade over library functions; ``import probing``
imports it only when one of its names is used, so the package imports
without torch.

>>> from probing.testing import sample_path, tiny_bert
>>> result = score(tiny_bert(), str(sample_path()), limit=20, bootstrap=0)
>>> result.accuracy("det").shape, result.held_out   # [layer, head, direction]
((2, 4, 2), False)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
from pathlib import Path

from probing.errors import ProbingError
from probing.results.objects import Result, result_object


def score(model: str | None = None, treebank: str | None = None, *, select_on: str | None = None,
          progress: bool = False, **options):
    """Score every head of ``model`` (a hub id or a folder; None: the packaged all-MiniLM-L6-v2) on
    ``treebank`` (a file, ``NAME:SPLIT``, a bare ``NAME`` with dev and test splits for held-out numbers; None:
    the sample treebank), as ``probing score`` does. ``options`` are the command's, by their field names
    (``relations``, ``limit``, ``bootstrap``, ``seed``, ``batch_size``, ``attention``, ``device``, ...;
    probing.analyses.probe.config.ScoreConfig lists them all). Returns a
    :class:`~probing.analyses.probe.result.ProbeResult`."""
    from probing.analyses.probe.heldout import score_with_selection
    from probing.analyses.probe.result import ProbeResult
    from probing.cli import command_parser
    from probing.commands.score import config_from_args

    # the command's own types and checks read the options: a bad value is the command line's one line
    args = command_namespace(command_parser("score"), {"model": model, "treebank": treebank, **options})
    return ProbeResult(score_with_selection(config_from_args(args), select_on, progress=progress))


def read(path: str | Path) -> Result:
    """The object of a result file of any analysis (validated as it is read): a ProbeResult, TreesResult
    or CorefResult, or a plain :class:`~probing.results.objects.Result` for the others."""
    from probing.results.io import read_result

    return result_object(read_result(path))


def trees(model: str | None = None, treebank: str | None = None, **options):
    """Whole trees from attention, as ``probing trees`` makes them (a bare ``NAME`` with dev and test splits is
    held out; ``select_on=`` chooses on another treebank). ``options`` are the command's (``no_probes=True``,
    ``relations``, ``ensemble_size``, ``limit``, ``bootstrap``, ...). Returns a
    :class:`~probing.analyses.trees.result.TreesResult`."""
    return run("trees", model=model, treebank=treebank, **options)


def coref(model: str | None = None, treebank: str | None = None, **options):
    """Coreference heads, as ``probing coref`` finds them, on a CorefUD treebank (``en_gum`` is held out on its
    dev and test splits). Returns a :class:`~probing.analyses.coref.result.CorefResult`."""
    return run("coref", model=model, treebank=treebank, **options)


def run(command: str, *, output: str | Path | None = None, echo: bool = False, **options) -> Result:
    """Run ``probing COMMAND`` with ``options`` (the command's long options by their field names: ``limit=20``
    for ``--limit 20``, a list for an option of several values, ``True`` for a flag; None and False leave an
    option out) and return the object of its result, validated as a file read back would be. The command's own
    code runs here, in this process, and its result comes back in memory; it is also written to ``output`` (with
    the figures the command draws beside it) when one is given. ``echo=True`` prints the command's tables and its
    notes (on stderr) as the terminal does; by default both are kept quiet. Bad options raise
    :class:`~probing.errors.ProbingError` with the command line's one-line message.

    >>> from probing.testing import sample_path, tiny_bert
    >>> surface = run("surface", model=tiny_bert(), treebank=str(sample_path()), limit=10)
    >>> surface.analysis, surface.data["surface"]["num_heads"], surface.held_out
    ('surface', 4, False)
    """
    from probing.cli import check_path_names, command_parser
    from probing.commands.common import keeping_results
    from probing.plugins import commands

    runnable = [name for name, record in commands().items() if record.writes_result]
    if command not in runnable:
        raise ProbingError(f"{command!r} writes no result to read back; use one of: {', '.join(runnable)}",
                           source="probing.run")
    parser = command_parser(command)
    args = command_namespace(parser, options)
    args.output, args.progress = (None if output is None else str(output)), False
    check_path_names(parser, args)
    module = importlib.import_module(commands()[command].module)
    with contextlib.ExitStack() as quiet, keeping_results() as kept:
        if not echo:
            quiet.enter_context(contextlib.redirect_stdout(io.StringIO()))
            quiet.enter_context(contextlib.redirect_stderr(io.StringIO()))
        module.run(args)
    if kept:
        return result_object(as_read(kept[-1], source=f"probing.run({command!r})"))
    if output is not None:  # a plug-in's command that writes its --output itself
        return read(output)
    raise ProbingError(f"{command!r} gave its result only to a file; pass output= to read it back",
                       source="probing.run")


def as_read(result: dict, *, source: str) -> dict:
    """``result`` as reading its file would give it: through JSON (lists, plain numbers) and validated."""
    from probing.results.schema.bounds import parse_json
    from probing.results.schema.validation import validate

    return validate(parse_json(json.dumps(result), source=source), source=source)


def command_namespace(parser: argparse.ArgumentParser, options: dict) -> argparse.Namespace:
    """The options of ``parser``'s command as parsing a command line gives them, from keyword ``options``
    (long options by their field names; None and False leave one out), with argparse's own checks and
    messages: each value's type and choices, one value or several, required options, options that exclude
    each other, and an unknown name.

    >>> from probing.cli import CommandParser
    >>> parser = CommandParser(prog="probing x")
    >>> _ = parser.add_argument("--limit", type=int)
    >>> _ = parser.add_argument("--relations", nargs="+", default=["det"])
    >>> _ = parser.add_argument("--no-probes", action="store_true")
    >>> vars(command_namespace(parser, {"limit": 20, "relations": ("det", "amod"), "no_probes": True}))
    {'limit': 20, 'relations': ['det', 'amod'], 'no_probes': True}
    >>> command_namespace(parser, {"limt": 3})
    Traceback (most recent call last):
    probing.cli.UsageError: unrecognized arguments: --limt (see probing x --help)
    """
    by_name = {}
    for action in parser._actions:
        names = action.option_strings or [action.dest]
        by_name.update({name.lstrip("-").replace("-", "_"): action for name in names})
    args = argparse.Namespace(**parser._defaults)
    for action in parser._actions:
        if action.dest is not argparse.SUPPRESS and action.default is not argparse.SUPPRESS:
            default = action.default
            setattr(args, action.dest, _value(parser, action, default) if isinstance(default, str) else default)
    if "help" in options:  # the command line's --help prints and exits; here it is no option
        raise ProbingError(f"the options are the command line's: see {parser.prog} --help (docs/api.md)",
                           source="help")
    unknown = [name for name in options if name not in by_name]
    if unknown:
        parser.error("unrecognized arguments: " + " ".join("--" + name.replace("_", "-") for name in unknown))
    given = []
    for name, value in options.items():
        action = by_name[name]
        if value is None or value is False:
            continue
        given.append(action)
        try:
            setattr(args, action.dest, _option_value(parser, action, value, getattr(args, action.dest)))
            refused = None
        except argparse.ArgumentError as error:
            refused = str(error)
        if refused:  # raised outside the handler: one error, not argparse's chained under it
            parser.error(refused)
    _check_required(parser, given)
    return args


def _option_value(parser, action: argparse.Action, value, current):
    """What parsing ``value`` given to ``action`` stores (``current``: what an appending option held)."""
    flag = "/".join(action.option_strings) or action.dest
    if action.nargs == 0:  # a flag: True gives it
        if value is not True:
            raise argparse.ArgumentError(action, f"is a flag: give True, got {value!r}")
        return action.const
    several = isinstance(value, (list, tuple))
    if isinstance(action, argparse._AppendAction):
        return [*(current or []), *(_value(parser, action, item) for item in (value if several else [value]))]
    if action.nargs in ("+", "*") or isinstance(action.nargs, int):
        values = [_value(parser, action, item) for item in (value if several else [value])]
        if action.nargs == "+" and not values:
            raise argparse.ArgumentError(action, "expected at least one argument")
        return values
    if several:
        raise argparse.ArgumentError(action, f"expected one argument ({flag}), got {len(value)}")
    return _value(parser, action, value)


def _value(parser, action: argparse.Action, value):
    """One value converted by the option's type and checked against its choices, from its text, as argparse does."""
    converted = parser._get_value(action, str(value))
    parser._check_value(action, converted)
    return converted


def _check_required(parser: argparse.ArgumentParser, given: list) -> None:
    """argparse's refusals of missing required options and of options that exclude each other."""

    def flag(action) -> str:
        return "/".join(action.option_strings) or action.dest

    missing = [flag(action) for action in parser._actions if action.required and action not in given]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)}")
    for group in parser._mutually_exclusive_groups:
        chosen = [action for action in group._group_actions if action in given]
        if len(chosen) > 1:
            parser.error(f"argument {flag(chosen[1])}: not allowed with argument {flag(chosen[0])}")
        if group.required and not chosen:
            names = " ".join(flag(action) for action in group._group_actions if action.help is not argparse.SUPPRESS)
            parser.error(f"one of the arguments {names} is required")
