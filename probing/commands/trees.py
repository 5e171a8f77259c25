"""``probing trees``: does attention hold the whole dependency tree? Single heads as trees, head ensembles,
attention probes (Htut et al. 2019; Limisiewicz et al. 2020; Clark et al. 2019 section 5)."""

from __future__ import annotations

from probing.commands.common import AnalysisCommand

COMMAND = AnalysisCommand(
    "trees", table="probing.analyses.trees.report:tables",
    epilog=(
        "--treebank en_ewt (a public treebank with dev and test splits) chooses on en_ewt:dev and reports on "
        "en_ewt:test with 95% intervals (a one-split treebank such as ko_pud: on ko_pud:even and ko_pud:odd); "
        "--select-on DEV --treebank TEST does the same for any pair, and DEV may be "
        "the result JSON of a trees run on DEV, so that shards of TEST (--shard I/N, then probing merge) do not "
        "choose again. Without either, every number is chosen and measured on --treebank (in-sample), and the "
        "result holds the choices for a later --select-on. With --output T.json, T-uas.png shows every head's MST "
        "UAS. Layers and heads count from 1 in tables and figures, from 0 in the JSON. Rules: docs/trees.md."
    ),
)
add_arguments = COMMAND.add_arguments
run = COMMAND.run
