"""How much the LM loss depends on attention to [SEP], as a library call (Clark et al. 2019, Fig. 3).

``gradients(ModelSpec("bert-base-uncased"), InputSpec(limit=100), PassOptions(), GradientsOptions())`` is
``probing gradients --model bert-base-uncased --limit 100``.
"""

from __future__ import annotations

import dataclasses

from probing.analyses.gradients.options import GradientsOptions
from probing.engine.options import PassOptions
from probing.engine.run import start_run
from probing.engine.specs import InputSpec, ModelSpec
from probing.errors import ProbingError


def gradients(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: GradientsOptions, *,
              start=start_run) -> dict | None:
    """The gradients result of ``model`` (a checkpoint with a trained LM head) over ``inputs``; None in a torchrun
    process other than rank 0."""
    from probing.analyses.gradients.accumulator import GradientAccumulator
    from probing.engine.token_roles import token_names

    run = start(dataclasses.replace(model, head="lm", random_init=False), inputs.open(), passes)
    loaded = run.loaded
    if loaded.head == "masked_lm" and loaded.tokenizer.mask_token_id is None:
        raise ProbingError(f"the tokenizer of {loaded.name} has no mask token", source="--model")
    accumulator = GradientAccumulator(loaded.num_layers, loaded.num_heads, loss=loaded.head, seed=model.seed,
                                      mask_rate=options.mask_rate, token_names=token_names(loaded))
    stats = run.run([accumulator], "gradients")
    if not run.is_main:
        return None
    return run.result("gradients", stats, accumulator, {"loss": loaded.head, "mask_rate": options.mask_rate})
