"""RuBLiMP (Taktasheva et al. 2024): Russian minimal pairs made by changing one word of real sentences; here its 19
agreement paradigms, one CSV file each.

A file has a header and one pair a row: ``source_sentence`` (grammatical), ``target_sentence`` (ungrammatical),
``PID`` (the paradigm), ``phenomenon``, ``id`` (the pair's id), ``level`` (syntax, morphology or semantics: the
field) and RuBLiMP's other columns, which nothing here reads.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     path = Path(folder) / "np_agreement_number.csv"
...     _ = path.write_text("id,source_sentence,target_sentence,level,phenomenon,PID\\n"
...                         "7,Кот спит.,Коты спит.,Syntax,Noun Phrase Agreement,np_agreement_number\\n")
...     [(pair.uid, pair.term, pair.good, pair.bad, pair.pair_id) for pair in read_rublimp(path)]
[('np_agreement_number', 'Noun Phrase Agreement', 'Кот спит.', 'Коты спит.', '7')]
"""

from __future__ import annotations

import csv
from pathlib import Path

from probing.data.minimal_pairs import OWN_FIELD, MinimalPair, utf8_lines
from probing.data.pair_sets.pinned import PinnedFiles, read_pins
from probing.errors import ProbingError

COMMIT = "9f0d8dfa993b2c0f0acf12660258540376779543"
"""The commit of RussianNLP/RuBLiMP whose ``datasets/`` files are pinned."""

FILES = PinnedFiles("RuBLiMP", "rublimp", "RussianNLP/RuBLiMP", COMMIT,
                    read_pins(Path(__file__).with_name("rublimp.sha256")), lambda name: f"datasets/{name}",
                    "a folder of RuBLiMP's PID.csv files",
                    "give --minimal-pairs DIR or set PROBING_MINIMAL_PAIRS to a folder holding rublimp/*.csv")
"""RuBLiMP's 19 agreement paradigms at :data:`COMMIT`."""

COLUMNS = ("id", "source_sentence", "target_sentence", "source_word", "target_word", "level", "phenomenon", "PID",
           "subtype", "domain", "tree_depth")
"""RuBLiMP's columns: a header may name these and no other."""

NEEDED = ("source_sentence", "target_sentence", "phenomenon", "PID")


def read_rublimp(path: Path, shown: str | None = None) -> list[MinimalPair]:
    """Every pair of a RuBLiMP file, in file order; what breaks the format is refused naming ``shown`` (the path as
    given):line: a line that is not UTF-8, a header without a needed column or with one RuBLiMP does not have, a
    row with more or fewer cells than the header, a row without a sentence or a paradigm, two identical sentences,
    an id seen before."""
    from probing.data.relations import did_you_mean

    shown = shown or str(path)
    lines = [line for _, line in utf8_lines(path, shown)]  # every line decoded first: a bad byte named by its line
    rows = csv.reader(line + "\n" for line in lines)
    header = next(rows, None)
    if header is None or not any(header):
        raise ProbingError("has no header (RuBLiMP's columns: id, source_sentence, target_sentence, ...)",
                           source=f"{shown}:1")
    for name in header:
        if name not in COLUMNS:
            raise ProbingError(f"unknown column {name!r}{did_you_mean(name, COLUMNS)} (RuBLiMP's: "
                               f"{', '.join(COLUMNS)})", source=f"{shown}:1")
    for name in NEEDED:
        if name not in header:
            raise ProbingError(f"has no column {name} (a pair is a source_sentence and a target_sentence, with its "
                               "PID and phenomenon)", source=f"{shown}:1")
    if len(set(header)) != len(header):
        raise ProbingError("names a column twice", source=f"{shown}:1")
    pairs: list[MinimalPair] = []
    seen: dict[str, int] = {}
    for row in _rows(rows, shown):
        where = f"{shown}:{rows.line_num}"
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            more = "an extra column" if len(row) > len(header) else "a missing column"
            raise ProbingError(f"has {len(row)} cells for the header's {len(header)} columns ({more})", source=where)
        item = dict(zip(header, row))
        for name in ("source_sentence", "target_sentence"):
            if not item[name].strip():
                raise ProbingError(f"has no {name}: a pair is a source_sentence and a target_sentence", source=where)
        if not item["PID"].strip():
            raise ProbingError("has no PID (the paradigm)", source=where)
        if item["source_sentence"] == item["target_sentence"]:
            raise ProbingError("source_sentence and target_sentence are the same sentence: no minimal pair",
                               source=where)
        pair_id = item.get("id", "")
        if pair_id:
            if pair_id in seen:
                raise ProbingError(f"id {pair_id!r} again (first at line {seen[pair_id]})", source=where)
            seen[pair_id] = rows.line_num
        pairs.append(MinimalPair(item["PID"], (item.get("level") or OWN_FIELD).lower(), item["source_sentence"],
                                 item["target_sentence"], item["phenomenon"], pair_id))
    if not pairs:
        raise ProbingError("holds no pair (a header and rows)", source=shown)
    return pairs


def _rows(rows, shown: str):
    """The CSV reader's rows, a row it cannot read (a stray quote, a NUL) refused naming its line."""
    while True:
        try:
            yield next(rows)
        except StopIteration:
            return
        except csv.Error as error:
            raise ProbingError(f"is not a CSV row ({error})", source=f"{shown}:{rows.line_num}") from None
