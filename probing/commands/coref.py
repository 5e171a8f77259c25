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


def run(args: argparse.Namespace) -> int:
    from probing.analyses.coref.accumulator import CorefAccumulator
    from probing.analyses.coref.heldout_run import (
        WindowPasses,
        add_heldout,
        coref_inputs,
        require_mentions,
        window_length,
    )
    from probing.analyses.coref.report import coref_table
    from probing.commands.common import EngineCommand
    from probing.engine.readings import READINGS

    inputs = coref_inputs(args.treebank, args.select_on, limit=args.limit)
    with EngineCommand(args, analysis="coref", source=inputs.source, inputs=(inputs.dev_path,)) as command:
        loaded = command.loaded
        window = window_length(args.window, args.max_length, loaded)
        passes = WindowPasses(command.engine_run, window, "--window" if args.window is not None else None)
        heads = READINGS[args.attention].heads(loaded.num_heads)
        config = {"window": window, "bootstrap": args.bootstrap}
        dev_result = inputs.chosen_on(lambda dev_source: passes.dev_result(dev_source, heads=heads, config=config))
        test = CorefAccumulator(loaded.num_layers, heads, window=window, bootstrap=args.bootstrap, seed=args.seed)
        stats = passes.run(inputs.source, test, "coreference")
        if args.shard is None:
            require_mentions(test, inputs.source)
        if not command.is_main:
            return 0
        result = command.result("coref", stats, test, config)
        if dev_result is not None:
            add_heldout(result, dev_result, inputs)
        print(coref_table(result))
        command.write(result)
        command.hint()
    return 0
