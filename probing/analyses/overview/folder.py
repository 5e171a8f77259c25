"""One pass, several analyses, one folder: what ``probing report`` runs and writes.

The heads accumulator always runs (it carries the surface statistics); the probe joins it when the input is a
treebank read one sentence per unit, the gradients when the checkpoint has a trained LM head and attention is read
as raw weights. Each result is made as its own command would make it, and the surface result is the heads
result's surface half (its state without the ``surface.`` prefix), so the two always agree.

>>> no_probe_reason("text", pairs=False)
'the input is plain text, and the probe needs dependency trees'
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.analyses.gradients.accumulator import GradientAccumulator
from probing.analyses.heads.accumulator import HeadsAccumulator, probe_marks
from probing.analyses.probe.accumulator import ProbeAccumulator
from probing.analyses.probe.api import pass_config, probe_result
from probing.analyses.probe.counts import OFFSETS
from probing.atomic import FIGURE_FORMATS, Earlier, figure_of, result_of, text_matching, write_text_atomic
from probing.data.relations import DEFAULT_RELATIONS
from probing.engine.readings import READINGS
from probing.engine.token_roles import token_names
from probing.report.figures import entropy_figure, gradient_figure, mds_figure, surface_figure
from probing.results.io import write_result

FILES = ("probe.json", "surface.json", "surface-surface.png", "surface-entropy.png", "heads.json", "heads-heads.png",
         "gradients.json", "gradients-gradients.png", "README.md")
"""Every file a report may write into its folder; each is checked like --output before the model loads."""

README = text_matching(r"# What the heads of ", "the README.md of a probing report")
"""What an existing README.md of the folder must be to be replaced: an earlier report's summary (its heading)."""


def earlier_file(name: str) -> Earlier:
    """What an existing file ``name`` of the folder must be to be replaced: a result of the analysis it is named
    after, a figure, or an earlier report's README.md (probing.atomic.check_output_path).

    >>> earlier_file("heads.json").what, earlier_file("README.md").what
    ('a heads result', 'the README.md of a probing report')
    """
    if name == "README.md":
        return README
    if name.rsplit(".", 1)[-1] in FIGURE_FORMATS:
        return figure_of(name)
    return result_of(name.removesuffix(".json"))

MASK_RATE = 0.15
"""The gradients' masking rate, as ``probing gradients`` defaults it."""


def no_probe_reason(kind: str, *, pairs: bool) -> str:
    """Why a report has no probe: plain text has no trees; a paired treebank joins two sentences per unit."""
    if kind != "treebank":
        return "the input is plain text, and the probe needs dependency trees"
    return ("--pairs joins two sentences into one unit, and the probe scores single sentences (run probing score "
            "on the same sentences)")


@dataclass
class OverviewRun:
    """The accumulators of one report pass: heads always, the probe and the gradients where they apply."""

    heads: HeadsAccumulator
    probe: ProbeAccumulator | None
    gradients: GradientAccumulator | None
    heads_per_layer: int

    @classmethod
    def create(cls, loaded, source, *, attention: str, bootstrap: int, seed: int) -> "OverviewRun":
        per_layer = READINGS[attention].heads(loaded.num_heads)
        names = token_names(loaded)
        heads = HeadsAccumulator(loaded.num_layers, per_layer, causal=loaded.is_causal, token_names=names, seed=seed)
        probe = gradients = None
        if source.kind == "treebank" and not source.pairs:
            probe = ProbeAccumulator.create(DEFAULT_RELATIONS, loaded.num_layers, per_layer, offsets=OFFSETS,
                                            bootstrap=bootstrap, seed=seed, causal=loaded.is_causal)
        if loaded.head is not None and attention == "weights":
            gradients = GradientAccumulator(loaded.num_layers, loaded.num_heads, loss=loaded.head, seed=seed,
                                            token_names=names)
        return cls(heads, probe, gradients, per_layer)

    def accumulators(self) -> list:
        return [accumulator for accumulator in (self.heads, self.probe, self.gradients) if accumulator is not None]

    def results(self, engine_run, stats, *, random_init: bool, bootstrap: int, seed: int) -> dict[str, dict | None]:
        """``probe``, ``surface``, ``heads`` and ``gradients`` results of the pass of ``engine_run`` (a
        probing.engine.run.EngineRun, which adds the common blocks), None where that analysis did not run; the
        probe's is made as ``probing score`` makes it (probing.analyses.probe.api.probe_result)."""
        make_result, loaded = engine_run.result, engine_run.loaded
        heads = make_result("heads", stats, self.heads, {})
        surface = {**heads, "analysis": "surface", "state": _surface_state(heads)}
        surface.pop("heads")
        probe = gradients = None
        heads["heads"]["probe"], heads["heads"]["probe_marks"] = None, []
        if self.probe is not None:
            config = pass_config(engine_run, relations=DEFAULT_RELATIONS, random_init=random_init, bootstrap=bootstrap,
                                 seed=seed)
            probe = probe_result(engine_run, stats, self.probe, config)
            heads["heads"]["probe"] = "probe.json"
            heads["heads"]["probe_marks"] = probe_marks(probe, loaded.num_layers, self.heads_per_layer)
        if self.gradients is not None:
            gradients = make_result("gradients", stats, self.gradients, {"loss": loaded.head, "mask_rate": MASK_RATE})
        return {"probe": probe, "surface": surface, "heads": heads, "gradients": gradients}


def write_folder(results: dict[str, dict | None], summary: str, target: dict[str, str]) -> list:
    """Each result and figure, then the summary, to its checked path in ``target`` (a file name -> path);
    the paths written, in order."""
    written = [] if results["probe"] is None else [write_result(results["probe"], target["probe.json"])]
    surface, heads, gradients = results["surface"], results["heads"], results["gradients"]
    written += [write_result(surface, target["surface.json"]),
                surface_figure(surface, target["surface-surface.png"]),
                entropy_figure(surface, target["surface-entropy.png"]),
                write_result(heads, target["heads.json"]),
                mds_figure(heads, target["heads-heads.png"])]
    if gradients is not None:
        written += [write_result(gradients, target["gradients.json"]),
                    gradient_figure(gradients, target["gradients-gradients.png"])]
    written.append(write_text_atomic(summary, target["README.md"], replaces=README))
    return written


def _surface_state(heads_result: dict) -> dict:
    """The surface statistics' part of the heads accumulator's state (their names without the prefix)."""
    return {name.split(".", 1)[1]: value for name, value in heads_result["state"].items() if name.startswith("surface.")}
