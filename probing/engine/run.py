"""One run of an analysis: a model loaded for a spec, passes over opened units, the result's common blocks.

Every way of running an analysis goes through :class:`EngineRun`: an analysis's library function starts one with
:func:`start_run` (``probing.run``) or with its command's ``EngineCommand.start`` (which checks the outputs
first), and the held-out passes of trees, coref and the ablation's DEV run on it. It is built from plain values,
so an analysis handed one never sees the command line: :class:`ModelSpec` (which model and how to load it), the opened
:class:`~probing.data.inputs.InputSource`, the pass's :class:`~probing.engine.options.PassOptions`, and the
processes of a torchrun (:class:`~probing.engine.distributed.Ranks`) with the checkpoint hooks. Its passes are over
units (:meth:`EngineRun.run`) or over minimal pairs (:meth:`EngineRun.run_pairs`: ``probing pairs``, the ablation's
minimal-pair metric).

>>> from probing.data.inputs import InputSource, sample_treebank_path
>>> from probing.engine.options import PassOptions
>>> run = EngineRun(ModelSpec(), InputSource.treebank(str(sample_treebank_path())), PassOptions(batch_size=8))
>>> run.is_main, run.options("scoring").description, run.options().batch_size
(True, 'scoring', 8)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from probing.data.inputs import InputSource
from probing.engine.distributed import Ranks
from probing.engine.options import PassOptions
from probing.engine.passes import PassHooks
from probing.engine.specs import ModelSpec


class EngineRun:
    """The run of one analysis over ``source``: the model of ``model`` loaded on first use, passes with
    ``pass_options``, and the result's common blocks.

    ``ranks`` are the processes of a torchrun (default: this process alone); ``hooks`` the passes' hooks
    (checkpoints, ranks; None: those of the enclosing probing.engine.passes.using_hooks block); ``loaded`` a
    model already loaded for ``model`` (DEV and TEST of one held-out run share it). ``pass_options.progress``
    says whether progress is wanted: only the main process shows it.
    """

    def __init__(self, model: ModelSpec, source: InputSource, pass_options: PassOptions | None = None, *,
                 ranks: Ranks | None = None, hooks: PassHooks | None = None, loaded=None):
        self.model, self.source, self.pass_options = model, source, pass_options or PassOptions()
        self.ranks = ranks or Ranks(device=model.device)
        self.hooks = hooks
        self._loaded = loaded

    @property
    def loaded(self):
        """The model, loaded on first use while the units are read through."""
        return self.load()

    def load(self, *also: InputSource):
        """The model, loaded once while ``also`` (DEV's units of a held-out run) and the run's units are read
        through, so that a bad line in any of them costs no model time."""
        if self._loaded is None:
            self._loaded = self.model.load([*also, self.source], announce=self.pass_options.progress and self.is_main)
        return self._loaded

    def beside(self, source: InputSource, **changes) -> "EngineRun":
        """A run over ``source`` with this run's model (loaded once for both), processes and hooks, ``changes`` to
        its pass options: DEV's pass of a held-out run (never sharded: ``shard=None``)."""
        return EngineRun(self.model, source, dataclasses.replace(self.pass_options, **changes), ranks=self.ranks,
                         hooks=self.hooks, loaded=self.loaded)

    @property
    def is_main(self) -> bool:
        """Whether this process reports (rank 0 of a torchrun)."""
        return self.ranks.is_main

    def share(self, value):
        """Rank 0's ``value`` in every process (a choice every process must make alike)."""
        return self.ranks.share(value)

    def options(self, description: str = "reading", **changes) -> PassOptions:
        """The pass's options under ``description``, progress shown by the main process only; ``changes``: fields
        that differ for one pass (DEV's is never sharded: ``shard=None``)."""
        return dataclasses.replace(self.pass_options, description=description,
                                   progress=self.pass_options.progress and self.is_main, **changes)

    def run(self, accumulators, description: str = "reading", *, source: InputSource | None = None,
            length_option: str | None = None, **changes):
        """One pass over ``source`` (default: the run's units) into ``accumulators``, with :meth:`options`;
        its statistics. A pass that scored no unit is refused (probing.engine.passes.require_units, naming
        ``length_option`` when that option, not --max-length, set ``max_length``)."""
        from probing.engine.passes import require_units, run_pass

        source = source or self.source
        options = self.options(description, **changes)
        stats = run_pass(self.loaded, source, accumulators, options, hooks=self.hooks)
        require_units(stats, source, options, length_option)
        return stats

    def run_pairs(self, accumulators, pairs, *, pairs_per_batch: int, by_length: bool, description: str = "scoring"):
        """One pass over minimal ``pairs`` (encoded) into ``accumulators`` (probing.engine.pair_passes), with the
        run's model, hooks and progress; its statistics, its units the pairs. One process scores every pair: a
        torchrun is refused."""
        from probing.engine.pair_passes import run_pair_pass
        from probing.errors import ProbingError

        if self.ranks.active:  # every rank would score every pair, and their sums would count each pair again
            raise ProbingError("minimal pairs are scored in one process, not under torchrun", source="torchrun")

        return run_pair_pass(self.loaded, pairs, accumulators, pairs_per_batch=pairs_per_batch, by_length=by_length,
                             hooks=self.hooks, progress=self.options(description).progress, description=description)

    def result(self, analysis: str, stats, accumulator, config: dict, *, source: InputSource | None = None,
               **changes) -> dict:
        """The result of ``analysis``: the common blocks (probing.results.io.provenance) of a pass over ``source``
        (default: the run's units) with ``changes`` to the options, ``config`` over the options' part, the limit
        and seed, and the accumulator's payload."""
        from probing.results.io import provenance

        source = source or self.source
        result = provenance(analysis, self.loaded, source, stats, {**self.options(**changes).config(), **config})
        result["config"].update({"limit": source.limit, "seed": self.model.seed})
        result.update(accumulator.result())
        return result


def start_run(model: ModelSpec, source: InputSource, passes: PassOptions, *, reads: Sequence[str | None] = ()) -> EngineRun:
    """How an analysis's library function starts its run unless told otherwise (the Python API): in this process,
    without checkpoints. ``reads`` names the other files the run reads (a DEV result, word vectors), which matter
    to a caller that writes outputs (probing.commands.common.EngineCommand.start refuses an output among them)."""
    return EngineRun(model, source, passes)
