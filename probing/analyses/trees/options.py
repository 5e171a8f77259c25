"""The options of a trees run: where it chooses, which relations' ensembles, the probes, the bootstrap.

>>> from probing.engine.arguments import spec_from
>>> spec_from(TreesOptions, OPTIONS.values({"relations": "det", "no_probes": True})).relations
['det']
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.analyses.trees.defaults import BATCH_SENTENCES, CANDIDATES, DEFAULT_TREE_RELATIONS, ENSEMBLE_SIZE, PROBE_EPOCHS
from probing.engine.arguments import option, options_of, positive_at_most, positive_int
from probing.engine.specs import bootstrap_option, treebank_options
from probing.errors import ProbingError

MAX_PROBE_EPOCHS = 1000
"""The most passes over DEV the probes may be trained for: a hundred times the default, hours on a dev treebank
already; a larger count would run for days before the result could say anything."""

MAX_CANDIDATES = 256
"""The most single heads an ensemble is chosen among: the choosing pass keeps every pair's attention row of each
candidate (122 MB for the default 25 over en_ewt dev's arcs, probing.analyses.trees.ensembles), so ten times
the default already holds over a gigabyte."""


@dataclass(frozen=True)
class TreesOptions:
    """What decides a trees run beyond its model, input and pass (probing.analyses.trees.selection.TreeOptions is
    what its choosing reads of them)."""

    select_on: str | None = option(metavar="DEV",
                                   help="choose heads and ensembles and train the probes on DEV (a treebank, or the "
                                        "result JSON of a trees run on it) and report them on --treebank with 95%% "
                                        "intervals")
    relations: tuple[str, ...] = option(DEFAULT_TREE_RELATIONS, several=True, metavar="REL", group="trees",
                                        help="the relations whose head ensembles are chosen and combined into trees: "
                                             "dobj, det, pobj, poss, or UD labels (default: "
                                             f"{' '.join(DEFAULT_TREE_RELATIONS)})")
    ensemble_size: int = option(ENSEMBLE_SIZE, type=positive_int, metavar="K", group="trees",
                                help=f"most heads in an ensemble (default: {ENSEMBLE_SIZE})")
    candidates: int = option(CANDIDATES, type=positive_at_most(MAX_CANDIDATES, "heads"), metavar="N", group="trees",
                             help="each ensemble is chosen among the N best single heads of its relation and "
                                  f"direction, at most {MAX_CANDIDATES} (default: {CANDIDATES})")
    no_probes: bool = option(flag=True, group="trees", help="train no attention probe (only single heads and "
                                                            "ensembles)")
    probe_epochs: int = option(PROBE_EPOCHS, type=positive_at_most(MAX_PROBE_EPOCHS, "passes over DEV"), metavar="N",
                               group="trees",
                               help=f"passes over DEV when training the probes (Adam, {BATCH_SENTENCES} sentences a "
                                    f"step, seeded by --seed; at most {MAX_PROBE_EPOCHS}; default: {PROBE_EPOCHS})")
    drop_probe_weights: bool = option(flag=True, group="trees",
                                      help="keep each trained probe's weights in the result as their sha256 only: the "
                                           "file stays small (the weights grow with the model's width and heads) but "
                                           "cannot be given to a later --select-on")
    word_vectors: str | None = option(metavar="FILE", group="trees",
                                      help="GloVe-format text file of word vectors for attn+vectors and "
                                           "distances+vectors (default: the model's input embeddings, averaged over "
                                           "a word's pieces)")
    bootstrap: int = bootstrap_option()

    def __post_init__(self) -> None:
        if self.no_probes and self.drop_probe_weights:
            raise ProbingError("with --no-probes there are no probe weights to drop; give one of the two",
                               source="--drop-probe-weights")
        if self.no_probes and self.word_vectors:
            raise ProbingError("only the probes read word vectors; drop --no-probes or --word-vectors",
                               source="--word-vectors")


OPTIONS = treebank_options(options_of(TreesOptions, only=("select_on",)),
                           options_of(TreesOptions, exclude=("select_on", "bootstrap")),
                           options_of(TreesOptions, only=("bootstrap",))).named("probing trees", spec=TreesOptions)
"""Every option of ``probing trees`` (and of ``probing.trees``)."""
