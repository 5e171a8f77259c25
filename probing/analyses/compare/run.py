"""Two checkpoints' attention maps compared head by head, as a library call (Kovaleva et al. 2019, sec. 4.4).

``compare(ModelSpec("bert-base-uncased"), InputSpec(limit=200), PassOptions(), CompareOptions(second_model="X"))``
is ``probing compare --model bert-base-uncased --second-model X --limit 200``.
"""

from __future__ import annotations

import dataclasses

from probing.analyses.compare.options import CompareOptions
from probing.engine.options import PassOptions
from probing.engine.run import start_run
from probing.engine.specs import InputSpec, ModelSpec
from probing.errors import ProbingError


def compare(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: CompareOptions, *,
            start=start_run) -> dict | None:
    """The compare result of ``model`` against ``options.second_model`` (described by the same spec: dtype, stack,
    seed; on the CPU when the first is spread by a device map); None in a torchrun process other than rank 0."""
    from probing.analyses.compare.accumulator import CompareAccumulator, check_compatible
    from probing.engine.readings import READINGS

    run = start(model, inputs.open(), passes)
    first = run.loaded
    second_spec = dataclasses.replace(run.model, model=options.second_model, random_init=options.second_random_init,
                                      revision=None, device="cpu" if run.model.device_map else first.device)
    try:
        second = second_spec.load()
    except ProbingError as error:  # the loader speaks of --model: this one is --second-model
        if error.source != "--model":
            raise
        raise ProbingError(error.message, source="--second-model") from None
    check_compatible(first, second)
    reading = READINGS[passes.attention]
    cosines = CompareAccumulator(first.num_layers, reading.heads(first.num_heads), second, reading)
    stats = run.run([cosines], "comparing")
    if not run.is_main:
        return None
    result = run.result("compare", stats, cosines, {})
    result["second_model"] = {"name_or_path": second.name_or_path, "name": second.name,
                              "fingerprint": second.fingerprint, "random_init": second.random_init}
    result["measure"] = "mean over real query rows of the cosine between the two rows, padding excluded"
    return result
