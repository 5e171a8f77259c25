"""Coreference heads as a library call: choose a head on DEV (or in-sample), report it with its baselines.

``coref(ModelSpec(), InputSpec("en_gum"), PassOptions(), CorefOptions())`` chooses on en_gum's dev split and
reports on its test split, as ``probing coref --treebank en_gum`` does (tests/test_api.py runs it on a small
CorefUD file).
"""

from __future__ import annotations

from probing.analyses.coref.options import CorefOptions
from probing.engine.options import PassOptions
from probing.engine.run import start_run
from probing.engine.specs import InputSpec, ModelSpec


def coref(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: CorefOptions, *,
          start=start_run) -> dict | None:
    """The coref result of ``model`` on the CorefUD treebank of ``inputs`` (held out on DEV when
    ``options.select_on`` or a bare treebank name says so); None in a torchrun process other than rank 0."""
    import dataclasses

    from probing.analyses.coref.heldout_run import CorefChoosing
    from probing.data.inputs import InputSource
    from probing.stats.heldout import HeldOut

    choosing = CorefChoosing(options, passes, model.seed)
    held = HeldOut.plan(inputs.treebank, options.select_on, limit=inputs.limit, units=InputSource.documents,
                        analysis=choosing)
    run = start(model, held.source, passes, reads=(held.dev_path,))
    return held.run(dataclasses.replace(choosing, engine_run=run), load=lambda: run.loaded)
