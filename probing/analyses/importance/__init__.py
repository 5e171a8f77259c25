"""Every head alone, and syntax against it: the importance map (causal rules, section 5; docs/importance.md).

- :mod:`.maps`: each head's effect on every metric part, its paired interval and its harm, from an
  ``ablate --each-head`` result;
- :mod:`.syntax`: DEV accuracy against harm (Spearman's rho, its within-layer permutation p and its bootstrap
  interval) and the chosen head's rank in its layer band and in the model;
- :mod:`.build`: the result; :mod:`.payload`: its schema and checks; :mod:`.board`: its leaderboard table;
  :mod:`.figures`: the map beside DEV's accuracy heatmap.

No pass over a model: the result is made from two result files (``probing importance``), so it has no
accumulator and nothing to merge. Nothing here imports torch.
"""

from probing.plugins import Analysis, Command, register

register(Analysis(
    name="importance",
    accumulator=None,
    payload="probing.analyses.importance.payload:PAYLOAD",
    checks=("probing.analyses.importance.payload:blocks_match",
            "probing.analyses.importance.payload:harm_is_the_harmful_effect",
            "probing.analyses.importance.payload:ranks_fit_the_model"),
    tables="probing.analyses.importance.board:leaderboard_tables",
    commands=(
        Command("importance", "every head disabled alone (ablate --each-head) set against its DEV accuracy: the map, "
                "rho with a within-layer permutation p, the chosen head's rank", "probing.commands.importance",
                order=132, library="probing.analyses.importance.run:importance"),
    ),
))
