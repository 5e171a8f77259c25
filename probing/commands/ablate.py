"""``probing ablate``: disable heads (uniform attention) and measure what changes (Kovaleva et al. 2019, sec. 4.5)."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import EngineCommand, add_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.ablation.options import OPTIONS

    parser.epilog = (
        "Metrics: mlm (masked-LM loss of a checkpoint with a trained MLM head), lm (next-token loss of a causal "
        "LM), probe (best head's accuracy per relation on a treebank, as probing score), classification (accuracy "
        "of a sequence classifier on --labels, a CSV with text,label columns), minimal-pairs (a causal LM's BLiMP "
        "accuracy as probing pairs scores it: overall, per field and per phenomenon). Each condition is compared with "
        "the intact model on the same units: the change and its 95% paired bootstrap interval. Many conditions "
        "share one forward pass (copies of a batch, each with its own heads disabled). Heads count from 1 "
        "(3-5 is layer 3, head 5) on the command line and in tables; the JSON counts from 0."
    )
    add_options(parser, OPTIONS)


def run(args: argparse.Namespace) -> int:
    from probing.analyses.ablation.metrics import METRICS
    from probing.analyses.ablation.options import AblationOptions
    from probing.analyses.ablation.run import ablation
    from probing.analyses.ablation.tables import ablation_tables
    from probing.analyses.ablation.versus import versus_table

    with EngineCommand(args, analysis="ablation", figures=("versus",) if args.chosen else (), start=False) as command:
        model, inputs, passes, options = command.specs(AblationOptions)
        result = ablation(model, inputs, passes, options, start=command.start, say=print)
        if result is None:  # another process of a torchrun: rank 0 writes
            return 0
        conditions = len(result["conditions"])
        print(f"{result['model']['name']}: {METRICS[options.metric].description} with heads disabled "
              f"({conditions - 1} conditions; intervals: 95% paired bootstrap, {options.bootstrap} replicates)\n")
        print(versus_table(result["versus"]) if options.chosen else ablation_tables(result, top=options.top or None))
        command.write(result)
        if options.chosen and args.output:  # the figure `probing plot` draws of this result, as the README promises
            from probing.analyses.ablation.figures import versus_figure

            print(f"wrote {versus_figure(result, command.figure_path('versus'))}", file=sys.stderr)
        command.hint()
    return 0
