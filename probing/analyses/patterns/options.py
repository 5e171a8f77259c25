"""The options of a patterns run: the engine's, the units whose maps are drawn, hand labels to agree with.

>>> OPTIONS.values({"maps": 4})["maps"]
4
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.engine.arguments import at_most, option, options_of
from probing.engine.specs import engine_options

MAX_MAPS = 32
"""The most units whose maps a layer's figure draws, side by side: already a figure some 70 inches wide, and
every kept unit holds all its heads' maps until the end of the pass."""


@dataclass(frozen=True)
class PatternsOptions:
    """What a patterns run keeps and reads beyond its model, input and pass."""

    maps: int = option(0, type=at_most(MAX_MAPS, "units"), metavar="N",
                       help=f"also draw the first N units' maps, one figure per layer, at most {MAX_MAPS} (default: 0)")
    hand_labels: str | None = option(metavar="CSV", help="CSV of hand labels (model,layer,head,label; counted from 1) "
                                                         "to report agreement with")
    label_model: str | None = option(metavar="NAME", help="the model's name in --hand-labels (default: the model "
                                                          "folder's name)")


OPTIONS = (engine_options() + options_of(PatternsOptions)).named("probing patterns", spec=PatternsOptions)
"""Every option of ``probing patterns`` (and of ``probing.run("patterns", ...)``)."""
