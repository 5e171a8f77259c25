"""A ``probing trees`` run over a loaded model: choose on DEV (or in-sample), report on TEST.

Pass 1 over the treebank chooses on counts every head as a tree and collects the relations and the probes'
examples; pass 2 keeps the ensemble candidates' attention; the search and the probes' training then run on
rank 0, and every process receives the selection. Held out, one more pass reports the selection on TEST with
its bootstrap. The command (probing.commands.trees) plans the inputs and writes what :func:`run_trees` gives.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from probing.analyses.trees.accumulator import TreesAccumulator
from probing.analyses.trees.options import TreesOptions
from probing.analyses.trees.selection import TreeOptions, check_selection, probe_modules
from probing.data.inputs import InputSource
from probing.engine.options import PassOptions
from probing.engine.progress import timing
from probing.engine.readings import READINGS
from probing.engine.run import start_run
from probing.engine.specs import InputSpec, ModelSpec
from probing.stats.bootstrap import BootstrapSpec
from probing.stats.heldout import HeldOut


@dataclass(frozen=True)
class TreesRun:
    """What a trees run chooses on and reports on.

    ``heldout``: the treebank reported on (TEST, or the in-sample treebank) and DEV, a treebank or the selection of
    a result file (probing.stats.heldout.HeldOut, the held-out flow of every analysis); ``reading``:
    ``{"attention", "pool_from"}``; ``bootstrap``: TEST's replicates (0: none).
    """

    heldout: HeldOut
    options: TreeOptions
    vectors: object
    reading: dict
    bootstrap: int
    seed: int
    shard: tuple[int, int] | None = None

    @classmethod
    def plan(cls, treebank: str | None, select_on: str | None, *, limit: int | None, options: TreeOptions,
             reading: dict, **rest) -> "TreesRun":
        """``--treebank`` and ``--select-on`` through the held-out flow: DEV is a treebank or a result file, whose
        selection must fit these options (its model is checked once loaded), and holds none of the sentences
        reported on; ``rest``: vectors, bootstrap, seed, shard."""
        from probing.analyses.trees.selection import read_selection

        heldout = HeldOut.plan(treebank, select_on, limit=limit, read_dev=lambda path: read_selection(path)[1],
                               sentences_of=lambda selection: selection["made_on"])
        if heldout.dev_result is not None:
            check_selection(heldout.dev_result, options, reading, source=heldout.where)
        return cls(heldout=heldout, options=options, reading=reading, **rest)

    @property
    def source(self) -> InputSource:
        """The treebank reported on."""
        return self.heldout.source

    @property
    def select_on(self) -> str | None:
        return self.heldout.select_on

    @property
    def dev_path(self) -> str | None:
        """The DEV file read (checked as an input before any output is written), or None."""
        return self.heldout.dev_path


def run_trees(engine_run, run: TreesRun) -> dict | None:
    """The trees result of ``run`` through ``engine_run`` (a probing.engine.run.EngineRun over ``run.source``: the
    model, the pass options, checkpoints and the processes of a torchrun); None in processes other than rank 0."""
    loaded = engine_run.loaded
    heads = READINGS[run.reading["attention"]].heads(loaded.num_heads)
    bootstrap = BootstrapSpec(run.bootstrap, run.seed) if run.bootstrap else None
    shown = engine_run.options().progress  # the main process, unless --no-progress (--quiet)

    def log(text: str) -> None:  # what each stage took
        timing(f"probing trees: {text}", enabled=shown)
    if not run.select_on:
        trees = TreesAccumulator(loaded.num_layers, heads, bootstrap=bootstrap, causal=loaded.is_causal)
        stats, selection = _choose_on(engine_run, run.source, trees, run.options, run.vectors, run.reading,
                                      shard=run.shard, choose=run.shard is None, log=log)
        trees.selection = selection
    else:
        from_file = run.heldout.dev_result is not None
        if from_file:  # a DEV result of other weights chose other heads: refused before any pass
            check_selection(run.heldout.dev_result, run.options, run.reading, source=run.heldout.where, loaded=loaded)

        def choose_on_dev(dev_source):
            dev_trees = TreesAccumulator(loaded.num_layers, heads, causal=loaded.is_causal)
            return _choose_on(engine_run, dev_source, dev_trees, run.options, run.vectors, run.reading, shard=None,
                              choose=True, log=log)[1]

        selection = {**run.heldout.chosen_on(choose_on_dev),
                     "source": {"select_on": run.select_on, "result": run.select_on if from_file else None}}
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


def trees(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: TreesOptions, *,
          start=start_run) -> dict | None:
    """The trees result of ``model`` on the treebank of ``inputs``, with ``passes`` and ``options``: held
    out when ``options.select_on`` or a bare treebank name says so, else in-sample. ``start`` starts the run
    (probing.engine.run.start_run unless a command checks its outputs first); None in a torchrun process other
    than rank 0. What ``probing trees`` and ``probing.trees`` both run."""
    from probing.analyses.trees.probes import PROBES
    from probing.analyses.trees.selection import vector_source, without_probe_weights
    from probing.data.relations import check_relation_names

    vectors = vector_source(options.word_vectors)
    described = {key: value for key, value in vectors.describe().items() if key != "file"}
    tree_options = TreeOptions(relations=check_relation_names(options.relations), ensemble_size=options.ensemble_size,
                               candidates=options.candidates, probes=() if options.no_probes else PROBES,
                               probe_epochs=options.probe_epochs, seed=model.seed,
                               word_vectors=described if not options.no_probes else {"source": "input_embeddings"})
    plan = TreesRun.plan(inputs.treebank, options.select_on, limit=inputs.limit, options=tree_options,
                         reading={"attention": passes.attention, "pool_from": passes.pool_from}, vectors=vectors,
                         bootstrap=options.bootstrap, seed=model.seed, shard=passes.shard)
    engine_run = start(model, plan.source, passes, reads=(options.word_vectors, plan.dev_path))
    result = run_trees(engine_run, plan)
    if result is not None and options.drop_probe_weights and result.get("selection"):
        result["selection"] = without_probe_weights(result["selection"])
    return result
