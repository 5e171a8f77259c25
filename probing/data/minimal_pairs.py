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

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from probing.errors import ProbingError

COMMIT = "3e56b06fcabca9b30822fc66435fca6b1aa40bb1"
"""The commit of alexwarstadt/blimp whose ``data/`` files are pinned."""

REPOSITORY = "alexwarstadt/blimp"
BASE_URL = "https://raw.githubusercontent.com"
"""BLiMP's public home; ``PROBING_BLIMP_BASE_URL`` replaces it (a mirror, or a local server in tests)."""

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


def phenomenon_of(uid: str, folder: str | None = None) -> str:
    """A paradigm's phenomenon (BLiMP's ``linguistics_term``), as the first pair of its own file labels it (the
    file found, or fetched and checked, as :func:`paradigm_file` does)."""
    path = paradigm_file(uid, folder)
    with path.open(encoding="utf-8") as lines:
        first = lines.readline()
    try:
        return str(json.loads(first)["linguistics_term"])
    except (ValueError, KeyError, TypeError) as error:
        raise ProbingError(f"is not a BLiMP pair ({type(error).__name__}: {error})", source=f"{path}:1") from None


def paradigms_of(phenomena, folder: str | None = None) -> tuple[str, ...]:
    """The paradigms of the phenomena named (``--phenomena``), in UID order, read from the paradigms' own files
    (every paradigm's first line: nothing of BLiMP ships with the package); one line naming an unknown one."""
    if len(set(phenomena)) != len(phenomena):
        raise ProbingError("a phenomenon is named twice", source="--phenomena")
    terms = {uid: phenomenon_of(uid, folder) for uid in PARADIGMS}
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
    ``linguistics_term`` (the phenomenon: subject_verb_agreement, island_effects, ...)."""

    uid: str
    field: str
    good: str
    bad: str
    term: str = ""


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


def blimp_folder(folder: str | None = None) -> Path:
    """The folder whose files a run reads (``--blimp``, else ``$PROBING_BLIMP``, else the download cache): an
    input of the run, so no output may go into it (probing.atomic.check_output_path).

    >>> str(blimp_folder("pairs"))
    'pairs'
    """
    from probing.data.datasets.cache import cache_dir

    folder = folder or os.environ.get(ENVIRONMENT)
    return Path(folder).expanduser() if folder else cache_dir() / "blimp"


def paradigm_file(uid: str, folder: str | None = None, *, download: bool = True) -> Path:
    """The checked file of one paradigm: from ``folder`` (``--blimp``), ``$PROBING_BLIMP`` or the cache
    (downloaded when absent)."""
    from probing.data.datasets.cache import cached_copy, download_file, sha256_of
    from probing.data.datasets.pinned import Treebank, TreebankFile

    option = "--blimp" if folder else ENVIRONMENT
    folder = folder or os.environ.get(ENVIRONMENT)
    if folder:
        path = Path(folder).expanduser() / f"{uid}.jsonl"
        if not path.is_file():
            raise ProbingError(f"has no {uid}.jsonl (a folder of BLiMP's UID.jsonl files)", source=f"{option} {folder}")
        actual = sha256_of(path)
        if actual != PINS[uid]:
            raise ProbingError(f"sha256 mismatch for {uid}.jsonl: expected {PINS[uid]}, got {actual} (is not the "
                               f"pinned file of BLiMP commit {COMMIT[:7]})", source=str(path))
        return path
    # The treebanks' machinery: the cache is <cache>/blimp/data/UID.jsonl, the URL BASE/REPOSITORY/COMMIT/data/UID.jsonl
    offline = f"give --blimp DIR or set {ENVIRONMENT} to a folder of BLiMP's UID.jsonl files"
    home = Treebank("blimp", REPOSITORY, COMMIT, (TreebankFile(uid, f"data/{uid}.jsonl", PINS[uid], offline),))
    tb_file = home.files[0]
    cached = cached_copy(home, tb_file)
    if cached is not None:
        return cached
    if not download:
        raise ProbingError(f"BLiMP's {uid}.jsonl is not in the cache; give --blimp DIR or set {ENVIRONMENT}")
    previous = os.environ.get("PROBING_UD_BASE_URL")
    os.environ["PROBING_UD_BASE_URL"] = os.environ.get("PROBING_BLIMP_BASE_URL") or BASE_URL
    try:
        return download_file(home, tb_file)
    finally:
        if previous is None:
            os.environ.pop("PROBING_UD_BASE_URL", None)
        else:
            os.environ["PROBING_UD_BASE_URL"] = previous


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
                                         str(item["linguistics_term"])))
            except (ValueError, KeyError, TypeError) as error:
                raise ProbingError(f"is not a BLiMP pair ({type(error).__name__}: {error})",
                                   source=f"{path}:{number}") from None
    return pairs


def read_pairs(paradigms, folder: str | None = None, limit: int | None = None) -> tuple[list[MinimalPair], dict]:
    """Every pair of ``paradigms`` (first ``limit`` of each) and an ``input`` description: BLiMP at its pinned
    commit (every file was checked by sha256, so where it was read from decides nothing and is not recorded) and
    one sha256 over the files' own sha256s, so that a result names exactly the text it scored."""
    pairs, digests = [], []
    for uid in paradigms:
        path = paradigm_file(uid, folder)
        pairs += read_paradigm(path, uid, limit)
        digests.append(f"{PINS[uid]}  {uid}.jsonl")
    combined = hashlib.sha256("\n".join(digests).encode()).hexdigest()
    return pairs, {"path": f"blimp@{COMMIT[:7]}", "sha256": combined, "kind": "minimal_pairs", "commit": COMMIT}


