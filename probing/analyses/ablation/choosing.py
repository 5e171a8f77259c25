"""Where ``probing ablate --chosen`` gets DEV's counts: a probe result file, or a treebank scored first.

``--select-on DEV.json`` reads a ``probing score`` result of DEV; ``--select-on SPEC`` (any treebank spec the
other commands accept: a file, ``en_ewt:dev``, ``ko_pud:even``) scores the chosen relations on it in the same
command, with the probe's own accumulator on the engine's pass and the model already loaded, so both give
the same counts. DEV never is the run's own units: choosing and measuring on the same sentences would make
the chosen set look better than it is.

>>> open_dev(None, None, None)
Traceback (most recent call last):
probing.errors.ProbingError: --select-on: --chosen chooses heads on DEV: give --select-on DEV (...)
"""

from __future__ import annotations

import dataclasses

from probing.data.inputs import InputSource
from probing.errors import ProbingError
from probing.stats.heldout import is_result_file, read_dev_result, same_reading

SAME_UNITS = ("names the very sentences this run disables heads on (choosing and measuring on the same sentences); "
              "give another split, such as en_ewt:dev for en_ewt:test")


def open_dev(select_on: str | None, report_on: InputSource | None, limit: int | None) -> dict | InputSource:
    """DEV as given: a probe result (read and checked) or a treebank's source (checked against ``report_on``,
    the run's units); called before the model loads, so a bad DEV costs no model time."""
    if not select_on:
        raise ProbingError("--chosen chooses heads on DEV: give --select-on DEV (a probe result JSON, or a treebank "
                           "such as en_ewt:dev)", source="--select-on")
    if is_result_file(select_on):
        return read_dev_result(select_on)
    dev = InputSource.treebank(select_on, limit=limit, option="--select-on")
    if report_on is not None and same_reading(dev.sha256, _half(dev), report_on.sha256, _half(report_on)):
        raise ProbingError(SAME_UNITS, source=f"--select-on {select_on}")
    return dev


def _half(source: InputSource) -> tuple | None:
    return source.half and (source.half, source.limit)


def dev_relations(dev: dict | InputSource, relations, command) -> dict:
    """Per relation, DEV's entry as a probe result holds it (``heads`` per direction, a decoder's ``causal``).

    A treebank is scored here: one pass of :class:`~probing.analyses.probe.accumulator.ProbeAccumulator` over
    it with ``command``'s loaded model (never sharded: every process must choose the same heads).
    """
    if isinstance(dev, dict):
        return dev["relations"]
    from probing.analyses.probe.accumulator import ProbeAccumulator
    from probing.engine.passes import require_units, run_pass
    from probing.engine.readings import READINGS
    from probing.scoring.counts import OFFSETS

    loaded = command.loaded
    heads = READINGS[command.args.attention].heads(loaded.num_heads)
    probe = ProbeAccumulator.create(tuple(relations), loaded.num_layers, heads, offsets=OFFSETS, bootstrap=0, seed=0,
                                    causal=loaded.is_causal)
    options = dataclasses.replace(command.options("scoring DEV to choose the heads"), shard=None)
    stats = run_pass(loaded, dev, [probe], options, hooks=command.hooks)
    require_units(stats, dev, options)
    return command.ranks.share(probe.result()["relations"])
