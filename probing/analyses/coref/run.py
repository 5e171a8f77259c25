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
    from probing.analyses.coref.accumulator import CorefAccumulator
    from probing.analyses.coref.heldout_run import WindowPasses, add_heldout, coref_inputs, require_mentions, window_length
    from probing.engine.readings import READINGS

    held = coref_inputs(inputs.treebank, options.select_on, limit=inputs.limit)
    run = start(model, held.source, passes, reads=(held.dev_path,))
    loaded = run.loaded
    window = window_length(options.window, passes.max_length, loaded)
    windows = WindowPasses(run, window, "--window" if options.window is not None else None)
    heads = READINGS[passes.attention].heads(loaded.num_heads)
    config = {"window": window, "bootstrap": options.bootstrap}
    dev_result = held.chosen_on(lambda dev_source: windows.dev_result(dev_source, heads=heads, config=config))
    test = CorefAccumulator(loaded.num_layers, heads, window=window, bootstrap=options.bootstrap, seed=model.seed)
    stats = windows.run(held.source, test, "coreference")
    if passes.shard is None:
        require_mentions(test, held.source)
    if not run.is_main:
        return None
    result = run.result("coref", stats, test, config)
    if dev_result is not None:
        add_heldout(result, dev_result, held)
    return result
