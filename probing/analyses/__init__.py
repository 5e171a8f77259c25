"""Every analysis is an accumulator of the one attention pass (probing.engine).

``ACCUMULATORS`` maps the ``analysis`` name a result file carries to the
class that made it; ``probing merge`` uses it to rebuild and add up the parts
of any analysis. Modules are imported when first needed.

>>> accumulator_class("probe").__name__
'ProbeAccumulator'
"""

from __future__ import annotations

import importlib

from ..registry import Registry

ACCUMULATORS: Registry[str] = Registry("analysis")
for _name, _where in {
    "probe": "probe:ProbeAccumulator",
    "surface": "surface:SurfaceAccumulator",
    "heads": "clustering:HeadsAccumulator",
    "patterns": "patterns:PatternAccumulator",
    "compare": "compare:CompareAccumulator",
    "ablation": "ablation:AblationAccumulator",
    "gradients": "gradients:GradientAccumulator",
    "trees": "trees:TreesAccumulator",
    "coref": "coref:CorefAccumulator",
    "noop": "noop:NoopAccumulator",
}.items():
    ACCUMULATORS.register(_name, _where)


def accumulator_class(analysis: str):
    """The accumulator class of an analysis name (``probe``, ``surface``, ...)."""
    module, name = ACCUMULATORS[analysis].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
