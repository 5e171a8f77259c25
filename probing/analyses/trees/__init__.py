"""Whole dependency trees from attention: the three ways the literature asks it.

- :mod:`.decode`: a tree (``mst``, Chu-Liu-Edmonds rooted at the gold root) or
  each word's best head (``max``) from edge scores, for whole batches of
  matrices (:mod:`.compiled` is the same algorithm compiled for CPUs).
- :mod:`.counts`: one head, one tree (Htut et al. 2019): UAS/UUAS counts of
  every layer, head, direction and decoding, with branching baselines.
- :mod:`.ensembles`: greedy head ensembles per relation and direction
  (Limisiewicz et al. 2020), their held-out accuracy, and trees from them.
- :mod:`.features` and :mod:`.probes`: attention probes trained on one
  treebank and scored on another (Clark et al. 2019, section 5).

Every accumulator counts integers (``update`` per batch, ``merge`` across
parts, ``result`` as plain ints and lists), so shards add up exactly.
"""

from probing.plugins import Analysis, Command, register

register(Analysis(
    name="trees",
    accumulator="probing.analyses.trees.accumulator:TreesAccumulator",
    payload="probing.analyses.trees.payload:PAYLOAD",
    checks=("probing.analyses.trees.payload:counts_within_totals",),
    tables="probing.analyses.trees.report:leaderboard_tables",
    extra={"result": "probing.analyses.trees.result:TreesResult"},  # what probing.read() gives for its files
    commands=(
        Command("trees", "does attention hold the whole tree? heads as trees (MAX, MST), head ensembles, attention probes: UAS",
                "probing.commands.trees", order=60, library="probing.analyses.trees.run:trees",
                figures="probing.analyses.trees.report:figures"),
    ),
))
