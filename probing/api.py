"""The Python API: one call does what ``probing score`` does.

>>> from probing.testing import tiny_bert, sample_path
>>> result = score(model=tiny_bert(), treebank=str(sample_path()), limit=3, bootstrap=0)
>>> sorted(result["relations"]) == sorted(["dobj", "det", "pobj", "poss", "all"])
True
"""

from __future__ import annotations

from .config import ScoreConfig
from .pipeline import run_probe
from .results import build_result


def score_config(config: ScoreConfig, *, progress: bool = False) -> dict:
    """Run the probe described by ``config`` and return its result object."""
    return build_result(run_probe(config, progress=progress))


def score(model: str | None = None, treebank: str | None = None, *, progress: bool = False, **options) -> dict:
    """Score every head of ``model`` on ``treebank``; options are ScoreConfig fields.

    Returns the result object of spec/results.md (write it with
    ``probing.results.write_result``).
    """
    if "relations" in options:
        options["relations"] = tuple(options["relations"])
    return score_config(ScoreConfig(model=model, treebank=treebank, **options), progress=progress)
