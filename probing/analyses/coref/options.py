"""The options of a coref run: the window, where the head is chosen, the bootstrap (beside the engine's).

>>> from probing.engine.arguments import spec_from
>>> spec_from(CorefOptions, OPTIONS.values({"window": 64})).window
64
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.engine.arguments import option, options_of, positive_int
from probing.engine.specs import bootstrap_option, engine_options


@dataclass(frozen=True)
class CorefOptions:
    """What decides a coref run beyond its model, input and pass."""

    window: int | None = option(type=positive_int, metavar="N", group="coreference",
                                help="window length in tokens, special tokens included: consecutive sentences of a "
                                     "document are added while they fit (default: --max-length, else the model's "
                                     "limit; Clark et al. used 128)")
    select_on: str | None = option(metavar="DEV", group="coreference",
                                   help="choose the head on this treebank (or finished coref result JSON) and report "
                                        "it on --treebank with intervals (default with --treebank NAME: NAME:dev, "
                                        "reported on NAME:test)")
    bootstrap: int = bootstrap_option()


OPTIONS = (engine_options(text=False, pairs=False, figures=False) + options_of(CorefOptions)).named(
    "probing coref", spec=CorefOptions)
"""Every option of ``probing coref`` (and of ``probing.coref``)."""
