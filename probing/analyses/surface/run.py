"""Surface statistics as a library call: where each head's attention goes, over one pass.

>>> from probing.engine.specs import InputSpec, ModelSpec
>>> from probing.engine.options import PassOptions
>>> from probing.testing import tiny_bert
>>> result = surface(ModelSpec(tiny_bert()), InputSpec(limit=4), PassOptions())
>>> result["analysis"], result["surface"]["num_heads"]
('surface', 4)
"""

from __future__ import annotations

from probing.analyses.surface.options import SurfaceOptions
from probing.engine.options import PassOptions
from probing.engine.run import start_run
from probing.engine.specs import InputSpec, ModelSpec


def surface(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: SurfaceOptions | None = None, *,
            start=start_run) -> dict | None:
    """The surface result of ``model`` over ``inputs`` (None in a torchrun process other than rank 0); ``start``
    starts the run (probing.engine.run.start_run; a command's checks its outputs first)."""
    from probing.analyses.surface.accumulator import SurfaceAccumulator
    from probing.engine.readings import READINGS
    from probing.engine.token_roles import token_names

    run = start(model, inputs.open(), passes)
    loaded = run.loaded
    heads = READINGS[passes.attention].heads(loaded.num_heads)
    accumulator = SurfaceAccumulator(loaded.num_layers, heads, causal=loaded.is_causal, token_names=token_names(loaded))
    stats = run.run([accumulator], "surface statistics")
    return run.result("surface", stats, accumulator, {}) if run.is_main else None
