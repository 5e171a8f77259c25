"""The options of a surface run: the engine's alone (surface has none of its own).

>>> OPTIONS.values({"limit": 5})["limit"]
5
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.engine.specs import engine_options


@dataclass(frozen=True)
class SurfaceOptions:
    """Surface statistics read every head's attention as it is: no option beyond the model, input and pass."""


OPTIONS = engine_options().named("probing surface", spec=SurfaceOptions)
"""Every option of ``probing surface`` (and of ``probing.run("surface", ...)``)."""
