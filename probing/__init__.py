"""probing: which attention heads track which syntactic relations.

An implementation of the dependency-head probe of Clark et al. (2019),
"What Does BERT Look At?", sections 4.1-4.2, for any Hugging Face checkpoint.
"""

from probing.version import __version__


def score(*args, **kwargs):
    """Score every head of a checkpoint on a treebank; see :func:`probing.analyses.probe.api.score`."""
    from probing.analyses.probe.api import score as _score

    return _score(*args, **kwargs)
