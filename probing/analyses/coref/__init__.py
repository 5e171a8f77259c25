"""Coreference heads (Clark et al. 2019, section 4.3) on CorefUD treebanks such as UD English-GUM.

- :mod:`~probing.data.entities`: documents and mentions from MISC ``Entity=`` brackets (head word, type);
- :mod:`~probing.data.windows`: documents cut into windows of whole sentences, the engine's units;
- :mod:`~probing.analyses.coref.antecedents`: scored mentions, their antecedents, the three baselines;
- :mod:`~probing.analyses.coref.report`: chosen heads, accuracies by type with intervals, tables, leaderboard rows
  (torch-free).

The accumulator is :class:`probing.analyses.coref.accumulator.CorefAccumulator`; the command is ``probing coref``;
the rules in words are in docs/coref.md. Nothing here imports torch.
"""

from probing.plugins import Analysis, Command, register

register(Analysis(
    name="coref",
    accumulator="probing.analyses.coref.accumulator:CorefAccumulator",
    payload="probing.analyses.coref.payload:PAYLOAD",
    checks=("probing.analyses.coref.payload:counts_within_totals",),
    tables="probing.analyses.coref.report:leaderboard_tables",
    extra={"result": "probing.analyses.coref.result:CorefResult"},  # what probing.read() gives for its files
    commands=(
        Command("coref", "heads that find a mention's antecedent, by mention type, against three baselines (Clark et al. sec. 4.3)",
                "probing.commands.coref", order=110, library="probing.analyses.coref.run:coref"),
    ),
))
