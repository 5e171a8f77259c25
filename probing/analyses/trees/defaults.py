"""The trees analysis's defaults, without torch: ``probing trees`` builds its options (and checks a user's) from
these before anything imports torch; the modules that use them import them from here.

>>> CANDIDATES >= ENSEMBLE_SIZE, "all" in DEFAULT_TREE_RELATIONS
(True, False)
"""

CANDIDATES = 25
"""Each ensemble is chosen among this many best single heads of its relation and direction."""
ENSEMBLE_SIZE = 4
"""The most heads in an ensemble."""

DEFAULT_TREE_RELATIONS = ("dobj", "det", "pobj", "poss")
"""The paper's four relations; ``all`` is left out by default (its ensembles would duplicate every arc)."""

PROBE_EPOCHS = 10
"""Passes over DEV when training the attention probes."""
LEARNING_RATE = 0.002
BATCH_SENTENCES = 8
"""Sentences per Adam step of a probe."""
