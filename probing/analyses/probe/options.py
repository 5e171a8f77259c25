"""The options of a probe run (``probing score``): which relations, where heads are chosen, the bootstrap.

>>> from probing.engine.arguments import spec_from
>>> spec_from(ProbeOptions, OPTIONS.values({"relations": "det"})).relations
['det']
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.data.relations import DEFAULT_RELATIONS
from probing.engine.arguments import option, options_of
from probing.engine.specs import bootstrap_option, treebank_options


@dataclass(frozen=True)
class ProbeOptions:
    """What decides a probe run beyond its model, input and pass (probing.analyses.probe.config.ScoreConfig holds
    them all, as a result's ``config`` records them)."""

    relations: tuple[str, ...] = option(DEFAULT_RELATIONS, several=True, metavar="REL",
                                        help="dobj, det, pobj, poss, all, or any UD label (nsubj matches nsubj and "
                                             "nsubj:pass; nsubj:pass only itself); default: "
                                             f"{' '.join(DEFAULT_RELATIONS)}")
    select_on: str | None = option(metavar="DEV",
                                   help="choose each relation's head and offset on DEV (a treebank, or a DEV result "
                                        "JSON) and report them on --treebank with 95%% bootstrap intervals")
    bootstrap: int = bootstrap_option()


OPTIONS = treebank_options(options_of(ProbeOptions), figures=False).named("probing score", spec=ProbeOptions)
"""Every option of ``probing score`` (and of ``probing.score``)."""
