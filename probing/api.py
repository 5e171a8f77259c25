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
``to_frame()`` (pandas, the extra ``probing[frames]``), with layers and heads
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

import contextlib
import importlib
import io
import tempfile
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
    from probing.analyses.probe.config import ScoreConfig
    from probing.analyses.probe.heldout import score_with_selection
    from probing.analyses.probe.result import ProbeResult

    if "relations" in options:
        options["relations"] = tuple(options["relations"])
    config = ScoreConfig(model=model, treebank=treebank, **options)
    return ProbeResult(score_with_selection(config, select_on, progress=progress))


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
    option out) and return the object of the result it writes, read back and validated. The result goes to
    ``output`` (with the figures the command draws beside it), else to a temporary folder that is removed.
    ``echo=True`` prints the command's tables and its
    notes (on stderr) as the terminal does; by default both are kept quiet. Bad options raise
    :class:`~probing.errors.ProbingError` with the command line's one-line message.

    >>> from probing.testing import sample_path, tiny_bert
    >>> surface = run("surface", model=tiny_bert(), treebank=str(sample_path()), limit=10)
    >>> surface.analysis, surface.data["surface"]["num_heads"], surface.held_out
    ('surface', 4, False)
    """
    from probing.cli import command_parser
    from probing.plugins import commands

    runnable = [name for name, record in commands().items() if record.writes_result]
    if command not in runnable:
        raise ProbingError(f"{command!r} writes no result to read back; use one of: {', '.join(runnable)}",
                           source="probing.run")
    argv = command_line(options)
    with tempfile.TemporaryDirectory(prefix=f"probing-{command}-") as folder:
        path = Path(output) if output is not None else Path(folder) / f"{command}.json"
        args = command_parser(command).parse_args([*argv, "--output", str(path), "--quiet"])
        module = importlib.import_module(commands()[command].module)
        with contextlib.ExitStack() as quiet:
            if not echo:
                quiet.enter_context(contextlib.redirect_stdout(io.StringIO()))
                quiet.enter_context(contextlib.redirect_stderr(io.StringIO()))
            module.run(args)
        return read(path)


def command_line(options: dict) -> list[str]:
    """The command-line words of keyword ``options``.

    >>> command_line({"limit": 20, "relations": ["det", "amod"], "no_probes": True, "seed": None, "quiet": False})
    ['--limit', '20', '--relations', 'det', 'amod', '--no-probes']
    """
    words = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            words.append(flag)
        elif isinstance(value, (list, tuple)):
            words += [flag, *map(str, value)]
        else:
            words += [flag, str(value)]
    return words
