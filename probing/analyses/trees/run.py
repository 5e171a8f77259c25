"""A ``probing trees`` run over a loaded model: choose on DEV (or in-sample), report on TEST.

Pass 1 over the treebank chooses on counts every head as a tree and collects the relations and the probes'
examples; pass 2 keeps the ensemble candidates' attention; the search and the probes' training then run on
rank 0, and every process receives the selection. Held out, one more pass reports the selection on TEST with
its bootstrap. :class:`TreesChoosing` hands that choice and that report to the one held-out sequence
(:class:`probing.stats.heldout.HeldOut`), which runs in-sample runs too (nothing to choose on DEV).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from probing.analyses.trees.accumulator import TreesAccumulator
from probing.analyses.trees.options import TreesOptions
from probing.analyses.trees.selection import TreeOptions, check_selection, probe_modules
from probing.engine.options import PassOptions
from probing.engine.progress import timing
from probing.engine.readings import READINGS
from probing.engine.run import start_run
from probing.engine.specs import InputSpec, ModelSpec
from probing.stats.bootstrap import BootstrapSpec
from probing.stats.heldout import Choosing, HeldOut


@dataclass(frozen=True)
class TreesChoosing(Choosing):
    """What a trees run chooses and reports, for :class:`~probing.stats.heldout.HeldOut`: the selection (single
    heads as trees, ensembles, probes) made on DEV or read from DEV's trees result, whose options and reading must
    be this run's (its model is checked once loaded); the selection evaluated on TEST with its bootstrap. In-sample,
    the selection is made and measured on the units themselves.

    ``options``: the TreeOptions; ``reading``: ``{"attention", "pool_from"}``; ``bootstrap``: TEST's replicates
    (0: none); ``engine_run``: the run whose model every pass shares (None while only DEV's file is read).
    """

    options: TreeOptions
    vectors: object
    reading: dict
    bootstrap: int
    seed: int
    shard: tuple[int, int] | None = None
    engine_run: object = None

    def read_dev(self, path: str) -> dict:
        """The selection a trees result of DEV holds."""
        from probing.analyses.trees.selection import read_selection

        return read_selection(path)[1]

    def dev_sentences(self, dev: dict) -> dict:
        return dev["made_on"]

    def check_dev(self, dev: dict, held: HeldOut) -> None:
        check_selection(dev, self.options, self.reading, source=held.where)

    def check_model(self, loaded, held: HeldOut) -> None:
        if held.dev_result is not None:  # a DEV result of other weights chose other heads: refused before any pass
            check_selection(held.dev_result, self.options, self.reading, source=held.where, loaded=loaded)

    def heads(self, loaded) -> int:
        return READINGS[self.reading["attention"]].heads(loaded.num_heads)

    def log(self, text: str) -> None:
        """What each stage took, shown by the main process unless --no-progress (--quiet)."""
        timing(f"probing trees: {text}", enabled=self.engine_run.options().progress)

    def choose(self, held: HeldOut, loaded) -> dict:
        dev_trees = TreesAccumulator(loaded.num_layers, self.heads(loaded), causal=loaded.is_causal)
        return _choose_on(self.engine_run, held.dev_source, dev_trees, self.options, self.vectors, self.reading,
                          shard=None, choose=True, log=self.log)[1]

    def report(self, chosen, held: HeldOut, loaded) -> dict | None:
        engine_run, heads = self.engine_run, self.heads(loaded)
        bootstrap = BootstrapSpec(self.bootstrap, self.seed) if self.bootstrap else None
        if chosen is None:
            trees = TreesAccumulator(loaded.num_layers, heads, bootstrap=bootstrap, causal=loaded.is_causal)
            stats, selection = _choose_on(engine_run, held.source, trees, self.options, self.vectors, self.reading,
                                          shard=self.shard, choose=self.shard is None, log=self.log)
            trees.selection = selection
        else:
            selection = {**chosen, "source": {"select_on": held.select_on, "result": held.result_path}}
            trees = TreesAccumulator(loaded.num_layers, heads, bootstrap=bootstrap, causal=loaded.is_causal,
                                     selection=selection, evaluate=True,
                                     probe_modules=probe_modules(selection, loaded.num_layers, heads),
                                     vectors=self.vectors)
            started = time.perf_counter()
            stats = engine_run.run([trees], "trees: reporting on TEST")
            self.log(f"TEST pass ({stats.units_used} sentences, every counter): {time.perf_counter() - started:.1f} s")
        if not engine_run.is_main:
            return None
        config = {"mode": "heldout" if held.select_on else "in_sample", **self.options.as_dict(),
                  "bootstrap": self.bootstrap, "stack": loaded.stack}
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
    choosing = TreesChoosing(tree_options, vectors, {"attention": passes.attention, "pool_from": passes.pool_from},
                             bootstrap=options.bootstrap, seed=model.seed, shard=passes.shard)
    held = HeldOut.plan(inputs.treebank, options.select_on, limit=inputs.limit, analysis=choosing)
    engine_run = start(model, held.source, passes, reads=(options.word_vectors, held.dev_path))
    result = held.run(dataclasses.replace(choosing, engine_run=engine_run), load=lambda: engine_run.loaded)
    if result is not None and options.drop_probe_weights and result.get("selection"):
        result["selection"] = without_probe_weights(result["selection"])
    return result
