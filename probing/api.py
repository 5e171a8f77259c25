"""The Python API: one call per question, results as objects (docs/api.md).

``probing.score`` runs what ``probing score`` runs, held-out included: a bare
treebank name with dev and test splits (``"en_ewt"``) chooses every head on
dev and reports it on test with 95% intervals, ``select_on=`` names another
dev treebank (or a dev result file), and anything else is in-sample.
``probing.read`` gives the object of any result file the command line
wrote. Objects keep the JSON as ``result.data`` and add per-head arrays
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

from pathlib import Path

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
    from probing.analyses.probe.result import ProbeResult
    from probing.stats.heldout import score_with_selection

    if "relations" in options:
        options["relations"] = tuple(options["relations"])
    config = ScoreConfig(model=model, treebank=treebank, **options)
    return ProbeResult(score_with_selection(config, select_on, progress=progress))


def read(path: str | Path) -> Result:
    """The object of a result file of any analysis (validated as it is read): a ProbeResult, TreesResult
    or CorefResult, or a plain :class:`~probing.results.objects.Result` for the others."""
    from probing.results.io import read_result

    return result_object(read_result(path))
