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

from probing.commands.common import AnalysisCommand

COMMAND = AnalysisCommand(
    "coref", table="probing.analyses.coref.report:coref_table",
    epilog=(
        "A mention is scored when an earlier mention of its entity lies in its window; a head is right when the "
        "word its attention picks (dep_to_head: the word the mention's head word attends to most; head_to_dep: the "
        "word attending most to it) is the head word of such an antecedent. Layers and heads count from 1 in "
        "tables, from 0 in the JSON."
    ),
)
add_arguments = COMMAND.add_arguments
run = COMMAND.run
