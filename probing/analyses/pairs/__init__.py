"""Minimal pairs (a pair set: BLiMP, CLAMS, RuBLiMP, agreement pairs made from a treebank, or one's own): a causal LM's
sentence log-probabilities and its accuracy per paradigm, phenomenon, field and overall."""

from probing.plugins import Analysis, Command, register

register(Analysis(
    name="pairs",
    accumulator="probing.analyses.pairs.report:PairsAccumulator",
    payload="probing.analyses.pairs.payload:PAYLOAD",
    tables="probing.analyses.pairs.report:leaderboard_tables",
    commands=(
        Command("pairs", "a causal LM on minimal pairs (BLiMP, CLAMS, RuBLiMP, agreement pairs made from a treebank, "
                "or your own): accuracy per paradigm, phenomenon, field and overall, with intervals",
                "probing.commands.pairs", order=135, library="probing.analyses.pairs.api:pairs"),
    ),
))
