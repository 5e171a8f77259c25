"""The probe's held-out run: choose every head and offset on DEV, report them on TEST (docs/heldout.md).

The sequence is the one of every analysis that chooses (:class:`probing.stats.heldout.HeldOut`); the probe hands
it :class:`ProbeChoosing`: DEV scored with the loaded model (or its result file read), TEST scored, and the
``heldout`` block of :mod:`probing.analyses.probe.heldout_block` attached. This is what ``probing score`` and
``probing.score`` run with ``--select-on`` or a bare treebank name.
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.analyses.probe.api import probe_pass
from probing.analyses.probe.heldout_block import attach_heldout
from probing.analyses.probe.options import ProbeOptions
from probing.data.inputs import InputSource, sample_treebank_path
from probing.engine.options import PassOptions
from probing.engine.run import start_run
from probing.engine.specs import InputSpec, ModelSpec
from probing.stats.heldout import Choosing, HeldOut, check_dev_model, check_dev_test, is_result_file, plan


@dataclass(frozen=True)
class ProbeChoosing(Choosing):
    """The probe's choice and report for :class:`~probing.stats.heldout.HeldOut`: DEV scored with TEST's options
    (``config``, the TEST run's ScoreConfig), without bootstrap and unsharded, or read from its result file;
    TEST scored; the ``heldout`` block built from both counts. ``run``: the engine run over TEST (its model,
    processes and checkpoints), which DEV's pass shares."""

    config: object
    run: object

    def check_dev(self, dev: dict, held: HeldOut) -> None:
        """DEV's result of other options is refused before any model time (its model once loaded)."""
        check_dev_test(dev, _planned(self.config, held.source), source=held.where, may_differ=("relations",),
                       relations=self.config.options.relations, planned=True)

    def check_model(self, loaded, held: HeldOut) -> None:
        if held.dev_result is not None:
            check_dev_model(held.dev_result, loaded, source=held.where)

    def choose(self, held: HeldOut, loaded) -> dict:
        """DEV's probe result: the counts each relation's head and offset are chosen on."""
        return probe_pass(self.run.beside(held.dev_source, shard=None),
                          self.config.replace(treebank=held.select_on, bootstrap=0, shard=None), "selecting on DEV")

    def report(self, chosen, held: HeldOut, loaded) -> dict:
        return probe_pass(self.run, self.config, "reporting on TEST")

    def attach(self, result: dict, chosen: dict, held: HeldOut) -> dict:
        if held.result_path is None:  # DEV was scored here: its pass is part of this run's time
            result["timing"] = both_passes_timing(chosen["timing"], result["timing"])
        result = attach_heldout(result, chosen, dev_result_path=held.result_path)
        result["heldout"]["select_on"]["spec"] = held.select_on
        return result


def score_heldout(config, select_on: str, *, start=None) -> dict:
    """Score DEV (or read its result) and TEST with one loaded model; return TEST + ``heldout``.

    ``config`` is the TEST run's ScoreConfig; DEV is scored with the same options, without bootstrap and
    unsharded (every TEST shard must make the same choice). The sequence is the one held-out flow
    (:class:`probing.stats.heldout.HeldOut`); ``start`` starts the run over TEST (see :func:`probe`), which checks
    every output against both files before DEV and TEST are read and compared; both treebanks are then read
    through while the model loads, so that a bad line in either costs no model time.
    """
    config, limit = config.validated(), config.inputs.limit
    test_source = InputSource.treebank(config.inputs.treebank or str(sample_treebank_path()), limit=limit,
                                       option="--treebank")
    dev_file = select_on if is_result_file(select_on) else InputSource.treebank(select_on, option="--select-on").path
    run = (start or start_run)(config.model, test_source, config.passes, reads=(dev_file,))
    choosing = ProbeChoosing(config, run)
    held = HeldOut.open_dev(test_source, select_on, limit=limit, analysis=choosing)
    return held.run(choosing, load=lambda: run.load(*[source for source in (held.dev_source,) if source]))


def both_passes_timing(dev: dict, test: dict) -> dict:
    """The ``timing`` block of a held-out run that scored DEV itself: both passes, DEV's and TEST's, as
    ``seconds_total`` is the wall-clock seconds of the whole run (loading the model is in neither, as in an
    in-sample run); ``seconds_selecting_on_dev`` says how much of it was DEV's.

    >>> both_passes_timing({"seconds_total": 3.0, "seconds_model": 2.0, "units_per_second": 10.0},
    ...                    {"seconds_total": 1.0, "seconds_model": 0.5, "units_per_second": 20.0})
    {'seconds_total': 4.0, 'seconds_model': 2.5, 'units_per_second': 12.5, 'seconds_selecting_on_dev': 3.0}
    """
    from probing.results.pass_statistics import merged_timing

    timing = {**test, **merged_timing([dev, test])}  # the two passes' seconds by the statistics' own rule
    units = sum((block.get("units_per_second") or 0.0) * block["seconds_total"] for block in (dev, test))
    timing["units_per_second"] = round(units / timing["seconds_total"], 2) if timing["seconds_total"] else None
    timing["seconds_selecting_on_dev"] = dev["seconds_total"]
    return timing


def _planned(config, test_source) -> dict:
    """What is known of the TEST result before the model loads: its input and the options that decide a choice."""
    return {"input": test_source.describe(),
            "model": {"random_init": bool(config.model.random_init)},
            "config": {"offsets": list(config.offsets), "random_init": bool(config.model.random_init),
                       "attention": config.passes.attention, "pooling": {"to": "sum", "from": config.passes.pool_from}}}


def score_with_selection(config, *, start=None) -> dict | None:
    """What ``probing score`` runs: held-out when ``config.options.select_on`` is given or the treebank is a
    bare name with dev and test splits (select on dev, report on test), else in-sample. ``start`` starts the run
    (a command's ``EngineCommand.start``: its outputs checked, its processes and checkpoints set up; default:
    this process alone); None in a torchrun process other than rank 0."""
    treebank, select_on = plan(config.inputs.treebank, config.options.select_on)
    config = config.replace(treebank=treebank)
    runs = []

    def started(*specs, **reads):  # the run started, so that only its main process gives the result
        runs.append((start or start_run)(*specs, **reads))
        return runs[-1]

    if not select_on:
        result = probe_pass(started(config.model, config.validated().inputs.open(), config.passes), config, "scoring")
    else:
        result = score_heldout(config, select_on, start=started)
    return result if runs[-1].is_main else None


def probe(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: ProbeOptions, *,
          start=None) -> dict | None:
    """The probe result of ``model`` on the treebank of ``inputs``, with ``passes`` and ``options``: held out when
    ``options.select_on`` or a bare treebank name says so, else in-sample; ``start`` starts the run (a command's
    checks its outputs and sets up processes and checkpoints). What ``probing score`` and ``probing.score`` both
    run; None in a torchrun process other than rank 0."""
    from probing.analyses.probe.config import ScoreConfig

    return score_with_selection(ScoreConfig(model, inputs, passes, options).validated(), start=start)
