"""How alike heads attend, as a library call: Jensen-Shannon divergences, an MDS map, behaviour labels.

``heads(ModelSpec(), InputSpec(limit=100), PassOptions(), HeadsOptions())`` is ``probing heads --limit 100``.
"""

from __future__ import annotations

from probing.analyses.heads.options import HeadsOptions
from probing.engine.options import PassOptions
from probing.engine.run import start_run
from probing.engine.specs import InputSpec, ModelSpec


def heads(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: HeadsOptions, *,
          start=start_run) -> dict | None:
    """The heads result of ``model`` over ``inputs``, marking the best heads of ``options.probe`` (a probe result
    of the same model) when given; None in a torchrun process other than rank 0."""
    from probing.analyses.heads.accumulator import HeadsAccumulator, probe_marks
    from probing.engine.readings import READINGS
    from probing.engine.token_roles import token_names
    from probing.results.io import read_result

    probe = None if options.probe is None else read_result(options.probe, analysis="probe")
    run = start(model, inputs.open(), passes, reads=(options.probe,))
    loaded = run.loaded
    count = READINGS[passes.attention].heads(loaded.num_heads)
    accumulator = HeadsAccumulator(loaded.num_layers, count, causal=loaded.is_causal, token_names=token_names(loaded),
                                   seed=model.seed)
    stats = run.run([accumulator], "head divergences")
    if not run.is_main:
        return None
    result = run.result("heads", stats, accumulator, {})
    result["heads"]["probe"] = options.probe
    result["heads"]["probe_marks"] = [] if probe is None else probe_marks(probe, loaded.num_layers, count)
    return result
