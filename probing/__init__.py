"""probing: which attention heads track which syntactic relations.

An implementation of the dependency-head probe of Clark et al. (2019),
"What Does BERT Look At?", and the analyses that followed it, for any
Hugging Face checkpoint. The Python API (docs/api.md) is ``probing.score``,
``probing.trees``, ``probing.coref``, ``probing.run`` (any other analysis)
and ``probing.read``; its names are imported on first use, so that
``import probing`` loads no model framework.

>>> import probing
>>> sorted(probing.__all__)
['Choice', 'CorefResult', 'ProbeResult', 'Result', 'TreesResult', 'coref', 'read', 'run', 'score', 'trees']
"""

from probing.version import __version__  # noqa: F401  (probing.__version__)

_API = {
    "score": "probing.api",
    "trees": "probing.api",
    "coref": "probing.api",
    "run": "probing.api",
    "read": "probing.api",
    "Result": "probing.results.objects",
    "Choice": "probing.results.objects",
    "ProbeResult": "probing.analyses.probe.result",
    "TreesResult": "probing.analyses.trees.result",
    "CorefResult": "probing.analyses.coref.result",
}
"""Public name -> the module that defines it (imported when the name is first used)."""

__all__ = list(_API)


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'probing' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_API[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + __all__)
