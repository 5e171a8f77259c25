"""The options of a gradients run: the engine's (no reading: the gradient is of the attention weights) and the
masking of a masked LM.

>>> OPTIONS.values({"mask_rate": 0.2})["mask_rate"], OPTIONS.defaults()["attention"]
(0.2, 'weights')
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.engine.arguments import option, options_of, share
from probing.engine.specs import batch_options, input_options, model_options, output_options, run_options


@dataclass(frozen=True)
class GradientsOptions:
    """What decides a gradients run beyond its model, input and pass."""

    mask_rate: float = option(0.15, type=share, metavar="SHARE",
                              help="share of each unit's tokens masked for a masked LM (default: 0.15)")


OPTIONS = (model_options(random_init=False) + input_options() + options_of(GradientsOptions) + batch_options()
           + run_options() + output_options()).named("probing gradients", spec=GradientsOptions, attention="weights",
                                                   random_init=False)
"""Every option of ``probing gradients`` (and of ``probing.run("gradients", ...)``)."""
