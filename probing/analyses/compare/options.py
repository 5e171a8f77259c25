"""The options of a compare run: the engine's (of the first model) and the second model.

>>> OPTIONS.values({"second_model": "b", "second_random_init": True})["second_random_init"]
True
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.engine.arguments import option, options_of
from probing.engine.specs import engine_options


@dataclass(frozen=True)
class CompareOptions:
    """The second model, loaded as the first is (its dtype, device, stack, seed)."""

    second_model: str | None = option(required=True, metavar="ID_OR_FOLDER",
                                      help="the checkpoint to compare with (hub id or folder)")
    second_random_init: bool = option(flag=True, help="draw the second model's weights at random (same "
                                                      "architecture): the untrained control")


OPTIONS = (engine_options() + options_of(CompareOptions)).named("probing compare", spec=CompareOptions)
"""Every option of ``probing compare`` (and of ``probing.run("compare", ...)``)."""
