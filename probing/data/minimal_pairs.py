"""BLiMP's minimal pairs (Warstadt et al. 2020): where the files are, checked by sha256, and read.

The 67 paradigms are ``UID.jsonl`` files of pairs (``sentence_good``, ``sentence_bad``, ``field``,
``UID``, ...). They are read from ``--blimp DIR`` or ``$PROBING_BLIMP`` (a folder of ``UID.jsonl``
files, as ``PROBING_TREEBANKS`` is for treebanks), else from the cache, which a download from BLiMP's
public home (the repository alexwarstadt/blimp at a pinned commit, folder ``data/``) fills. Every file
is checked against the sha256 pinned in ``blimp.sha256`` beside this module, wherever it comes from:
the download machinery is the treebanks' (probing.data.datasets), so a damaged cached file is fetched
again and a bad download never reaches the cache.

>>> len(PARADIGMS), PARADIGMS[0]
(67, 'adjunct_island')
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from probing.data.pair_sets.pinned import BASE_VARIABLE, PinnedFiles
from probing.errors import ProbingError

COMMIT = "3e56b06fcabca9b30822fc66435fca6b1aa40bb1"
"""The commit of alexwarstadt/blimp whose ``data/`` files are pinned."""

REPOSITORY = "alexwarstadt/blimp"
"""BLiMP's public home; ``PROBING_BLIMP_BASE_URL`` (or ``PROBING_MINIMAL_PAIRS_BASE_URL``, for every pair set)
replaces its host (a mirror, or a local server in tests)."""

ENVIRONMENT = "PROBING_BLIMP"


def _pins() -> dict[str, str]:
    lines = (Path(__file__).with_name("blimp.sha256")).read_text(encoding="utf-8").split("\n")
    pins = {}
    for line in filter(None, lines):
        digest, filename = line.split()
        pins[filename.removesuffix(".jsonl")] = digest
    return pins


PINS = _pins()
"""UID -> the sha256 of its file at :data:`COMMIT`."""

PARADIGMS = tuple(sorted(PINS))


def phenomenon_of(uid: str, folder: str | None = None, root: str | None = None) -> str:
    """A paradigm's phenomenon (BLiMP's ``linguistics_term``), as the first pair of its own file labels it (the
    file found, or fetched and checked, as :func:`paradigm_file` does)."""
    path = paradigm_file(uid, folder, root=root)
    with path.open(encoding="utf-8") as lines:
        first = lines.readline()
    try:
        return str(json.loads(first)["linguistics_term"])
    except (ValueError, KeyError, TypeError) as error:
        raise ProbingError(f"is not a BLiMP pair ({type(error).__name__}: {error})", source=f"{path}:1") from None


def paradigms_of(phenomena, folder: str | None = None, root: str | None = None) -> tuple[str, ...]:
    """The paradigms of the phenomena named (``--phenomena``), in UID order, read from the paradigms' own files
    (every paradigm's first line: nothing of BLiMP ships with the package); one line naming an unknown one."""
    if len(set(phenomena)) != len(phenomena):
        raise ProbingError("a phenomenon is named twice", source="--phenomena")
    terms = {uid: phenomenon_of(uid, folder, root) for uid in PARADIGMS}
    known = sorted(set(terms.values()))
    from probing.data.relations import did_you_mean

    for name in phenomena:
        if name not in known:
            raise ProbingError(f"unknown BLiMP phenomenon {name!r}{did_you_mean(name, known)} (known: "
                               f"{', '.join(known)})", source="--phenomena")
    return tuple(uid for uid in PARADIGMS if terms[uid] in set(phenomena))


@dataclass(frozen=True)
class MinimalPair:
    """One pair of a paradigm (``uid``): its ``field`` (syntax, morphology, ...) and ``term``, BLiMP's
    ``linguistics_term`` (the phenomenon: subject_verb_agreement, island_effects, ...); ``pair_id`` its id in
    its set (BLiMP's ``pairID``, where a set has ids), and ``record`` what else a set says of it, as (column,
    value) items (a pair made from a treebank: its sentence, words, feature and values)."""

    uid: str
    field: str
    good: str
    bad: str
    term: str = ""
    pair_id: str = ""
    record: tuple[tuple[str, str], ...] = ()


def check_paradigms(names) -> tuple[str, ...]:
    """The paradigms asked for (all when none), each a known UID; one line naming the first unknown one.

    >>> check_paradigms(["anaphor_gender_agreement"])
    ('anaphor_gender_agreement',)
    >>> check_paradigms(["wh_islnd"])
    Traceback (most recent call last):
    probing.errors.ProbingError: --paradigms: unknown BLiMP paradigm 'wh_islnd' (did you mean wh_island?) ...
    """

    if not names:
        return PARADIGMS
    return known_paradigms(names, PARADIGMS, kind="BLiMP paradigm", known=f"67 are known, e.g. {PARADIGMS[0]}")


def known_paradigms(names, among, *, kind: str, known: str) -> tuple[str, ...]:
    """``names`` as chosen with ``--paradigms``, each one of ``among`` and none twice, or the one-line error
    (with a "did you mean" for a typo; ``known`` says what is known).

    >>> known_paradigms(["b"], ("a", "b"), kind="paradigm", known="the file's: a, b")
    ('b',)
    """
    from probing.data.relations import did_you_mean

    for name in names:
        if name not in among:
            raise ProbingError(f"unknown {kind} {name!r}{did_you_mean(name, among)} ({known})", source="--paradigms")
    if len(set(names)) != len(names):
        raise ProbingError("a paradigm is named twice", source="--paradigms")
    return tuple(names)


def blimp_folder(folder: str | None = None, root: str | None = None) -> Path:
    """The folder whose files a run reads (as :func:`blimp_source` finds it, else the download cache): an input of
    the run, so no output may go into it (probing.atomic.check_output_path).

    >>> str(blimp_folder("pairs"))
    'pairs'
    """
    from probing.data.datasets.cache import cache_dir

    given, _ = blimp_source(folder, root)
    return given if given is not None else cache_dir() / FILES.cache


class _FilePins(Mapping):
    """:data:`PINS` by file name (``UID.jsonl``), read at each look-up (a test may pin a file of its own)."""

    def __getitem__(self, name: str) -> str:
        return PINS[name.removesuffix(".jsonl")]

    def __iter__(self):
        return (f"{uid}.jsonl" for uid in PINS)

    def __len__(self) -> int:
        return len(PINS)


FILES = PinnedFiles("BLiMP", "blimp", REPOSITORY, COMMIT, _FilePins(), lambda name: f"data/{name}",
                    "a folder of BLiMP's UID.jsonl files",
                    f"give --blimp DIR or set {ENVIRONMENT} to a folder of BLiMP's UID.jsonl files",
                    variables=("PROBING_BLIMP_BASE_URL", BASE_VARIABLE))
"""BLiMP's files at :data:`COMMIT` (the cache holds them as ``<cache>/blimp/data/UID.jsonl``)."""


def paradigm_file(uid: str, folder: str | None = None, *, root: str | None = None) -> Path:
    """The checked file of one paradigm: from ``folder`` (``--blimp``), else ``root``'s ``blimp/`` (a folder
    of pair sets, ``--minimal-pairs``), else ``$PROBING_BLIMP``, else ``$PROBING_MINIMAL_PAIRS``'s ``blimp/``, else
    the cache (downloaded when absent)."""
    given, where = blimp_source(folder, root)
    return FILES.checked_file(f"{uid}.jsonl", given, given_by=where)


def blimp_source(folder: str | None = None, root: str | None = None) -> tuple[Path | None, str]:
    """The folder BLiMP is read from and how messages name it, or (None, "") for the cache: options before
    variables, BLiMP's own folder before a folder of pair sets.

    >>> blimp_source("b", "r")
    (PosixPath('b'), '--blimp')
    >>> blimp_source(None, "r")
    (PosixPath('r/blimp'), '--minimal-pairs')
    """
    from probing.data.pair_sets.folders import ROOT_VARIABLE, set_folder

    if folder:
        return Path(folder).expanduser(), "--blimp"
    if root:
        return set_folder(root, "blimp", "--minimal-pairs")
    if os.environ.get(ENVIRONMENT):
        return Path(os.environ[ENVIRONMENT]).expanduser(), ENVIRONMENT
    if os.environ.get(ROOT_VARIABLE):
        return set_folder(os.environ[ROOT_VARIABLE], "blimp", ROOT_VARIABLE)
    return None, ""


def read_paradigm(path: Path, uid: str, limit: int | None = None) -> list[MinimalPair]:
    """The first ``limit`` pairs of a paradigm file, in file order; a bad line is named by file:line."""
    pairs = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if limit is not None and len(pairs) >= limit:
                break
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                pairs.append(MinimalPair(uid, str(item["field"]), str(item["sentence_good"]), str(item["sentence_bad"]),
                                         str(item["linguistics_term"]), str(item.get("pairID", ""))))
            except (ValueError, KeyError, TypeError) as error:
                raise ProbingError(f"is not a BLiMP pair ({type(error).__name__}: {error})",
                                   source=f"{path}:{number}") from None
    return pairs


def read_pairs(paradigms, folder: str | None = None, limit: int | None = None, root: str | None = None
               ) -> tuple[list[MinimalPair], dict]:
    """Every pair of ``paradigms`` (first ``limit`` of each) and an ``input`` description: BLiMP at its pinned
    commit (every file was checked by sha256, so where it was read from decides nothing and is not recorded) and
    one sha256 over the files' own sha256s, so that a result names exactly the text it scored."""
    pairs = []
    for uid in paradigms:
        pairs += read_paradigm(paradigm_file(uid, folder, root=root), uid, limit)
    combined = FILES.digest([f"{uid}.jsonl" for uid in paradigms])
    return pairs, {"path": f"blimp@{COMMIT[:7]}", "sha256": combined, "kind": "minimal_pairs", "commit": COMMIT,
                   "pair_set": "blimp"}


BLIMP_COLUMNS = ("sentence_good", "sentence_bad", "field", "linguistics_term", "UID", "pairID", "simple_LM_method",
                 "one_prefix_method", "two_prefix_method", "lexically_identical", "one_prefix_prefix",
                 "one_prefix_word_good", "one_prefix_word_bad", "two_prefix_prefix_good", "two_prefix_prefix_bad",
                 "two_prefix_word", "dependency_length", "crucial_item")
"""The columns of a BLiMP line (every one that BLiMP's 67 files use); only ``sentence_good`` and ``sentence_bad``
are needed."""

RECORD_COLUMNS = ("sent_id", "subject_id", "verb_id", "feature", "good_value", "bad_value", "good_form", "bad_form")
"""What a pair made from a treebank records beside BLiMP's columns (probing.data.pair_sets.agreement): its
sentence, the subject's and the verb's word ids, the feature and its two values, the two forms."""

PAIR_FILE_COLUMNS = BLIMP_COLUMNS + RECORD_COLUMNS
"""The columns a pair file of one's own may hold, and no other: BLiMP's, and those of a pair made from a treebank
(so that pairs written out by ``probing data pairs`` read back as they were)."""

OWN_FIELD = "unlabelled"
"""The field of a pair whose line names none."""


def read_pair_file(path: str, paradigms=None, phenomena=None, limit: int | None = None
                   ) -> tuple[list[MinimalPair], dict]:
    """A user's own pairs (``--pairs-file``): a JSON-lines file in BLiMP's format, not pinned by any sha256, so the
    input block records the file's own sha256 and ``pinned: false``. A line needs ``sentence_good`` and
    ``sentence_bad``; its paradigm is its ``UID`` (else the file's name without .jsonl), its field its ``field``
    (else :data:`OWN_FIELD`), its phenomenon its ``linguistics_term``. ``paradigms`` and ``phenomena`` choose among
    the file's (a typo gets a "did you mean"), ``limit`` keeps the first N pairs of each paradigm. The whole file is
    checked first: a line that is not UTF-8 or not a JSON object, a missing or empty sentence, two identical
    sentences, a ``pairID`` seen before in its paradigm, or a column BLiMP does not have is refused in one line
    naming file:line."""
    from probing.data.datasets.cache import sha256_of
    from probing.data.relations import did_you_mean

    file = Path(path).expanduser()
    if not file.is_file():
        raise ProbingError("no such file (a JSON-lines file of pairs, BLiMP's format)", source=f"--pairs-file {path}")
    pairs: list[MinimalPair] = []
    seen: dict[tuple[str, str], int] = {}  # (paradigm, pairID) -> line
    for number, line in utf8_lines(file, str(path)):
        where = f"{path}:{number}"
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as error:
            raise ProbingError(f"is not a JSON object ({error})", source=where) from None
        if not isinstance(item, dict):
            raise ProbingError(f"is not a JSON object but a {type(item).__name__}", source=where)
        for column in item:
            if column not in PAIR_FILE_COLUMNS:
                raise ProbingError(f"unknown column {column!r}{did_you_mean(column, PAIR_FILE_COLUMNS)}: a pair has "
                                   "sentence_good and sentence_bad, and may have BLiMP's other columns (UID, field, "
                                   "linguistics_term, pairID, ...) and those of a pair made from a treebank (sent_id, "
                                   "verb_id, feature, ...)", source=where)
        for column in ("sentence_good", "sentence_bad"):
            if not isinstance(item.get(column), str) or not item[column].strip():
                raise ProbingError(f"has no {column}: a pair is a sentence_good and a sentence_bad", source=where)
        if item["sentence_good"] == item["sentence_bad"]:
            raise ProbingError("sentence_good and sentence_bad are the same sentence: no minimal pair", source=where)
        uid = str(item.get("UID") or file.name.removesuffix(".jsonl"))
        if item.get("pairID") is not None:
            key = (uid, str(item["pairID"]))
            if key in seen:
                raise ProbingError(f"pairID {key[1]!r} of paradigm {uid!r} again (first at line {seen[key]})",
                                   source=where)
            seen[key] = number
        record = tuple((column, str(item[column])) for column in RECORD_COLUMNS if column in item)
        pairs.append(MinimalPair(uid, str(item.get("field") or OWN_FIELD), item["sentence_good"],
                                 item["sentence_bad"], str(item.get("linguistics_term") or ""),
                                 "" if item.get("pairID") is None else str(item["pairID"]), record))
    if not pairs:
        raise ProbingError("holds no pair (a JSON-lines file of pairs, BLiMP's format)", source=str(path))
    kept = choose_pairs(pairs, paradigms, phenomena, limit, whose="the file's")
    return kept, {"path": str(path), "sha256": sha256_of(file), "kind": "minimal_pairs", "pinned": False}


def utf8_lines(path: Path, shown: str | None = None):
    """(number, text) of every line of a file, from 1, without its line end (LF, or CRLF); a line that is not
    UTF-8 is refused naming ``shown`` (the path as the user gave it):line and the byte.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "p.txt"
    ...     _ = path.write_bytes(b"True\\tok\\r\\nFalse\\tcaf\\xe9\\n")
    ...     list(utf8_lines(path, "p.txt"))
    Traceback (most recent call last):
    probing.errors.ProbingError: p.txt:2: is not UTF-8 (byte 0xe9 at column 10)
    """
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ProbingError(f"is not UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})",
                               source=f"{shown or path}:{number}") from None
        yield number, line.removesuffix("\r")


def choose_pairs(pairs, paradigms=None, phenomena=None, limit: int | None = None, *, whose: str = "the set's"
                 ) -> list[MinimalPair]:
    """The pairs of the paradigms chosen by ``--paradigms`` (in that order) or of the phenomena chosen by
    ``--phenomena`` (else all, in order of first appearance), the first ``limit`` of each, each paradigm's pairs
    together in their order: the layout a shard and a merge rely on. A name that is not among ``whose`` is refused
    in one line, with a "did you mean" for a typo.

    >>> pairs = [MinimalPair("a", "f", "g1", "b1", "x"), MinimalPair("b", "f", "g2", "b2", "y"),
    ...          MinimalPair("a", "f", "g3", "b3", "x")]
    >>> [pair.good for pair in choose_pairs(pairs, limit=1)], [pair.good for pair in choose_pairs(pairs, ["b", "a"])]
    (['g1', 'g2'], ['g2', 'g1', 'g3'])
    >>> choose_pairs(pairs, phenomena=["z"])
    Traceback (most recent call last):
    probing.errors.ProbingError: --phenomena: unknown phenomenon 'z' (the set's: x, y)
    """
    from probing.data.relations import did_you_mean

    uids = tuple(dict.fromkeys(pair.uid for pair in pairs))
    if phenomena:
        terms = sorted({pair.term for pair in pairs if pair.term})
        for name in phenomena:
            if name not in terms:
                raise ProbingError(f"unknown phenomenon {name!r}{did_you_mean(name, terms)} ({whose}: "
                                   f"{', '.join(terms) or 'none'})", source="--phenomena")
        if len(set(phenomena)) != len(phenomena):
            raise ProbingError("a phenomenon is named twice", source="--phenomena")
        uids = tuple(uid for uid in uids if any(pair.uid == uid and pair.term in phenomena for pair in pairs))
    if paradigms:
        uids = known_paradigms(paradigms, uids, kind="paradigm",
                               known=f"{whose}: {', '.join(uids[:5])}{' ...' if len(uids) > 5 else ''}")
    by_paradigm: dict[str, list[MinimalPair]] = {uid: [] for uid in uids}
    for pair in pairs:
        kept = by_paradigm.get(pair.uid)
        if kept is not None and (limit is None or len(kept) < limit):
            kept.append(pair)
    return [pair for uid in uids for pair in by_paradigm[uid]]
