"""The options of an ablation run: which heads are disabled (the conditions), what is measured (the metric) and
on what, beside the engine's.

>>> from probing.engine.arguments import spec_from
>>> chosen = spec_from(AblationOptions, OPTIONS.values({"metric": "probe", "chosen": "det", "select_on": "dev.conllu"}))
>>> chosen.k, chosen.random
([1], 20)
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.analyses.ablation.versus import MATCHINGS
from probing.analyses.pairs.options import lexicon_option, minimal_pairs_option, pair_set_option
from probing.data.relations import DEFAULT_RELATIONS, check_relation_names
from probing.engine.arguments import BadValue, option, options_of, positive_int, share, whole_number
from probing.engine.specs import bootstrap_option, engine_options
from probing.errors import ProbingError

MAX_RANDOM = 10_000
"""The most matched random sets per chosen set: each is one more condition (a copy of every batch in a pass, as
many copies at once as fit the memory budget, and its scores). A board whose family holds m cells needs
1 + draws >= 20 m for a row to survive Holm at 0.05 (probing.stats.multiplicity.draws_needed): the causal board's
14 testable cells need 279; 10,000 covers a family of 500."""

MAX_K = 1000
"""The largest chosen set given on the command line (checked against the model's heads before any pass)."""

DEFAULT_RANDOM = 20
DEFAULT_K = (1,)
METRIC_NAMES = ("mlm", "lm", "probe", "classification", "minimal-pairs")


def _bounded(what: str, most: int):
    """The type of a whole number from 1 to ``most``.

    >>> _bounded("heads", 4)("5")
    Traceback (most recent call last):
    probing.engine.arguments.BadValue: must be 1 to 4 heads, got 5
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise BadValue(f"must be a whole number of {what}, got {text!r}") from None
        if not 1 <= value <= most:
            raise BadValue(f"must be 1 to {most} {what}, got {value}")
        return value

    return parse


CONDITIONS = "conditions"
VERSUS = "chosen against matched random heads (--chosen; each of these options is refused without it)"
PAIRS = ("minimal pairs (--metric minimal-pairs; --limit: the first N pairs of each paradigm, --batch-size: pairs "
         "per batch)")


@dataclass(frozen=True)
class AblationOptions:
    """What decides an ablation run beyond its model, input and pass. Checked as it is made: ``k`` and ``random``
    shape ``--chosen``'s sets only (refused without it, filled in with it)."""

    heads: list | None = option(append=True, metavar="L-H,...", group=CONDITIONS, exclusive=CONDITIONS,
                                help="disable these heads together (repeat for more conditions)")
    each_head: bool = option(flag=True, group=CONDITIONS, exclusive=CONDITIONS,
                             help="disable each head alone, one condition per head")
    each_layer: bool = option(flag=True, group=CONDITIONS, exclusive=CONDITIONS,
                              help="disable all heads of each layer, one per layer")
    chosen: list | None = option(several=True, metavar="REL", group=CONDITIONS, exclusive=CONDITIONS,
                                 help="disable each relation's top --k heads on --select-on, against --random matched "
                                      "random sets")
    k: list | None = option(several=True, type=_bounded("heads", MAX_K), metavar="K", group=VERSUS,
                            help=f"sizes of the chosen sets, each 1 to {MAX_K} and at most the model's heads "
                                 "(default: 1)")
    random: int | None = option(type=_bounded("random sets", MAX_RANDOM), metavar="N", group=VERSUS,
                                help=f"matched random sets per chosen set, 1 to {MAX_RANDOM}: each is one more "
                                     f"condition of the pass (default: {DEFAULT_RANDOM})")
    match: str | None = option(choices=MATCHINGS, metavar="HOW", group=VERSUS,
                               help="how the random sets are matched to the chosen set: layer (as many heads in each "
                                    "layer, from that layer's other heads) or band (k heads from layers L-1 to L+1 of "
                                    "the chosen heads, the chosen heads excluded: for a layer-matched space smaller "
                                    "than the draws a board needs); recorded in the result (default: layer)")
    select_on: str | None = option(metavar="DEV", group=VERSUS,
                                   help="DEV, which chooses the heads: a probe result file (JSON) of probing score, of "
                                        "this model read as this run reads it, or a treebank (en_ewt:dev, a .conllu "
                                        "file) scored first in this command (all of it, or --select-limit's first "
                                        "sentences); never sentences the run measures")
    select_limit: int | None = option(type=positive_int, metavar="N", group=VERSUS,
                                      help="choose on the first N sentences of a treebank DEV only (default: all of "
                                           "DEV; --limit cuts the measured units only)")
    metric: str = option(required=True, choices=METRIC_NAMES, metavar="METRIC",
                         help="what to measure: mlm, lm, probe, classification or minimal-pairs (see below)")
    pair_set: str | None = pair_set_option(PAIRS)
    minimal_pairs: str | None = minimal_pairs_option(PAIRS)
    lexicon: tuple = lexicon_option(PAIRS)
    blimp: str | None = option(metavar="DIR", group=PAIRS, exclusive="source",
                               help="a folder of BLiMP's UID.jsonl files (default: $PROBING_BLIMP, else the download "
                                    "cache)")
    pairs_file: str | None = option(metavar="FILE.JSONL", group=PAIRS, exclusive="source",
                                    help="your own pairs instead of a pair set: JSON lines in BLiMP's format, as "
                                         "probing pairs --pairs-file reads them (unpinned: the result records the "
                                         "file's own sha256)")
    paradigms: list | None = option(several=True, metavar="UID", group=PAIRS, exclusive="paradigms",
                                    help="paradigms to score, of the pair set or the file (default: all)")
    phenomena: list | None = option(several=True, metavar="TERM", group=PAIRS, exclusive="paradigms",
                                    help="every paradigm of these phenomena (subject_verb_agreement ...)")
    labels: str | None = option(metavar="CSV", help="the labelled input of --metric classification (text,label "
                                                    "columns)")
    relations: tuple[str, ...] = option(DEFAULT_RELATIONS, several=True, metavar="REL",
                                        help=f"relations of --metric probe (default: {' '.join(DEFAULT_RELATIONS)})")
    mask_rate: float = option(0.15, type=share, metavar="SHARE",
                              help="share of each unit's tokens masked for --metric mlm (default: 0.15)")
    bootstrap: int = bootstrap_option()
    scores_only: bool = option(flag=True,
                               help="write each condition's scores and replicates instead of the sums they come from "
                                    "(the probe metric's sums of many conditions run to hundreds of MB); with --chosen, "
                                    "only the intact model's and the chosen sets' replicates; such a file is not "
                                    "merged")
    top: int = option(20, type=whole_number, metavar="N",
                      help="rows per table, most helpful removals first; 0 shows all (default: 20)")

    def __post_init__(self) -> None:
        if self.bootstrap < 1:
            raise ProbingError("ablation needs bootstrap replicates for its intervals (1 or more)",
                               source="--bootstrap")
        if self.top < 0:
            raise ProbingError(f"must be 0 (all) or more, got {self.top}", source="--top")
        check_relation_names(self.relations)
        if not self.chosen:
            for name, value in (("k", self.k), ("random", self.random), ("match", self.match),
                                ("select_on", self.select_on), ("select_limit", self.select_limit)):
                if value is not None:
                    flag = "--" + name.replace("_", "-")
                    raise ProbingError(f"does nothing without --chosen REL (it shapes the chosen and random sets "
                                       f"only); drop {flag}, or give --chosen", source=flag)
            return
        check_relation_names(self.chosen, option="--chosen")
        object.__setattr__(self, "k", list(self.k or DEFAULT_K))  # frozen: the defaults of --chosen, filled once
        object.__setattr__(self, "random", DEFAULT_RANDOM if self.random is None else self.random)
        object.__setattr__(self, "match", self.match or "layer")


OPTIONS = (engine_options(help="write the result JSON here, atomically (with --chosen, its figure beside it: "
                               "OUTPUT-versus.png, the chosen set's effect against the random sets')")
           + options_of(AblationOptions)).named("probing ablate", spec=AblationOptions, needs_one=(CONDITIONS,))
"""Every option of ``probing ablate`` (and of ``probing.run("ablate", ...)``)."""
