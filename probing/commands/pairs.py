"""``probing pairs``: a causal LM on minimal pairs, a pair set by name (BLiMP, CLAMS, RuBLiMP, agreement pairs made
from a treebank) or one's own file (accuracy per paradigm, per phenomenon, per field and overall)."""

from __future__ import annotations

import argparse

from probing.commands.common import AnalysisCommand


def show(result: dict, args: argparse.Namespace) -> None:
    """The run's header, then the accuracy of every paradigm."""
    from probing.analyses.pairs.report import pairs_header, pairs_table

    print(pairs_header(result))
    print(pairs_table(result["pairs"]))


COMMAND = AnalysisCommand(
    "pairs", show=show,
    epilog=(
        "A pair is right when the model gives the grammatical sentence the higher log-probability (a tie is "
        "wrong): log p(sentence) sums log p(token | all before it) over the sentence's tokens, tokenized as plain "
        "text after one BOS token (EOS when the tokenizer has no BOS). Overall = the mean of the paradigm "
        "accuracies, as BLiMP reports it; 95% Wilson score intervals (overall: of the mean, at the effective "
        "number of pairs). The pairs are a pair set (--pair-set: BLiMP by default, CLAMS, RuBLiMP, or agreement "
        "pairs made from a treebank), read from a folder (--blimp DIR or $PROBING_BLIMP for BLiMP, --minimal-pairs "
        "DIR or $PROBING_MINIMAL_PAIRS for every set), else a cache filled by a download from each set's public "
        "home, every file checked by its pinned sha256; or your own file (--pairs-file), unpinned. probing data "
        "pairs NAME writes a set out as JSON lines. Masked LMs have no minimal-pair score. Rules: "
        "docs/minimal-pairs.md."
    ),
)
add_arguments = COMMAND.add_arguments
run = COMMAND.run
