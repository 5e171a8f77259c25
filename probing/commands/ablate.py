"""``probing ablate``: disable heads (uniform attention) and measure what changes (Kovaleva et al. 2019, sec. 4.5)."""

from __future__ import annotations

import argparse

from probing.commands.common import AnalysisCommand


def show(result: dict, args: argparse.Namespace) -> None:
    """What was measured, then every condition's change (or, with --chosen, the chosen sets against random ones)."""
    from probing.analyses.ablation.metrics import METRICS
    from probing.analyses.ablation.tables import ablation_tables, versus_table
    from probing.analyses.pairs.report import pairs_source

    measured = METRICS[args.metric].description + (f" on {pairs_source(result)}" if args.metric == "minimal-pairs"
                                                   else "")
    print(f"{result['model']['name']}: {measured} with heads disabled ({len(result['conditions']) - 1} "
          f"conditions; intervals: 95% paired bootstrap, {args.bootstrap} replicates)\n")
    print(versus_table(result) if args.chosen else ablation_tables(result, top=args.top or None))


COMMAND = AnalysisCommand(
    "ablate", show=show, say=print,
    epilog=(
        "Metrics: mlm (masked-LM loss of a checkpoint with a trained MLM head), lm (next-token loss of a causal "
        "LM), probe (best head's accuracy per relation on a treebank, as probing score), classification (accuracy "
        "of a sequence classifier on --labels, a CSV with text,label columns), minimal-pairs (a causal LM's accuracy "
        "on a pair set, BLiMP by default, as probing pairs scores it: overall, per field and per phenomenon; pairs "
        "made from the sentences DEV chose heads on are refused). Each condition is compared with "
        "the intact model on the same units: the change and its 95% paired bootstrap interval. Many conditions "
        "share one forward pass (copies of a batch, each with its own heads disabled). Heads count from 1 "
        "(3-5 is layer 3, head 5) on the command line and in tables; the JSON counts from 0."
    ),
)
add_arguments = COMMAND.add_arguments
run = COMMAND.run
