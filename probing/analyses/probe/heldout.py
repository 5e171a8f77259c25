"""The probe's held-out run: choose every head and offset on DEV, report them on TEST (docs/heldout.md).

The choosing and the reporting are the held-out rules of :mod:`probing.stats.heldout`; this module runs the
probe on both treebanks with one loaded model (or reads DEV's result file), which is what ``probing score``
and ``probing.score`` do with ``--select-on`` or a bare treebank name.
"""

from __future__ import annotations

from probing.analyses.probe.api import probe_pass
from probing.analyses.probe.options import ProbeOptions
from probing.data.inputs import InputSource, sample_treebank_path
from probing.engine.options import PassOptions
from probing.engine.run import start_run
from probing.engine.specs import InputSpec, ModelSpec
from probing.stats.heldout import HeldOut, attach_heldout, check_dev_model, check_dev_test, is_result_file, plan


def score_heldout(config, select_on: str, *, start=None) -> dict:
    """Score DEV (or read its result) and TEST with one loaded model; return TEST + ``heldout``.

    ``config`` is the TEST run's ScoreConfig; DEV is scored with the same
    options, without bootstrap and unsharded (every TEST shard must make the
    same choice). DEV and TEST are opened and checked by the one held-out flow
    (:class:`probing.stats.heldout.HeldOut`); ``start`` starts the run over TEST (see :func:`probe`).
    """
    config, limit = config.validated(), config.inputs.limit
    # The run starts (every output checked against both files) before DEV and TEST are read and compared.
    test_source = InputSource.treebank(config.inputs.treebank or str(sample_treebank_path()), limit=limit,
                                       option="--treebank")
    dev_file = select_on if is_result_file(select_on) else InputSource.treebank(select_on, option="--select-on").path
    run = (start or start_run)(config.model, test_source, config.passes, reads=(dev_file,))
    inputs = HeldOut.open_dev(test_source, select_on, limit=limit)
    if inputs.dev_result is not None:  # DEV's options checked before any model time, its model once loaded
        check_dev_test(inputs.dev_result, _planned(config, inputs.source), source=inputs.where,
                       may_differ=("relations",), relations=config.options.relations, planned=True)
    # Both treebanks are read through while the model loads: a bad line in either costs no model time.
    loaded = run.load(*[source for source in (inputs.dev_source,) if source])
    if inputs.dev_result is not None:
        check_dev_model(inputs.dev_result, loaded, source=inputs.where)
    dev = inputs.chosen_on(lambda dev_source: probe_pass(
        run.beside(dev_source, shard=None), config.replace(treebank=select_on, bootstrap=0, shard=None),
        "selecting on DEV"))
    test = probe_pass(run, config, "reporting on TEST")
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
