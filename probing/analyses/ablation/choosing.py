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
from probing.stats.heldout import Choosing, HeldOut, check_dev_model, check_dev_test


def open_dev(select_on: str | None, report_on: InputSource | None, limit: int | None, *,
             analysis: Choosing | None = None) -> HeldOut:
    """DEV as given, through the held-out flow (:class:`~probing.stats.heldout.HeldOut`): a probe result or a
    treebank, refused before the model loads (so a bad DEV costs no model time) when it holds ``report_on``'s
    sentences, the run's units (None: BLiMP's pairs, never a treebank's); a result file also by ``analysis``'s
    checks (:class:`ChoosingHeads`)."""
    if not select_on:
        raise ProbingError("--chosen chooses heads on DEV: give --select-on DEV (a probe result JSON, or a treebank "
                           "such as en_ewt:dev)", source="--select-on")
    return HeldOut.open_dev(report_on, select_on, limit=limit, analysis=analysis)


DEV_MAY_DIFFER = ("relations", "offsets")
"""A DEV result's config fields that need not be this run's: it may hold more relations than --chosen names,
and ablation chooses heads only (offsets choose nothing here)."""


@dataclasses.dataclass(frozen=True)
class ChosenOn:
    """Per relation, DEV's entry as a probe result holds it (``relations``), and what DEV was: ``select_on`` as
    given, the ``sentences`` it was scored on and the ``limit`` that cut them (None: the whole DEV), this run's
    --select-limit for a treebank, the scoring run's for a result file (``treebank``: the file it was made of)."""

    relations: dict
    select_on: str
    sentences: int
    limit: int | None
    treebank: str | None = None

    def describe(self, conditions) -> str:
        """The line a run prints before its pass: which heads each chosen set holds (from 1, as in the tables), and
        on how many DEV sentences they were chosen.

        >>> from probing.analyses.ablation.conditions import Condition
        >>> on = ChosenOn({}, "en_ewt:dev", 30, 30)
        >>> print(on.describe([Condition("det@2:chosen", ((0, 1), (2, 3))), Condition("det@2:random0", ((0, 2),))]))
        heads chosen on DEV (en_ewt:dev, 30 sentences: its first 30, --select-limit 30): det@2 1-2 3-4
        >>> print(ChosenOn({}, "en_ewt:dev", 2001, None).describe([]))
        heads chosen on DEV (en_ewt:dev, 2,001 sentences: all of it; --select-limit N takes its first N):
        """
        sets = "; ".join(f"{condition.label.rsplit(':', 1)[0]} " + " ".join(head_name(*head) for head in condition.heads)
                         for condition in conditions if condition.label.endswith(":chosen"))
        if self.treebank is not None:  # a result file: its own run's limit, not this one's
            cut = f" of {self.treebank}" + (f", scored with --limit {self.limit}" if self.limit is not None else "")
        else:
            cut = (f": its first {self.limit}, --select-limit {self.limit}" if self.limit is not None
                   else ": all of it; --select-limit N takes its first N")
        return f"heads chosen on DEV ({self.select_on}, {self.sentences:,} sentences{cut}): {sets}"


@dataclasses.dataclass
class ChoosingHeads(Choosing):
    """The ablation's choice on DEV for :class:`~probing.stats.heldout.HeldOut`: each relation's counts as a probe
    result holds them (:class:`ChosenOn`), which --chosen's sets are chosen from; the ablation's report
    (probing.analyses.ablation.run) builds on it.

    A DEV result file is checked as ``probing score --select-on`` checks one
    (:func:`~probing.stats.heldout.check_dev_test`): not one shard, read with this run's options (``planned``: its
    config and model fields known before loading), of its model once loaded, holding every one of ``relations`` and
    as many heads as the largest of ``sizes``; ``limit`` (--select-limit) cuts a treebank DEV only. A treebank DEV
    is scored with ``engine_run``'s loaded model and reading (a probing.engine.run.EngineRun; never sharded: every
    process must choose the same heads).
    """

    relations: tuple = ()
    sizes: tuple = ()
    limit: int | None = None
    planned: dict | None = None
    engine_run: object = None

    def check_dev(self, dev: dict, held: HeldOut) -> None:
        if self.limit is not None:
            raise ProbingError(f"cuts a treebank DEV only: {held.select_on} is a result, scored on the sentences its "
                               "own run read; drop --select-limit", source="--select-limit")
        check_dev_test(dev, self.planned or {}, source=held.where, may_differ=DEV_MAY_DIFFER,
                       relations=self.relations, planned=True, run="this run")
        heads = dev["model"]["num_layers"] * dev["model"]["num_heads"]
        if max(self.sizes, default=1) > heads:
            raise ProbingError(f"k must be between 1 and the model's {heads} heads (its DEV result has "
                               f"{dev['model']['num_layers']}x{dev['model']['num_heads']}), got {max(self.sizes)}",
                               source="--k")

    def check_model(self, loaded, held: HeldOut) -> None:
        if held.dev_result is not None:  # a DEV result of other weights chooses other heads
            check_dev_model(held.dev_result, loaded, source=held.where, run="this run")

    def chosen_in(self, held: HeldOut) -> ChosenOn:
        """DEV's counts per relation as its result file holds them, and the treebank it was made of."""
        result = held.dev_result
        made_of = result["input"].get("given_as") or result["input"].get("file") or result["input"]["path"]
        return ChosenOn(result["relations"], held.select_on, result["input"]["units_used"],
                        result["input"].get("limit"), made_of)

    def choose(self, held: HeldOut, loaded) -> ChosenOn:
        """DEV's counts per relation (``heads`` per direction, a decoder's ``causal``): one pass of
        :class:`~probing.analyses.probe.accumulator.ProbeAccumulator` over DEV's treebank."""
        from probing.analyses.probe.accumulator import ProbeAccumulator
        from probing.analyses.probe.counts import OFFSETS
        from probing.engine.readings import READINGS

        engine_run = self.engine_run
        heads = READINGS[engine_run.options().attention].heads(loaded.num_heads)
        probe = ProbeAccumulator.create(tuple(self.relations), loaded.num_layers, heads, offsets=OFFSETS, bootstrap=0,
                                        seed=0, causal=loaded.is_causal)
        stats = engine_run.run([probe], "scoring DEV to choose the heads", source=held.dev_source, shard=None)
        return ChosenOn(engine_run.share(probe.result()["relations"]), held.select_on, stats.units_used,
                        held.dev_source.limit)
