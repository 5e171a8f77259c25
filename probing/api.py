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

import json
from pathlib import Path

from probing.errors import ProbingError
from probing.results.objects import Result, result_object
from probing.results.outputs import Figures, write_with_figures


def score(model: str | None = None, treebank: str | None = None, *, select_on: str | None = None,
          progress: bool = False, **options):
    """Score every head of ``model`` (a hub id or a folder; None: the packaged all-MiniLM-L6-v2) on
    ``treebank`` (a file, ``NAME:SPLIT``, a bare ``NAME`` with dev and test splits for held-out numbers; None:
    the sample treebank), as ``probing score`` does. ``options`` are the command's, by their field names
    (``relations``, ``limit``, ``bootstrap``, ``seed``, ``batch_size``, ``attention``, ``device``, ...;
    ``probing score --help`` lists them all), read as :func:`run` reads them. Returns a
    :class:`~probing.analyses.probe.result.ProbeResult`."""
    return run("score", model=model, treebank=treebank, select_on=select_on, progress=progress, **options)


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


def run(command: str, *, output: str | Path | None = None, **options) -> Result:
    """Run the analysis of ``probing COMMAND`` with ``options`` (the command's long options by their field names:
    ``limit=20`` for ``--limit 20``, a list for an option of several values, ``True`` for a flag; None and False
    leave an option out) and return the object of its result, validated as a file read back would be. The
    options are read with the command line's types and checks (a bad one raises
    :class:`~probing.errors.ProbingError` naming it), made into the same specs, and given to the analysis's
    library function: no command line, no temporary file. ``output=`` also writes the result file (atomically)
    with the figures its command draws beside it, the same files (``figure_format=`` as ``--figure-format``).

    >>> from probing.testing import sample_path, tiny_bert
    >>> surface = run("surface", model=tiny_bert(), treebank=str(sample_path()), limit=10)
    >>> surface.analysis, surface.data["surface"]["num_heads"], surface.held_out
    ('surface', 4, False)
    """
    from probing.engine.arguments import check_path_names, recorded_options, settled
    from probing.plugins import commands, resolve

    runnable = {name: record for name, record in commands().items() if record.library}
    if command not in runnable:
        raise ProbingError(f"{command!r} writes no result to read back; use one of: {', '.join(runnable)}",
                           source="probing.run")
    record = runnable[command]
    accepted = record.option_set()
    for name in COMMAND_LINE_ONLY & set(options):
        raise ProbingError("belongs to the command line (the API keeps no checkpoint and draws no figure)",
                           source="--" + name.replace("_", "-"))
    values = accepted.values(options)
    check_path_names((entry.name, entry.metavar, values.get(entry.dest)) for entry in accepted.options)
    specs = library_specs(accepted, values)
    figures = (record.figures_of(specs[-1]) if output is not None else None) or Figures()
    if output is not None:  # before any model time, as the command checks its --output and its figures
        from probing.atomic import check_output_path, result_of

        output = check_output_path(output, option="output", replaces=result_of(_analysis_of(command)))
        paths = {name: _figure_path(output, name, values) for name in figures.names}
    result = resolve(record.library)(*specs, **figures.extra)
    result["config"]["options"] = recorded_options(settled(values, specs[-1]))  # what the command's result records
    result = as_read(result, source=f"probing.run({command!r})")
    if output is not None:
        from probing.results.io import write_result

        write_with_figures(result, figures, write=lambda written: write_result(written, output),
                           path_of=lambda name: paths.get(name) or _figure_path(output, name, values))
    return result_object(result)


def _figure_path(output: Path, name: str, values: dict) -> Path:
    """Where figure ``name`` of ``output`` goes, in ``figure_format`` (the command's default, png), checked as
    the command checks it."""
    from probing.results.outputs import checked_figure_path

    return checked_figure_path(output, name, values.get("figure_format") or "png", option="figure beside output")


def _analysis_of(command: str) -> str:
    """The analysis whose record brings ``command`` (``ablate``: ablation)."""
    from probing.plugins import analyses

    return next(name for name in analyses().names() if any(entry.name == command
                                                            for entry in analyses()[name].commands))


COMMAND_LINE_ONLY = frozenset({"checkpoint", "checkpoint_every", "resume", "figure", "follow_symlinks"})
"""Options of a command that only its command line has: checkpoints of a long run, a figure file named by itself
(``figure_format``, the format of the figures beside ``output=``, is the API's too)."""


def library_specs(accepted, values: dict) -> tuple:
    """The specs a library function takes, from a reading of its command's options by the one translation
    (probing.engine.arguments.spec_from): the model, the input, the pass (progress only when asked for), and
    the analysis's options dataclass."""
    from probing.engine.arguments import spec_from
    from probing.engine.options import PassOptions
    from probing.engine.specs import InputSpec, ModelSpec

    return (spec_from(ModelSpec, values), spec_from(InputSpec, values),
            spec_from(PassOptions, values, progress=values.get("progress") is True),
            spec_from(accepted.spec, values))


def as_read(result: dict, *, source: str) -> dict:
    """``result`` as reading its file would give it: through JSON (lists, plain numbers) and validated."""
    from probing.results.schema.bounds import parse_json
    from probing.results.schema.validation import validate

    return validate(parse_json(json.dumps(result), source=source), source=source)
