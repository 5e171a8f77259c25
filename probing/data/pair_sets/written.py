"""Pairs written out as JSON lines in BLiMP's format, one pair a line, so that anyone can read them and
``probing pairs --pairs-file`` reads them back as they were: ``sentence_good``, ``sentence_bad``, ``UID`` (the
paradigm), ``field``, ``linguistics_term`` (the phenomenon), ``pairID`` where the set has ids, and what a pair made
from a treebank records of itself (probing.data.minimal_pairs.RECORD_COLUMNS).

>>> from probing.data.minimal_pairs import MinimalPair
>>> pair_line(MinimalPair("number", "morphology", "Dogs bark", "Dogs barks", "subject-verb agreement", "s1:2:Number",
...                       (("verb_id", "2"),)))
{'sentence_good': 'Dogs bark', 'sentence_bad': 'Dogs barks', 'UID': 'number', 'field': 'morphology', \
'linguistics_term': 'subject-verb agreement', 'pairID': 's1:2:Number', 'verb_id': '2'}
"""

from __future__ import annotations

import json
from pathlib import Path

from probing.atomic import text_matching, write_text_atomic

WRITTEN = text_matching(r'\{"sentence_good": ', "a JSON-lines pair file (as probing data pairs writes one)")
"""What an existing file at ``--output`` must be for a new pair file to replace it."""


def pair_line(pair) -> dict:
    """One pair as its line holds it."""
    line = {"sentence_good": pair.good, "sentence_bad": pair.bad, "UID": pair.uid, "field": pair.field}
    if pair.term:
        line["linguistics_term"] = pair.term
    if pair.pair_id:
        line["pairID"] = pair.pair_id
    return {**line, **dict(pair.record)}


def write_pairs(pairs, path: str | Path, *, follow_symlinks: bool = False) -> Path:
    """Write ``pairs`` to ``path`` atomically (probing.atomic): the whole file or what was there before."""
    text = "".join(json.dumps(pair_line(pair), ensure_ascii=False) + "\n" for pair in pairs)
    return write_text_atomic(text, path, follow_symlinks=follow_symlinks, replaces=WRITTEN)
