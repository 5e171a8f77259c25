"""The options of an importance map: the ablation result, DEV, the relations and the permutation test.

>>> from probing.engine.arguments import spec_from
>>> spec_from(ImportanceOptions, OPTIONS.values({"ablation": "a.json", "select_on": "dev.json"})).permutations
10000
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.analyses.importance.build import DEFAULT_PERMUTATIONS
from probing.engine.arguments import Option, OptionSet, option, options_of, positive_at_most
from probing.engine.specs import ModelSpec, output_options

MAX_PERMUTATIONS = 1_000_000
"""The most permutations a test may ask for: each is one shuffle of the heads' accuracies, drawn a chunk at a
time (probing.stats.ranks), so a million take seconds for SmolLM2's 270 heads."""


@dataclass(frozen=True)
class ImportanceOptions:
    """What an importance map is made from: two result files (no model is loaded), the relations of DEV set
    against the map and the within-layer permutations of each test."""

    ablation: str = option(flags=("ablation",), metavar="ABLATION", required=True,
                           help="a result file (JSON) of probing ablate --each-head")
    select_on: str = option(required=True, metavar="DEV",
                            help="a probe result file (JSON) of probing score on DEV: its accuracies are set against "
                                 "the harms, and it chooses each relation's head; never the sentences the ablation "
                                 "measured")
    relations: list | None = option(several=True, metavar="REL",
                                    help="relations of DEV to set against the map (default: every relation DEV holds)")
    permutations: int = option(DEFAULT_PERMUTATIONS, type=positive_at_most(MAX_PERMUTATIONS, "permutations"),
                               metavar="N", help=f"within-layer permutations of the accuracies per test, 1 to "
                                                 f"{MAX_PERMUTATIONS:,} (default: {DEFAULT_PERMUTATIONS})")

    def __post_init__(self) -> None:
        if self.relations:
            from probing.data.relations import check_relation_names

            check_relation_names(self.relations)


FIGURE = Option("figure", ("--figure",), metavar="FILE", group="output",
                help="draw each relation's DEV accuracy beside the harm of its primary part here (.png, .svg or .pdf), "
                     "as probing plot does")

OPTIONS = (
    options_of(ImportanceOptions)
    + options_of(ModelSpec, only=("seed",)).changed("seed", help="seed of the permutations (default: 0)")
    + output_options(figures=False, help="write the result JSON here, atomically")
    + OptionSet((FIGURE,))
).named("probing importance", spec=ImportanceOptions)
"""Every option of ``probing importance`` (and of ``probing.run("importance", ...)``: ``figure`` is the command
line's)."""
