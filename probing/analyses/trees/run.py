"""A ``probing trees`` run over a loaded model: choose on DEV (or in-sample), report on TEST.

Pass 1 over the treebank chooses on counts every head as a tree and collects the relations and the probes'
examples; pass 2 keeps the ensemble candidates' attention; the search and the probes' training then run on
rank 0, and every process receives the selection. Held out, one more pass reports the selection on TEST with
its bootstrap. The command (probing.commands.trees) plans the inputs and writes what :func:`run_trees` gives.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from probing.analyses.trees.accumulator import TreesAccumulator
from probing.analyses.trees.selection import TreeOptions, check_selection, probe_modules
from probing.data.inputs import InputSource
from probing.engine.readings import READINGS
from probing.stats.bootstrap import BootstrapSpec


@dataclass(frozen=True)
class TreesRun:
    """What a trees run chooses on and reports on.

    ``source``: the treebank reported on (TEST, or the in-sample treebank); ``select_on``: DEV as the user gave
    it (None: in-sample); ``dev_source``: the DEV treebank, or ``dev_selection``: the selection of a DEV result
    file; ``reading``: ``{"attention", "pool_from"}``; ``bootstrap``: TEST's replicates (0: none).
    """

    source: InputSource
    select_on: str | None
    dev_source: InputSource | None
    dev_selection: dict | None
    options: TreeOptions
    vectors: object
    reading: dict
    bootstrap: int
    seed: int
    shard: tuple[int, int] | None = None

    @classmethod
    def plan(cls, treebank: str | None, select_on: str | None, *, limit: int | None, options: TreeOptions,
             reading: dict, **rest) -> "TreesRun":
        """``--treebank`` and ``--select-on`` as the held-out rules read them: DEV is a result file (its selection,
        checked to fit these options and not to be of the treebank reported on) or a treebank (not the same
        sentences as the one reported on); ``rest``: vectors, bootstrap, seed, shard."""
        from probing.analyses.trees.selection import read_selection
        from probing.data.inputs import sample_treebank_path
        from probing.stats.heldout import check_other_sentences, is_result_file, plan

        treebank, select_on = plan(treebank, select_on)
        source = InputSource.treebank(treebank or str(sample_treebank_path()), limit=limit)
        dev_source = dev_selection = None
        if select_on and is_result_file(select_on):
            _, dev_selection = read_selection(select_on)
            check_selection(dev_selection, options, reading, source=f"--select-on {select_on}",
                            report_on_sha256=source.sha256)
        elif select_on:
            dev_source = InputSource.treebank(select_on, limit=limit, option="--select-on")
            check_other_sentences(dev_source, source, source=f"--select-on {select_on}")
        return cls(source=source, select_on=select_on, dev_source=dev_source, dev_selection=dev_selection,
                   options=options, reading=reading, **rest)

    @property
    def dev_path(self) -> str | None:
        """The DEV file read (checked as an input before any output is written), or None."""
        if self.dev_selection is not None:
            return self.select_on
        return str(self.dev_source.path) if self.dev_source else None


def run_trees(engine_run, run: TreesRun) -> dict | None:
    """The trees result of ``run`` through ``engine_run`` (a probing.engine.run.EngineRun over ``run.source``: the
    model, the pass options, checkpoints and the processes of a torchrun); None in processes other than rank 0."""
    loaded = engine_run.loaded
    heads = READINGS[run.reading["attention"]].heads(loaded.num_heads)
    bootstrap = BootstrapSpec(run.bootstrap, run.seed) if run.bootstrap else None
    log = (lambda text: print(f"probing trees: {text}", file=sys.stderr)) if engine_run.is_main else (lambda text: None)
    if not run.select_on:
        trees = TreesAccumulator(loaded.num_layers, heads, bootstrap=bootstrap, causal=loaded.is_causal)
        stats, selection = _choose_on(engine_run, run.source, trees, run.options, run.vectors, run.reading,
                                      shard=run.shard, choose=run.shard is None, log=log)
        trees.selection = selection
    else:
        if run.dev_selection is None:
            dev_trees = TreesAccumulator(loaded.num_layers, heads, causal=loaded.is_causal)
            _, selection = _choose_on(engine_run, run.dev_source, dev_trees, run.options, run.vectors, run.reading,
                                      shard=None, choose=True, log=log)
            selection = {**selection, "source": {"select_on": run.select_on, "result": None}}
        else:
            check_selection(run.dev_selection, run.options, run.reading, source=f"--select-on {run.select_on}",
                            loaded=loaded)
            selection = {**run.dev_selection, "source": {"select_on": run.select_on, "result": run.select_on}}
        trees = TreesAccumulator(loaded.num_layers, heads, bootstrap=bootstrap, causal=loaded.is_causal,
                                 selection=selection, evaluate=True,
                                 probe_modules=probe_modules(selection, loaded.num_layers, heads), vectors=run.vectors)
        started = time.perf_counter()
        stats = engine_run.run([trees], "trees: reporting on TEST")
        log(f"TEST pass ({stats.units_used} sentences, every counter): {time.perf_counter() - started:.1f} s")
    if not engine_run.is_main:
        return None
    config = {"mode": "heldout" if run.select_on else "in_sample", **run.options.as_dict(), "bootstrap": run.bootstrap,
              "stack": loaded.stack}
    return engine_run.result("trees", stats, trees, config)


def _choose_on(engine_run, source, trees, options, vectors, reading: dict, *, shard, choose: bool, log):
    """The selection passes over ``source`` (see probing.analyses.trees.selection): pass 1 counts every head as a
    tree, the relations and the probes' examples; unless ``choose`` is False (a shard chooses nothing), pass 2
    keeps the ensemble candidates' attention, then the search and the probes' training run on rank 0 and every
    process receives the selection. Returns pass 1's statistics and the selection (None when not choosing)."""
    from probing.analyses.probe.accumulator import ProbeAccumulator
    from probing.analyses.trees.selection import CollectorAccumulator, ExamplesAccumulator, ensemble_candidates
    from probing.analyses.trees.selection import choose as make_selection

    loaded, heads = engine_run.loaded, trees.shape[1]
    relations = ProbeAccumulator.create(options.relations, loaded.num_layers, heads, offsets=(), bootstrap=0,
                                        seed=options.seed, causal=loaded.is_causal) if choose else None
    examples = ExamplesAccumulator(vectors) if choose and options.probes else None
    accumulators = [accumulator for accumulator in (trees, relations, examples) if accumulator is not None]
    what = "every head as a tree" + (", relations, probe examples" if choose else "")
    stats = _pass(engine_run, source, accumulators, shard, f"trees: {what}", log)
    if not choose:
        return stats, None
    collector = CollectorAccumulator(ensemble_candidates(relations, options.candidates), loaded.is_causal)
    _pass(engine_run, source, [collector], shard, "trees: ensemble candidates' attention", log)
    selection = None
    if engine_run.is_main:
        made_on = {"path": source.recorded_path, "sha256": source.sha256, "given_as": source.given_as,
                   "limit": source.limit, "units_total": stats.units_total, "units_used": stats.units_used,
                   "sentences": trees.single.sentences, "words": trees.single.total}
        selection = make_selection(trees, collector, examples, options, loaded=loaded, num_heads=heads,
                                   reading=reading, made_on=made_on, vectors=vectors, log=log)
    return stats, engine_run.share(selection)


def _pass(engine_run, source, accumulators, shard, description: str, log):
    started = time.perf_counter()
    stats = engine_run.run(accumulators, description, source=source, shard=shard)
    log(f"{description} on {source.path.name} ({stats.units_used} sentences): {time.perf_counter() - started:.1f} s")
    return stats
