"""The probe's library functions: one probe pass over an engine run, a treebank scored into a result dict.

The public Python API over them is :func:`probing.score` (probing/api.py), which also runs held-out numbers
and returns a result object; :func:`score` here is the in-sample run alone, as a dict.

>>> from probing.testing import tiny_bert
>>> result = score(model=tiny_bert(), limit=3, bootstrap=0)
>>> sorted(result["relations"]) == sorted(["dobj", "det", "pobj", "poss", "all"])
True
"""

from __future__ import annotations

import dataclasses

from probing.analyses.probe.config import ScoreConfig
from probing.analyses.probe.options import ProbeOptions
from probing.data.inputs import InputSource
from probing.engine.options import PassOptions
from probing.engine.passes import PassHooks
from probing.engine.readings import READINGS
from probing.engine.run import EngineRun
from probing.engine.specs import InputSpec
from probing.model.loading import LoadedModel
from probing.results.io import provenance


def run_probe(config: ScoreConfig, *, loaded: LoadedModel | None = None, hooks: PassHooks | None = None,
              description: str = "scoring", source: InputSource | None = None) -> dict:
    """Score every head of a model on a treebank, in this process; return the result object (docs/results.md).

    ``source`` is the config's treebank already opened (and perhaps validated, so that its progress bar
    has a total); by default it is opened here. ``loaded``: the model already loaded; ``hooks``: the pass's
    (a checkpointer)."""
    config = config.validated()
    run = EngineRun(config.model, source or config.inputs.open(), config.passes, hooks=hooks, loaded=loaded)
    return probe_pass(run, config, description)


def probe_pass(run: EngineRun, config: ScoreConfig, description: str) -> dict:
    """The probe result of one pass of ``run`` (an EngineRun over the treebank of ``config``, in one process or
    one of a torchrun, with its checkpoints) with the relations, offsets and bootstrap of ``config``."""
    from probing.analyses.probe.accumulator import ProbeAccumulator

    loaded = run.loaded
    accumulator = ProbeAccumulator.create(
        config.options.relations, loaded.num_layers, READINGS[config.passes.attention].heads(loaded.num_heads),
        offsets=config.offsets, bootstrap=config.options.bootstrap, seed=config.model.seed, causal=loaded.is_causal,
    )
    stats = run.run([accumulator], description)
    return probe_result(run, stats, accumulator, config)


def probe_result(run: EngineRun, stats, accumulator, config: ScoreConfig) -> dict:
    """The probe's result of a pass of ``run`` into ``accumulator`` (a ProbeAccumulator made for ``config``): the
    common blocks, :func:`probe_config`, the treebank block and the counts. The one builder of every probe result
    (``probing score``, ``probing.score``, the folder of ``probing report``, the page of ``probing explore``)."""
    from probing.analyses.probe.accumulator import treebank_block

    result = provenance("probe", run.loaded, run.source, stats, probe_config(config, run.options(), run.loaded))
    result["treebank"] = treebank_block(run.source, stats, accumulator.counts)
    result.update(accumulator.result())
    return result


def pass_config(engine_run: EngineRun, *, relations, random_init: bool, bootstrap: int, seed: int) -> ScoreConfig:
    """The probe config of a probe that shares another command's pass (``probing report``, ``probing explore``):
    ``relations`` and the pass's options, as ``probing score`` would be given them, for :func:`probe_result`."""
    return ScoreConfig(model=dataclasses.replace(engine_run.model, random_init=random_init, seed=seed),
                       inputs=InputSpec(limit=engine_run.source.limit), passes=engine_run.options(),
                       options=ProbeOptions(relations=tuple(relations), bootstrap=bootstrap))


def probe_config(config: ScoreConfig, options: PassOptions, loaded: LoadedModel) -> dict:
    """A probe result's ``config`` block (docs/results.md): the config's fields, the pass's options, and how the
    model was read (its stack, the token prepended to every unit). probing.results.io.provenance sets
    ``max_length`` to the longest unit the pass read."""
    return {**config.as_result_dict(), **options.config(), "stack": loaded.stack,
            "prepended_token": loaded.prepended_token}


def score(model: str | None = None, treebank: str | None = None, *, progress: bool = False, **options) -> dict:
    """Score every head of ``model`` on ``treebank``; ``options`` by their option names (``limit``, ``relations``,
    ``batch_size``, ...), each given to the spec that declares it (:meth:`ScoreConfig.from_fields`).

    Returns the result object of docs/results.md (write it with ``probing.results.io.write_result``).
    """
    if "relations" in options:
        options["relations"] = tuple(options["relations"])
    return run_probe(ScoreConfig.from_fields(model=model, treebank=treebank, progress=progress, **options))
