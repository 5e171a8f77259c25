"""The probe's library functions: load a model for a config, score a treebank into a result dict.

The public Python API over them is :func:`probing.score` (probing/api.py), which also runs held-out numbers
and returns a result object; :func:`score` here is the in-sample run alone, as a dict.

>>> from probing.testing import tiny_bert
>>> result = score(model=tiny_bert(), limit=3, bootstrap=0)
>>> sorted(result["relations"]) == sorted(["dobj", "det", "pobj", "poss", "all"])
True
"""

from __future__ import annotations

from collections.abc import Sequence

from probing.analyses.probe.config import ScoreConfig
from probing.data.inputs import InputSource, open_input
from probing.engine.passes import PassHooks, PassOptions, require_units, run_pass
from probing.engine.readings import READINGS
from probing.engine.startup import load_while_validating, model_name
from probing.model.loading import LoadedModel, load_model
from probing.results.io import provenance


def load_for(config: ScoreConfig, *, validate: Sequence[InputSource] = (), progress: bool = False) -> LoadedModel:
    """The model a probe config names (its options, validated first), loaded while the ``validate``
    inputs are read through (probing.engine.startup); ``progress`` shows the loading line."""
    return load_while_validating(
        lambda: load_model(
            config.model,
            revision=config.revision,
            device=config.device,
            device_map=config.device_map,
            dtype=config.dtype,
            random_init=config.random_init,
            seed=config.seed,
            trust_remote_code=config.trust_remote_code,
            stack=config.stack,
        ),
        validate, name=model_name(config.model), announce=progress,
    )


def run_probe(config: ScoreConfig, *, loaded: LoadedModel | None = None, progress: bool = False,
              hooks: PassHooks | None = None, description: str = "scoring", source: InputSource | None = None) -> dict:
    """Score every head of a model on a treebank; return the result object (docs/results.md).

    ``source`` is the config's treebank already opened (and perhaps validated, so that its progress bar
    has a total); by default it is opened here."""
    from probing.analyses.probe.accumulator import ProbeAccumulator, treebank_block

    config = config.validated()
    source = source or open_input(config.treebank, limit=config.limit)
    loaded = loaded or load_for(config, validate=[source], progress=progress)
    options = PassOptions(batch_size=config.batch_size, max_length=config.max_length, shard=config.shard,
                          attention=config.attention, pool_from=config.pool_from, progress=progress,
                          description=description, workers=config.workers)
    accumulator = ProbeAccumulator.create(
        config.relations, loaded.num_layers, READINGS[config.attention].heads(loaded.num_heads),
        offsets=config.offsets, bootstrap=config.bootstrap, seed=config.seed, causal=loaded.is_causal,
    )
    stats = run_pass(loaded, source, [accumulator], options, hooks=hooks)
    require_units(stats, source, options)
    result = provenance("probe", loaded, source, stats, {**config.as_result_dict(), **options.config()})
    result["config"].update({"stack": loaded.stack, "prepended_token": loaded.prepended_token})
    result["treebank"] = treebank_block(source, stats, accumulator.counts)
    result.update(accumulator.result())
    return result


def score(model: str | None = None, treebank: str | None = None, *, progress: bool = False, **options) -> dict:
    """Score every head of ``model`` on ``treebank``; options are ScoreConfig fields.

    Returns the result object of docs/results.md (write it with ``probing.results.io.write_result``).
    """
    if "relations" in options:
        options["relations"] = tuple(options["relations"])
    return run_probe(ScoreConfig(model=model, treebank=treebank, **options), progress=progress)
