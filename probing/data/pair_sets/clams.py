"""CLAMS (Mueller, Nicolai, Petrou-Zeniou, Talmina and Linzen, ACL 2020): subject-verb agreement pairs in German,
French and Russian, seven phenomena a language, one file each.

A file is lines of two TAB-separated columns, ``True`` or ``False`` (the sentence is grammatical or not) and the
sentence; a pair is a ``True`` line and the ``False`` line right after it. The file's name (without ``.txt``) is
both the paradigm and the phenomenon; a pair's id is the number of its ``True`` line.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     path = Path(folder) / "simple_agrmt.txt"
...     _ = path.write_text("True\\tdie Autoren sind alt\\nFalse\\tdie Autoren ist alt\\n", encoding="utf-8")
...     [(pair.uid, pair.good, pair.bad, pair.pair_id) for pair in read_clams(path)]
[('simple_agrmt', 'die Autoren sind alt', 'die Autoren ist alt', '1')]
"""

from __future__ import annotations

from pathlib import Path

from probing.data.minimal_pairs import MinimalPair, utf8_lines
from probing.data.pair_sets.pinned import PinnedFiles, read_pins
from probing.errors import ProbingError

COMMIT = "36b5c9a56ecc51d3eedb6c1a85b805085d631c71"
"""The commit of aaronmueller/clams whose ``LANG_evalset/`` files are pinned."""

FILES = PinnedFiles("CLAMS", "clams", "aaronmueller/clams", COMMIT, read_pins(Path(__file__).with_name("clams.sha256")),
                    lambda name: name.replace("/", "_evalset/", 1),
                    "a folder of CLAMS's LANG/PHENOMENON.txt files, as de/simple_agrmt.txt",
                    "give --minimal-pairs DIR or set PROBING_MINIMAL_PAIRS to a folder holding clams/LANG/*.txt")
"""CLAMS's files at :data:`COMMIT`: ``de/simple_agrmt.txt`` here is ``de_evalset/simple_agrmt.txt`` there."""

FIELD = "morphology"
"""CLAMS names no field; its pairs are subject-verb agreement, which BLiMP files under morphology."""

LABELS = ("True", "False")


def read_clams(path: Path, shown: str | None = None) -> list[MinimalPair]:
    """Every pair of a CLAMS file, in file order; a line that breaks the format is refused naming ``shown`` (the
    path as given):line: a line that is not UTF-8, that is not two TAB-separated columns or has no sentence, whose
    label is neither True nor False, a ``True`` line without its ``False`` line right after it, a ``False`` line
    without its ``True`` line, a pair of two identical sentences."""
    shown = shown or str(path)
    paradigm = path.name.removesuffix(".txt")
    pairs: list[MinimalPair] = []
    pending: tuple[int, str] | None = None  # a True line waiting for its False line: (number, sentence)
    for number, line in utf8_lines(path, shown):
        where = f"{shown}:{number}"
        if not line.strip():
            if pending is not None:
                break  # the True line's pair is missing: said below
            continue
        columns = line.split("\t")
        if len(columns) != 2:
            raise ProbingError(f"has {len(columns)} TAB-separated columns, not 2 (True or False, then the sentence)",
                               source=where)
        label, sentence = columns
        if label not in LABELS:
            raise ProbingError(f"begins with {label[:20]!r}, not True or False", source=where)
        if not sentence.strip():
            raise ProbingError(f"has no sentence after {label}", source=where)
        if label == "True":
            if pending is not None:
                break
            pending = (number, sentence)
            continue
        if pending is None:
            raise ProbingError("is a False line without the True line of its pair right before it", source=where)
        if sentence == pending[1]:
            raise ProbingError(f"repeats the sentence of the True line {pending[0]}: no minimal pair", source=where)
        pairs.append(MinimalPair(paradigm, FIELD, pending[1], sentence, paradigm, str(pending[0])))
        pending = None
    if pending is not None:
        raise ProbingError("is a True line without its False line right after it (a pair is a True line and the "
                           "False line after it)", source=f"{shown}:{pending[0]}")
    if not pairs:
        raise ProbingError("holds no pair (True and False lines)", source=shown)
    return pairs
