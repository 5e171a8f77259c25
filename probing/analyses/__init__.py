"""Every analysis is an accumulator of the one attention pass (probing.engine.passes).

``ACCUMULATORS`` maps the ``analysis`` name a result file carries to the
class that made it; ``probing merge`` uses it to rebuild and add up the parts
of any analysis. Modules are imported when first needed.

>>> accumulator_class("probe").__name__
'ProbeAccumulator'
"""

from __future__ import annotations

import importlib

from probing.registry import Registry

ACCUMULATORS: Registry[str] = Registry("analysis")
for _name, _where in {
    "probe": "probe.accumulator:ProbeAccumulator",
    "surface": "surface.accumulator:SurfaceAccumulator",
    "heads": "heads.accumulator:HeadsAccumulator",
    "patterns": "patterns.accumulator:PatternAccumulator",
    "compare": "compare.accumulator:CompareAccumulator",
    "ablation": "ablation.accumulator:AblationAccumulator",
    "gradients": "gradients.accumulator:GradientAccumulator",
    "trees": "trees.accumulator:TreesAccumulator",
    "coref": "coref.accumulator:CorefAccumulator",
    "noop": "noop.accumulator:NoopAccumulator",
}.items():
    ACCUMULATORS.register(_name, _where)


def accumulator_class(analysis: str):
    """The accumulator class of an analysis name (``probe``, ``surface``, ...)."""
    module, name = ACCUMULATORS[analysis].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
