"""An importance map as a library call: every head alone (an ``ablate --each-head`` result) set against its DEV
accuracy (a ``score`` result); two result files are read, no model.

``importance(ModelSpec(seed=0), InputSpec(), PassOptions(), ImportanceOptions("ablation.json", "dev.json"))`` is
``probing importance ablation.json --select-on dev.json``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from probing.errors import ProbingError

if TYPE_CHECKING:  # the specs every library function takes; only the seed of the model's is read here
    from probing.analyses.importance.options import ImportanceOptions
    from probing.engine.options import PassOptions
    from probing.engine.specs import InputSpec, ModelSpec


def importance(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: ImportanceOptions) -> dict:
    """The importance result of ``options.ablation`` against DEV (``options.select_on``) on ``options.relations``
    (default: every relation DEV holds), ``options.permutations`` within-layer permutations seeded by
    ``model.seed``: what ``probing importance`` and ``probing.run("importance", ...)`` both run."""
    from probing.analyses.importance.build import importance_result
    from probing.data.datasets.cache import sha256_of
    from probing.results.io import read_result

    ablation = read_result(options.ablation, analysis="ablation")
    dev = read_result(options.select_on, analysis="probe")
    if options.relations:
        missing = [name for name in options.relations if name not in dev["relations"]]
        if missing:
            raise ProbingError(f"DEV has no relation {missing[0]!r} (it has {', '.join(dev['relations'])}); score DEV "
                               "with it too", source="--relations")
    sources = {"ablation": {"path": options.ablation, "sha256": sha256_of(options.ablation)},
               "dev": {"path": options.select_on, "sha256": sha256_of(options.select_on)}}
    return importance_result(ablation, dev, sources=sources, relations=options.relations,
                             permutations=options.permutations, seed=model.seed)
