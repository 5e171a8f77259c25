"""An ablation as a library call: disable heads, measure what a metric loses, with paired intervals.

``ablation(ModelSpec(...), InputSpec(limit=100), PassOptions(), AblationOptions(metric="probe", each_layer=True))``
is ``probing ablate --metric probe --each-layer --limit 100``; tests/test_api.py compares the two.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from probing.analyses.ablation.choosing import ChoosingHeads
from probing.analyses.ablation.options import AblationOptions
from probing.analyses.pairs.options import (
    PAIR_SET_OPTIONS,
    check_pairs_file_alone,
    chosen_pair_set,
    pair_set_inputs,
    sources_of,
)
from probing.engine.options import PassOptions
from probing.engine.run import start_run
from probing.engine.specs import InputSpec, ModelSpec
from probing.errors import ProbingError

NEEDS = {"lm": "causal_lm", "minimal-pairs": "causal_lm", "mlm": "masked_lm"}
"""The language-model head each LM metric reads."""


def ablation(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: AblationOptions, *,
             start=start_run, say=None) -> dict | None:
    """The ablation result of ``model`` under the conditions of ``options`` (None in a torchrun process other than
    rank 0); ``say`` receives what the command line shows before the pass (the chosen sets, with --chosen). With
    --chosen, DEV is planned and checked before the model loads, and the heads are chosen on it and measured by the
    one held-out sequence (probing.stats.heldout.HeldOut); without it, that sequence has nothing to choose."""
    from probing.stats.heldout import HeldOut

    metric, source, pairs, described = _checked_metric(model, inputs, passes, options)
    run = start(dataclasses.replace(model, head=metric.head), source or inputs.open(), passes,
                reads=_input_files(options))
    random_init = run.model.random_init
    ablating = Ablating(relations=options.chosen, sizes=options.k, limit=options.select_limit, engine_run=run,
                        planned={"model": {"random_init": random_init},
                                 "config": {**run.options().config(), "random_init": random_init}},
                        metric=metric, options=options, seed=model.seed, pairs=pairs, described=described, say=say)
    held = _dev(options, run, pairs, ablating) if options.chosen else HeldOut(run.source)  # before the model loads
    return held.run(ablating, load=lambda: run.loaded)


@dataclasses.dataclass(kw_only=True)
class Ablating(ChoosingHeads):
    """The ablation's report for the held-out sequence (probing.stats.heldout.HeldOut), beside its choice on DEV
    (:class:`~probing.analyses.ablation.choosing.ChoosingHeads`): the metric checked on the loaded model, the
    conditions (--chosen's sets from DEV's counts), the pass, the result, and with --chosen its ``versus`` block."""

    metric: object
    options: AblationOptions
    seed: int
    pairs: list | None = None
    described: dict | None = None
    say: object = None

    def check_model(self, loaded, held) -> None:
        super().check_model(loaded, held)
        self.metric.setup(loaded)

    def report(self, chosen, held, loaded) -> dict | None:
        from probing.analyses.ablation.accumulator import AblationAccumulator
        from probing.analyses.ablation.minimal_pairs import context_block, encoded_pairs, pairs_input_block
        from probing.analyses.ablation.scores import replicates_kept, scores_only_state
        from probing.engine.readings import READINGS
        from probing.stats.intervals import bootstrap_block

        run, options, metric, pairs, seed = self.engine_run, self.options, self.metric, self.pairs, self.seed
        passes = run.pass_options
        layers, heads = loaded.num_layers, READINGS[passes.attention].heads(loaded.num_heads)
        conditions = _conditions(options, layers, heads, chosen and chosen.relations, seed=seed)
        if chosen and run.is_main and self.say:
            self.say(chosen.describe(conditions[1:]))
        accumulator = AblationAccumulator(metric, conditions, layers, heads, bootstrap=options.bootstrap, seed=seed,
                                          causal=loaded.is_causal, pool_from=passes.pool_from)
        if pairs is None:
            stats = run.run([accumulator], f"{len(conditions)} conditions")
        else:
            stats = run.run_pairs([accumulator], encoded_pairs(loaded, pairs), pairs_per_batch=passes.batch_size,
                                  by_length=False, description=f"{len(conditions)} conditions")
        if not run.is_main:
            return None
        config = {"metric": options.metric, "metric_options": {"seed": seed, "mask_rate": options.mask_rate,
                                                               "relations": list(options.relations)},
                  "bootstrap": bootstrap_block(options.bootstrap, seed),
                  **({"select_on": options.select_on, "select_limit": options.select_limit} if options.chosen else {})}
        if pairs is not None:
            config["metric_options"]["layout"] = metric.layout
        result = run.result("ablation", stats, accumulator, config)
        if pairs is not None:
            result["input"] = pairs_input_block(pairs, self.described)
            result["metric"].update(context_block(loaded))  # what every sentence was scored after, and its token
        if options.scores_only:
            result["state"] = scores_only_state(*accumulator.scores()[:2], kept=replicates_kept(result["conditions"]))
        return result

    def attach(self, result: dict, chosen, held) -> dict:
        """The chosen sets against random ones; the block reads --match back from the options (the command and
        probing.run record them all)."""
        from probing.analyses.ablation.versus import versus_block

        result["config"]["options"] = {"match": self.options.match}
        result["versus"] = versus_block(result)
        return result


def _checked_metric(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: AblationOptions):
    """The metric of ``--metric`` after every check of the options, and its input: (metric, a labelled source or
    None, the minimal pairs or None, their input description or None)."""
    from probing.analyses.ablation.metrics import METRICS
    from probing.data.inputs import InputSource

    if passes.attention != "weights":
        raise ProbingError("heads are disabled in the attention weights; --attention must be weights here",
                           source="--attention")
    if options.scores_only and passes.shard:
        raise ProbingError("a shard's result is merged, and scores do not add up: drop --scores-only",
                           source="--scores-only")
    _check_model_for(model, options.metric)
    source = None
    if options.metric == "classification":
        if not options.labels:
            raise ProbingError("--metric classification reads a labelled CSV: give --labels FILE.csv", source="--labels")
        source = InputSource.labelled(options.labels, limit=inputs.limit)
    elif options.labels:
        raise ProbingError("--labels is the input of --metric classification only", source="--labels")
    if options.metric == "minimal-pairs":
        pairs, described = _minimal_pairs(inputs, passes, options)
        return METRICS[options.metric].of_pairs(pairs), None, pairs, described
    for name in ("blimp", "paradigms", "phenomena", *PAIR_SET_OPTIONS, "pairs_file"):
        if getattr(options, name):
            flag = "--" + name.replace("_", "-")
            raise ProbingError(f"{flag} is an input of --metric minimal-pairs only", source=flag)
    metric = METRICS[options.metric](seed=model.seed, mask_rate=options.mask_rate, relations=options.relations)
    if metric.needs_trees and inputs.text:
        raise ProbingError("--metric probe needs a treebank (its trees), not --text", source="--text")
    return metric, source, None, None


def _input_files(options: AblationOptions) -> tuple[str, ...]:
    """What the run reads besides its units and the model: DEV of --select-on (a result file or a treebank file)
    and the pairs' files (a pair set's folder, the treebanks pairs are made from, one's own pair file); no output
    may be one of them (a named DEV, en_ewt:dev, is a treebank, which no result replaces either)."""
    dev = options.select_on if options.select_on and Path(options.select_on).expanduser().exists() else None
    pairs = [str(path) for path in pair_set_inputs(options)] if options.metric == "minimal-pairs" else []
    return tuple(path for path in (dev, *pairs) if path)


def _check_model_for(model: ModelSpec, metric: str) -> None:
    """A model on this machine (a folder, or a hub id's cached folder) whose config.json says it is the other kind
    of language model than ``metric`` reads (or whose weights lack the masked-LM head --metric mlm reads) is
    refused now, before it loads, suggesting only a metric that would run on it."""
    from probing.engine.startup import model_name
    from probing.model.heads import folder_has_head, folder_language_model
    from probing.model.hub import default_model_path, local_folder

    needed = NEEDS.get(metric)
    given = model.model if model.model is not None else str(default_model_path())
    folder = needed and local_folder(given, model.revision)
    kind = folder and folder_language_model(folder)
    if not kind:
        return
    name, option = model_name(model.model), f"--metric {metric}"
    masked_head = folder_has_head(folder, "masked_lm") if kind == "masked_lm" else None
    probe = "--metric probe (the heads' syntax on a treebank) runs on any model"
    if needed == "causal_lm" and kind == "masked_lm":
        otherwise = "use --metric mlm" if masked_head is not False else f"it has no trained masked-LM head either: {probe}"
        raise ProbingError(f"{name} is not a causal LM (its config.json says so); {otherwise}", source=option)
    if needed == "masked_lm" and kind == "causal_lm":
        raise ProbingError(f"{name} is a causal LM, not a masked one (its config.json says so); use --metric lm",
                           source=option)
    if needed == "masked_lm" and masked_head is False:
        raise ProbingError(f"{name} has no trained masked-LM head (none of its weights is one; sentence-embedding "
                           f"checkpoints such as all-MiniLM-L6-v2 keep only the encoder): {probe}", source=option)


def _minimal_pairs(inputs: InputSpec, passes: PassOptions, options: AblationOptions):
    """The pairs of --pair-set (BLiMP by default) or --pairs-file, --paradigms or --phenomena and the first --limit
    of each, as probing pairs reads them, and their input description."""
    from probing.analyses.pairs.api import read_scored_pairs
    from probing.data.minimal_pairs import read_pair_file

    if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # every rank would score every pair: one process only
        raise ProbingError("--metric minimal-pairs runs in one process, not under torchrun", source="--metric")
    for name, given in (("treebank", inputs.treebank), ("text", inputs.text), ("shard", passes.shard)):
        if given:  # --checkpoint and --resume save and continue the one run
            raise ProbingError("--metric minimal-pairs reads a pair set (--pair-set, BLiMP by default) in one run: "
                               f"no --{name}", source=f"--{name}")
    if inputs.pairs:
        raise ProbingError("--metric minimal-pairs reads a pair set (--pair-set, BLiMP by default) in one run: no "
                           "--pairs (consecutive sentences as segments A and B)", source="--pairs")
    check_pairs_file_alone(options)
    if options.pairs_file:
        return read_pair_file(options.pairs_file, options.paradigms, options.phenomena, inputs.limit)
    chosen = chosen_pair_set(options.pair_set, options.paradigms, blimp=options.blimp, lexicon=options.lexicon)
    return read_scored_pairs(chosen, sources_of(options), options.paradigms, options.phenomena, inputs.limit)


def _dev(options: AblationOptions, run, pairs, analysis: ChoosingHeads):
    """DEV of --select-on, checked against this run's units and options (``analysis``'s checks), as ``probing score
    --select-on`` checks it, before the model loads: a treebank's sentences, or minimal ``pairs`` made from DEV's
    sentences (probing.stats.heldout.check_pairs_held_out)."""
    from probing.analyses.ablation.choosing import open_dev
    from probing.stats.heldout import check_pairs_held_out

    dev = open_dev(options.select_on, None if pairs is not None else run.source, options.select_limit,
                   analysis=analysis)
    if pairs is not None:
        check_pairs_held_out(dev, pairs, source=dev.where)
    return dev


def _conditions(options: AblationOptions, layers: int, heads: int, dev: dict | None, *, seed: int):
    """The conditions of --each-head, --each-layer, --chosen (labelled REL@K:chosen, REL@K:randomI) or --heads."""
    from probing.analyses.ablation.conditions import INTACT, Condition, chosen_heads, each_head, each_layer
    from probing.analyses.ablation.versus import choose_sets, set_label

    if options.each_head:
        return each_head(layers, heads)
    if options.each_layer:
        return each_layer(layers, heads)
    if options.chosen:
        sets = choose_sets(dev, options.chosen, options.k, layers, heads, draws=options.random, seed=seed,
                           match=options.match)
        return [INTACT] + [Condition(set_label(entry), entry["heads"]) for entry in sets]
    return chosen_heads(options.heads, layers, heads)