BLIMP_COLUMNS = ("sentence_good", "sentence_bad", "field", "linguistics_term", "UID", "pairID", "simple_LM_method",
                 "one_prefix_method", "two_prefix_method", "lexically_identical", "one_prefix_prefix",
                 "one_prefix_word_good", "one_prefix_word_bad", "two_prefix_prefix_good", "two_prefix_prefix_bad",
                 "two_prefix_word", "dependency_length", "crucial_item")
"""The columns of a BLiMP line (every one that BLiMP's 67 files use): a pair file of one's own may hold these and
no other; only ``sentence_good`` and ``sentence_bad`` are needed."""

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
    for number, raw in enumerate(file.read_bytes().split(b"\n"), start=1):
        where = f"{path}:{number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ProbingError(f"is not UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})",
                               source=where) from None
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as error:
            raise ProbingError(f"is not a JSON object ({error})", source=where) from None
        if not isinstance(item, dict):
            raise ProbingError(f"is not a JSON object but a {type(item).__name__}", source=where)
        for column in item:
            if column not in BLIMP_COLUMNS:
                raise ProbingError(f"unknown column {column!r}{did_you_mean(column, BLIMP_COLUMNS)}: a pair has "
                                   "sentence_good and sentence_bad, and may have BLiMP's other columns (UID, field, "
                                   "linguistics_term, pairID, ...)", source=where)
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
        pairs.append(MinimalPair(uid, str(item.get("field") or OWN_FIELD), item["sentence_good"],
                                 item["sentence_bad"], str(item.get("linguistics_term") or "")))
    if not pairs:
        raise ProbingError("holds no pair (a JSON-lines file of pairs, BLiMP's format)", source=str(path))
    uids = tuple(dict.fromkeys(pair.uid for pair in pairs))
    if phenomena:
        terms = sorted({pair.term for pair in pairs if pair.term})
        for name in phenomena:
            if name not in terms:
                raise ProbingError(f"unknown phenomenon {name!r}{did_you_mean(name, terms)} (the file's: "
                                   f"{', '.join(terms) or 'none'})", source="--phenomena")
        uids = tuple(uid for uid in uids if any(pair.uid == uid and pair.term in phenomena for pair in pairs))
    if paradigms:
        uids = known_paradigms(paradigms, uids, kind="paradigm",
                               known=f"the file's: {', '.join(uids[:5])}{' ...' if len(uids) > 5 else ''}")
    kept, counted = [], dict.fromkeys(uids, 0)
    for uid in uids:  # each paradigm's pairs together, in file order: the layout a shard and a merge rely on
        for pair in pairs:
            if pair.uid == uid and (limit is None or counted[uid] < limit):
                kept.append(pair)
                counted[uid] += 1
    return kept, {"path": str(path), "sha256": sha256_of(file), "kind": "minimal_pairs", "pinned": False}
