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
from probing.naming import head_name
from probing.stats.heldout import check_dev_test, check_other_sentences, is_result_file, read_dev_result


def open_dev(select_on: str | None, report_on: InputSource | None, limit: int | None, *,
             planned: dict | None = None, relations=(), sizes=()) -> dict | InputSource:
    """DEV as given: a probe result or a treebank's source, checked before the model loads (so a bad DEV costs
    no model time) against ``report_on``, the run's units (None: BLiMP's pairs, never a treebank's), by the
    checks of ``probing score --select-on`` (:func:`~probing.stats.heldout.check_dev_test`): not the sentences
    measured, not one shard, read with this run's options (``planned``: its config and model fields known before
    loading), holding every one of ``relations`` and as many heads as the largest of ``sizes``."""
    if not select_on:
        raise ProbingError("--chosen chooses heads on DEV: give --select-on DEV (a probe result JSON, or a treebank "
                           "such as en_ewt:dev)", source="--select-on")
    where = f"--select-on {select_on}"
    if is_result_file(select_on):
        dev = read_dev_result(select_on)
        test = {**(planned or {}), **({"input": report_on.describe()} if report_on is not None else {})}
        check_dev_test(dev, test, source=where, may_differ=DEV_MAY_DIFFER, relations=relations, planned=True,
                       run="this run")
        heads = dev["model"]["num_layers"] * dev["model"]["num_heads"]
        if max(sizes, default=1) > heads:
            raise ProbingError(f"k must be between 1 and the model's {heads} heads (its DEV result has "
                               f"{dev['model']['num_layers']}x{dev['model']['num_heads']}), got {max(sizes)}",
                               source="--k")
        return dev
    dev = InputSource.treebank(select_on, limit=limit, option="--select-on")
    if report_on is not None:
        check_other_sentences(dev, report_on, source=where)
    return dev


DEV_MAY_DIFFER = ("relations", "offsets")
"""A DEV result's config fields that need not be this run's: it may hold more relations than --chosen names,
and ablation chooses heads only (offsets choose nothing here)."""


@dataclasses.dataclass(frozen=True)
class ChosenOn:
    """Per relation, DEV's entry as a probe result holds it (``relations``), and what DEV was: ``select_on`` as
    given, the ``sentences`` it was scored on and the ``limit`` that cut them (None: the whole DEV), this run's
    --limit for a treebank, the scoring run's for a result file (``treebank``: the file it was made of)."""

    relations: dict
    select_on: str
    sentences: int
    limit: int | None
    treebank: str | None = None

    def describe(self, conditions) -> str:
        """The line a run prints before its pass: which heads each chosen set holds (from 1, as in the tables), and
        on how many DEV sentences they were chosen.

        >>> from probing.analyses.ablation.accumulator import Condition
        >>> on = ChosenOn({}, "en_ewt:dev", 30, 30)
        >>> print(on.describe([Condition("det@2:chosen", ((0, 1), (2, 3))), Condition("det@2:random0", ((0, 2),))]))
        heads chosen on DEV (en_ewt:dev, 30 sentences: --limit 30 cuts DEV too): det@2 1-2 3-4
        """
        sets = "; ".join(f"{condition.label.rsplit(':', 1)[0]} " + " ".join(head_name(*head) for head in condition.heads)
                         for condition in conditions if condition.label.endswith(":chosen"))
        if self.treebank is not None:  # a result file: its own run's limit, not this one's
            cut = f" of {self.treebank}" + (f", scored with --limit {self.limit}" if self.limit is not None else "")
        else:
            cut = f": --limit {self.limit} cuts DEV too" if self.limit is not None else ""
        return f"heads chosen on DEV ({self.select_on}, {self.sentences:,} sentences{cut}): {sets}"


def dev_relations(dev: dict | InputSource, relations, engine_run, select_on: str) -> ChosenOn:
    """DEV's counts per relation (``heads`` per direction, a decoder's ``causal``), and on what they were made;
    ``select_on``: DEV as given.

    A treebank is scored here: one pass of :class:`~probing.analyses.probe.accumulator.ProbeAccumulator` over
    it with ``engine_run``'s loaded model and reading (a probing.engine.run.EngineRun; never sharded: every
    process must choose the same heads).
    """
    if isinstance(dev, dict):
        made_of = dev["input"].get("given_as") or dev["input"].get("file") or dev["input"]["path"]
        return ChosenOn(dev["relations"], select_on, dev["input"]["units_used"], dev["input"].get("limit"), made_of)
    from probing.analyses.probe.accumulator import ProbeAccumulator
    from probing.analyses.probe.counts import OFFSETS
    from probing.engine.readings import READINGS

    loaded = engine_run.loaded
    heads = READINGS[engine_run.options().attention].heads(loaded.num_heads)
    probe = ProbeAccumulator.create(tuple(relations), loaded.num_layers, heads, offsets=OFFSETS, bootstrap=0, seed=0,
                                    causal=loaded.is_causal)
    stats = engine_run.run([probe], "scoring DEV to choose the heads", source=dev, shard=None)
    return ChosenOn(engine_run.share(probe.result()["relations"]), select_on, stats.units_used, dev.limit)
