"""The probe's held-out run: choose every head and offset on DEV, report them on TEST (docs/heldout.md).

The choosing and the reporting are the held-out rules of :mod:`probing.stats.heldout`; this module runs the
probe on both treebanks with one loaded model (or reads DEV's result file), which is what ``probing score``
and ``probing.score`` do with ``--select-on`` or a bare treebank name.
"""

from __future__ import annotations

from probing.analyses.probe.api import load_for, run_probe
from probing.analyses.probe.heldout_block import attach_heldout
from probing.analyses.probe.options import ProbeOptions
from probing.engine.options import PassOptions
from probing.engine.specs import InputSpec, ModelSpec
from probing.stats.heldout import HeldOut, check_dev_model, check_dev_test, plan


def score_heldout(config, select_on: str, *, progress: bool = False, hooks=None) -> dict:
    """Score DEV (or read its result) and TEST with one loaded model; return TEST + ``heldout``.

    ``config`` is the TEST run's ScoreConfig; DEV is scored with the same
    options, without bootstrap and unsharded (every TEST shard must make the
    same choice). DEV and TEST are opened and checked by the one held-out flow
    (:class:`probing.stats.heldout.HeldOut`).
    """
    config = config.validated()
    inputs = HeldOut.plan(config.treebank, select_on, limit=config.limit)
    if inputs.dev_result is not None:  # DEV's options checked before any model time, its model once loaded
        check_dev_test(inputs.dev_result, _planned(config, inputs.source), source=inputs.where,
                       may_differ=("relations",), relations=config.relations, planned=True)
    # Both treebanks are read through while the model loads: a bad line in either costs no model time.
    loaded = load_for(config, validate=[source for source in (inputs.dev_source, inputs.source) if source],
                      progress=progress)
    if inputs.dev_result is not None:
        check_dev_model(inputs.dev_result, loaded, source=inputs.where)
    dev = inputs.chosen_on(lambda dev_source: run_probe(
        config.replace(treebank=select_on, bootstrap=0, shard=None), progress=progress, loaded=loaded,
        description="selecting on DEV", source=dev_source, hooks=hooks))
    test = run_probe(config, progress=progress, loaded=loaded, source=inputs.source, description="reporting on TEST",
                     hooks=hooks)
    dev_path = inputs.dev_path if inputs.dev_result is not None else None
    if dev_path is None:  # DEV was scored here: its pass is part of this run's time
        test["timing"] = both_passes_timing(dev["timing"], test["timing"])
    result = attach_heldout(test, dev, dev_result_path=dev_path)
    result["heldout"]["select_on"]["spec"] = select_on
    return result


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
            "model": {"random_init": bool(config.random_init)},
            "config": {"offsets": list(config.offsets), "random_init": bool(config.random_init),
                       "attention": config.attention, "pooling": {"to": "sum", "from": config.pool_from}}}


def score_with_selection(config, select_on: str | None, *, progress: bool = False, hooks=None) -> dict:
    """What ``probing score`` runs: held-out when ``select_on`` is given or the treebank is a
    bare name with dev and test splits (select on dev, report on test), else in-sample. ``hooks``: the passes'
    (the command's checkpoints and the processes of a torchrun; None: this process alone)."""
    treebank, select_on = plan(config.treebank, select_on)
    config = config.replace(treebank=treebank)
    if not select_on:
        return run_probe(config, progress=progress, hooks=hooks)
    return score_heldout(config, select_on, progress=progress, hooks=hooks)


def probe(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: ProbeOptions, *, hooks=None) -> dict:
    """The probe result of ``model`` on the treebank of ``inputs``, with ``passes`` and ``options``: held out when ``options.select_on``
    or a bare treebank name says so, else in-sample; ``hooks`` the passes' (a command's checkpoints). What
    ``probing score`` and ``probing.score`` both run."""
    from probing.analyses.probe.config import ScoreConfig

    return score_with_selection(ScoreConfig.of(model, inputs, passes, options).validated(), options.select_on,
                                progress=passes.progress, hooks=hooks)
