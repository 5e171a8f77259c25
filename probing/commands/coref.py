"""``probing coref``: heads that find a mention's antecedent (Clark et al. 2019, section 4.3).

Reads a CorefUD treebank (coreference in MISC ``Entity=``, as UD English-GUM
has it) as documents cut into windows, scores every head's antecedent
selection by mention type against three baselines (nearest mention, head
match, rule-based sieves), and prints the chosen head and the baselines with
bootstrap intervals. ``--treebank en_gum`` chooses the head on en_gum dev and
reports it on en_gum test; ``--select-on DEV`` does the same for any pair of
files (DEV may be a finished coref result JSON); otherwise the head is chosen
and reported on the same treebank (in-sample). See docs/coref.md.
"""

from __future__ import annotations

import argparse
import dataclasses

from probing.commands.common import add_bootstrap_options, add_engine_options, positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "A mention is scored when an earlier mention of its entity lies in its window; a head is right when the "
        "word its attention picks (dep_to_head: the word the mention's head word attends to most; head_to_dep: the "
        "word attending most to it) is the head word of such an antecedent. Layers and heads count from 1 in "
        "tables, from 0 in the JSON."
    )
    add_engine_options(parser, text=False, pairs=False, figures=False)
    group = parser.add_argument_group("coreference")
    group.add_argument("--window", type=positive_int, metavar="N",
                       help="window length in tokens, special tokens included: consecutive sentences of a document "
                            "are added while they fit (default: --max-length, else the model's limit; Clark et al. "
                            "used 128)")
    group.add_argument("--select-on", metavar="DEV",
                       help="choose the head on this treebank (or finished coref result JSON) and report it on "
                            "--treebank with intervals (default with --treebank NAME: NAME:dev, reported on NAME:test)")
    add_bootstrap_options(parser)


def window_length(requested: int | None, max_length: int | None, loaded) -> int:
    """The window length: ``--window``, at most the longest unit the model reads (or ``--max-length``)."""
    from probing.errors import ProbingError

    limit = loaded.max_length(max_length)
    if requested is None:
        return limit
    if requested < 2:  # the window becomes the pass's longest unit: said here, about the option the user gave
        raise ProbingError(f"must be at least 2 tokens, got {requested}", source="--window")
    if requested > limit:
        where = "--max-length" if max_length is not None else f"{loaded.name}'s limit"
        raise ProbingError(f"{requested} tokens is more than the longest unit allowed ({limit}, {where})",
                           source="--window")
    return requested


def run(args: argparse.Namespace) -> int:
    from probing.analyses.coref.accumulator import CorefAccumulator
    from probing.analyses.coref.report import arrays_of, choice_summary, choose_head, coref_table, heldout_block, select_on_block
    from probing.commands.common import EngineCommand
    from probing.data.inputs import InputSource, sample_treebank_path
    from probing.engine.batching import window_rule
    from probing.engine.passes import require_units, run_pass
    from probing.engine.readings import READINGS
    from probing.errors import ProbingError
    from probing.results.io import provenance
    from probing.stats.heldout import check_dev_test, is_result_file, plan, read_dev_result

    treebank, select_on = plan(args.treebank, args.select_on)
    source = InputSource.documents(treebank or str(sample_treebank_path()), limit=args.limit)
    dev_result = dev_source = None
    if select_on and is_result_file(select_on):
        dev_result = read_dev_result(select_on, analysis="coref")
    elif select_on:
        dev_source = InputSource.documents(select_on, limit=args.limit, option="--select-on")
    dev_path = select_on if dev_result is not None else (dev_source.path if dev_source else None)

    with EngineCommand(args, source=source, inputs=(dev_path,)) as command:
        loaded = command.loaded
        window = window_length(args.window, args.max_length, loaded)
        rule = window_rule(loaded.tokenizer, window, prepend=loaded.prepend_token_id)
        heads = READINGS[args.attention].heads(loaded.num_heads)
        config = {"window": window, "bootstrap": args.bootstrap}

        def scored(input_source, accumulator, description, **changes):
            input_source.windows = rule
            options = dataclasses.replace(command.options(description), max_length=window, **changes)
            stats = run_pass(loaded, input_source, [accumulator], options, hooks=command.hooks)
            require_units(stats, input_source, options)
            return stats

        if dev_source is not None:
            dev = CorefAccumulator(loaded.num_layers, heads, window=window)
            dev_stats = scored(dev_source, dev, "selecting on DEV", shard=None)
            dev_result = provenance("coref", loaded, dev_source, dev_stats, {**command.options().config(), **config,
                                                                             "shard": None})
            dev_result["config"].update({"limit": dev_source.limit, "seed": args.seed})
            dev_result.update(dev.result())
        test = CorefAccumulator(loaded.num_layers, heads, window=window, bootstrap=args.bootstrap, seed=args.seed)
        stats = scored(source, test, "coreference")
        if args.shard is None and int(test.state_tensors["mentions"][0]) == 0:
            raise ProbingError("holds no coreference mention (no Entity= brackets in MISC); coreference needs a "
                               "CorefUD treebank such as en_gum", source=str(source.path))
        if not command.is_main:
            return 0
        result = command.result("coref", stats, test, config)
        if dev_result is not None:
            check_dev_test(dev_result, result, source=f"--select-on {select_on}")
            dev_arrays = arrays_of(dev_result)
            chosen = choice_summary(choose_head(dev_arrays), dev_arrays)
            where = select_on_block(dev_result, result_path=select_on if dev_source is None else None, spec=select_on)
            result["heldout"] = heldout_block(result, where, chosen)
        print(coref_table(result))
        command.write(result)
        command.hint()
    return 0
