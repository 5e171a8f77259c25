"""The options of a heads run: the engine's and a probe result whose best heads the map names.

>>> OPTIONS.values({"probe": "probe.json"})["probe"]
'probe.json'
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.engine.arguments import option, options_of
from probing.engine.specs import engine_options


@dataclass(frozen=True)
class HeadsOptions:
    """What a heads run reads beyond its model, input and pass."""

    probe: str | None = option(metavar="RESULT", help="a result file of probing score for the same model")


OPTIONS = (engine_options() + options_of(HeadsOptions)).named("probing heads", spec=HeadsOptions)
"""Every option of ``probing heads`` (and of ``probing.run("heads", ...)``)."""
