"""Universal Dependencies treebanks by name: pinned and checksummed where known, trusted on first use otherwise.

A treebank is named by its UD code as the UD project spells it (``de_gsd``,
``ko_pud``) or by its repository name (``UD_German-GSD``), with ``:split``
when it has several (``en_ewt:dev``). A treebank with a single split (every
PUD treebank) needs no split, and may also be named by a half of it:
``ko_pud:even`` or ``ko_pud:odd`` are the sentences with an even or odd
0-based index in the file (the halves that held-out selection chooses and
reports on, docs/languages.md), ``ko_pud:test`` the whole file. A plain file
path is passed through untouched, so every command can take either.

>>> KNOWN_TREEBANKS["en_ewt"].file("dev").filename   # what resolve_treebank("en_ewt:dev") finds
'en_ewt-ud-dev.conllu'
>>> parse_name("UD_Korean-PUD:odd"), parse_name("my.conllu")
(('UD_Korean-PUD', 'odd'), None)

Where a file comes from, first match wins:

1. ``$PROBING_TREEBANKS/<code>/<file>`` or ``$PROBING_TREEBANKS/<repository>/<file>``
   (a local copy or an unpacked UD release: offline use, CI);
2. the cache, ``$PROBING_CACHE/treebanks`` or ``~/.cache/probing/treebanks``,
   laid out as ``<cache>/<code>/<file>``;
3. a download of the pinned commit from
   ``https://raw.githubusercontent.com/UniversalDependencies/<repo>/<commit>/<file>``
   (``PROBING_UD_BASE_URL`` replaces the part before ``/<repo>``).

Every PUD treebank and the English dev/test treebanks are pinned here with their commit and sha256,
and a file with a pinned sha256 is checked wherever it comes from, a local copy included. Any other UD
treebank is looked up in the UniversalDependencies organisation on first use (probing.data.catalogue:
its repository, files and newest commit, recorded in the cache), and its files are trusted on first
download: the sha256 is recorded in ``<cache>/manifest.json`` with a warning on stderr, and later uses
must match that record.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from probing.atomic import atomic_path, write_json_atomic
from probing.data import catalogue
from probing.data.treebank import check_input_file
from probing.errors import ProbingError
from probing.registry import Registry

__all__ = [
    "HALVES",
    "KNOWN_TREEBANKS",
    "Treebank",
    "TreebankFile",
    "Whereabouts",
    "cache_dir",
    "fetch",
    "heldout_names",
    "is_treebank_name",
    "parse_name",
    "resolve_treebank",
    "sha256_of",
    "treebank_half",
    "whereabouts",
]

DEFAULT_BASE_URL = "https://raw.githubusercontent.com/UniversalDependencies"
MANIFEST = "manifest.json"
HALVES = ("even", "odd")
"""The two halves of a one-split treebank: sentences with an even, or an odd, 0-based index in the file."""
WHOLE = "test"
"""What names a one-split treebank's whole file besides its bare name."""

ENVIRONMENT = "PROBING_TREEBANKS"
"""The variable naming a folder of local treebank copies (``<code or repository>/<file>``)."""

_TIMEOUT_S = 60
_CHUNK = 1 << 20
# A UD code (language code, underscore, treebank: de_gsd, en_ewt) or a repository name (UD_German-GSD,
# UD_Ancient_Greek-PROIEL); a slash or a dot means the user meant a file.
_CODE = r"[a-z]{2,3}_[a-z0-9]+"
_REPOSITORY = r"UD_[A-Za-z_]+-[A-Za-z0-9]+"
_SPEC = re.compile(rf"^({_CODE}|{_REPOSITORY})(?::(\w+))?$")
_UD_FILE = re.compile(rf"^({_CODE})-ud-(\w+)\.conllu$")


@dataclass(frozen=True)
class TreebankFile:
    split: str
    filename: str
    sha256: str | None  # None: not pinned, trusted on first use
    offline: str | None = None  # how to do without the download, where that is not a treebank folder


@dataclass(frozen=True)
class Treebank:
    """One UD treebank: its code, repository, the commit its files are read at, and those files.

    ``commit`` is None only for a treebank known from a local copy alone (nothing to download).
    """

    name: str
    repo: str | None
    commit: str | None
    files: tuple[TreebankFile, ...]

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(f.split for f in self.files)

    @property
    def pinned(self) -> bool:
        return all(f.sha256 is not None for f in self.files)

    def file(self, split: str) -> TreebankFile:
        for f in self.files:
            if f.split == split:
                return f
        raise ProbingError(
            f"unknown split {split!r} of {self.name}; known splits: {', '.join(self.splits)}"
            + (f" (and the halves {self.name}:even, {self.name}:odd)" if len(self.files) == 1 else "")
        )

    def url(self, tb_file: TreebankFile) -> str:
        base = os.environ.get("PROBING_UD_BASE_URL") or DEFAULT_BASE_URL
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{tb_file.filename}"


def _tb(name: str, repo: str, commit: str, **sha_by_split: str | None) -> Treebank:
    files = tuple(
        TreebankFile(split, f"{name}-ud-{split}.conllu", sha) for split, sha in sha_by_split.items()
    )
    return Treebank(name, repo, commit, files)


KNOWN_TREEBANKS: Registry[Treebank] = Registry("treebank", option="--treebank")
"""The pinned treebanks: commits and checksums of the files the UD maintainers published at those commits.

English: dev and test only (the probe selects heads on dev and reports on test; train splits are too
large to need). PUD: every PUD treebank of the UD repositories, test-only, 1,000 parallel sentences each.
"""
for _pinned in (
    _tb(
        "en_ewt",
        "UD_English-EWT",
        "15d613d8447b3478787d4c278730a1e48a945efb",
        dev="531a54ff90d6ab12201c5a50c3e78e6ddac4de69abc4bce5d275d3cd29efe2b6",
        test="e266e515a0a7547657ed3d90d9ba46487d6bd251f27ad4269d4e8a427c8555cd",
    ),
    _tb(
        "en_gum",
        "UD_English-GUM",
        "afb41ee9bca57991125814fa04d96a0e61470c8b",
        dev="581997015a2d878ad49619032d265a9753e1b6b03d75ca18b04a00bb9ee8991d",
        test="fe95c0e744f81cdf2a307ce522604ecc05cd359c7c6d1abaa3a46c85d024f34c",
    ),
    _tb("ar_pud", "UD_Arabic-PUD", "be733f45d21f42d506c62930f806ed2182a5ee3d",
        test="a6d574a46815f6d6e7fa2e92944a2bbde0acaad5013010d92a99f1ef711ce17b"),
    _tb("de_pud", "UD_German-PUD", "ff80846ae60a0a70fc4d6251ef73e6a483a620ee",
        test="a530bdb50349bbd7c13706b6a759a9d73e8f514fff41fbf27149e914b0c3e723"),
    _tb("en_pud", "UD_English-PUD", "f16eba4ae7f3d161870ed320676c5088b8fa476c",
        test="c80584f2bc2b31d5bada78a1136f9feec7ac49e5e18898db02dea434b5b8f0aa"),
    _tb("es_pud", "UD_Spanish-PUD", "818a82b8628c9cbec78750c7e83ccba34b9ce22b",
        test="48a7b5c7f409100b24eba90c7397e01f6fecaaf3207315a9a1bda029f77e98d3"),
    _tb("fi_pud", "UD_Finnish-PUD", "fa2c5ad1df6b18333b29fe87d093051097f36365",
        test="a33821b600b818be9d3b0620d33ca54057605ab68845cdee3d649220dbd62e6e"),
    _tb("fr_pud", "UD_French-PUD", "c245786cfb3020d43bcfc96215ae531a1b07bcbc",
        test="793540702db111d2bfe04f846edddb23e7a2a432294fe17cb612dd795fb0301f"),
    _tb("hi_pud", "UD_Hindi-PUD", "8bc630f73e0737ce5ed9eaa97abf11f172ecc9bd",
        test="3562b7f49420912acad70a45a483f683dcb44624ea92f82e21b29f2ee41a9dff"),
    _tb("id_pud", "UD_Indonesian-PUD", "765fb3fe486201f094cb177aff5aa84bc6b06800",
        test="07efad4d64863ab442aef820afdb34c269f80366c6efb583225f943e5baf88b2"),
    _tb("ko_pud", "UD_Korean-PUD", "9bc99c21a00b88d44def216b64f898e4b6151d0d",
        test="662fcdaf236a223699b410c812ca66e3e69c380c078ae552a88f207ba240981c"),
    _tb("pt_pud", "UD_Portuguese-PUD", "be08a756d76bd79bf5d4a492dfdc28b46b33e76e",
        test="6fb673563b068c0693144aba16c9406f8672ef9d6a7703d8ccf71a44a07df937"),
    _tb("ru_pud", "UD_Russian-PUD", "da5b3816eeaa24283c1d81a48bb1de4d062fc5d5",
        test="a37e076d24f0c3cfd5d48a11bbfec36026da5dc46180b7a12dc991dc372de1ea"),
    _tb("sv_pud", "UD_Swedish-PUD", "1290a67471931e543b4d2a734829f9177c604e94",
        test="4f978396f363c85a9c7ece193327529e4cdbe9ce0f6ad807eb8846e865043fff"),
    _tb("tr_pud", "UD_Turkish-PUD", "63a134a087c8475ea832713b960baba8ff2f9401",
        test="7c1b6fe01662a7617758fbecdda6af6fc3914ace46b1809d6514af0a1c1df88c"),
    _tb("zh_pud", "UD_Chinese-PUD", "2849afd946a8c01b3e9acdf3e7afa8670cf2777d",
        test="e12582af2e2bbc2e27155ca7dc12b6fc4a037dbc716e1f805d67e34ffb2596b3"),
):
    KNOWN_TREEBANKS.register(_pinned.name, _pinned)
_BY_REPOSITORY = {tb.repo: tb for _, tb in KNOWN_TREEBANKS.items()}


def cache_dir() -> Path:
    """Where downloaded treebanks live: ``$PROBING_CACHE/treebanks`` or ``~/.cache/probing/treebanks``."""
    root = os.environ.get("PROBING_CACHE")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "probing"
    return base / "treebanks"


def sha256_of(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file, read in chunks so large treebanks need little memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def parse_name(spec: str) -> tuple[str, str | None] | None:
    """``(name, split or None)`` when ``spec`` reads as a treebank name rather than a file path, else None.

    >>> parse_name("de_gsd:dev"), parse_name("ko_pud"), parse_name("data/x.conllu")
    (('de_gsd', 'dev'), ('ko_pud', None), None)
    """
    match = _SPEC.match(spec)
    return None if match is None else (match.group(1), match.group(2))


def is_treebank_name(spec: str) -> bool:
    """Whether ``spec`` names a UD treebank (``en_ewt:dev``, ``ko_pud:odd``) rather than an existing file.

    Only the form is looked at: nothing is resolved or downloaded.

    >>> is_treebank_name("en_ewt:dev"), is_treebank_name("UD_German-GSD"), is_treebank_name("my.conllu")
    (True, True, False)
    """
    return parse_name(spec) is not None and not Path(spec).expanduser().is_file()


def treebank_half(spec: str | None) -> str | None:
    """``"even"`` or ``"odd"`` when ``spec`` names a half of a one-split treebank, else None.

    >>> treebank_half("ko_pud:odd"), treebank_half("ko_pud"), treebank_half("en_ewt:dev")
    ('odd', None, None)
    """
    parsed = parse_name(spec) if spec and is_treebank_name(spec) else None
    return parsed[1] if parsed is not None and parsed[1] in HALVES else None


def heldout_names(spec: str | None) -> tuple[str, str] | None:
    """The (choose on, report on) names a bare treebank name stands for, else None.

    A treebank with dev and test splits: choose on dev, report on test. A treebank with one split (every
    PUD treebank): choose on its even half, report on its odd half (docs/languages.md).

    >>> heldout_names("en_ewt"), heldout_names("ko_pud"), heldout_names("ko_pud:test")
    (('en_ewt:dev', 'en_ewt:test'), ('ko_pud:even', 'ko_pud:odd'), None)
    """
    parsed = parse_name(spec) if spec and is_treebank_name(spec) else None
    if parsed is None or parsed[1] is not None:
        return None
    treebank = _lookup(parsed[0])
    if {"dev", "test"} <= set(treebank.splits):
        return f"{spec}:dev", f"{spec}:test"
    if len(treebank.splits) == 1:
        return f"{spec}:{HALVES[0]}", f"{spec}:{HALVES[1]}"
    return None


def resolve_treebank(spec: str, *, download: bool = True) -> Path:
    """Path of the treebank file that ``spec`` (a file path or ``name[:split]``) names.

    A half (``ko_pud:odd``) resolves to its whole file; probing.data.inputs reads the half of it.
    """
    path = Path(spec).expanduser()
    if path.is_file():
        return path
    parsed = parse_name(spec)
    if parsed is None:
        # Not a name: say why the path is no treebank file (missing, a folder,
        # a FIFO...), rather than "not found" for a path that exists.
        return check_input_file(path, not_found_hint=f" (or name a UD treebank such as en_ewt:dev or "
                                                      f"ko_pud; pinned: {_known_names()})")
    tb = _lookup(parsed[0], download=download)
    return _resolve(tb, _pick_split(tb, parsed[1]), download=download)


def fetch(name: str, splits: list[str] | tuple[str, ...] | None = None) -> list[Path]:
    """Make ``name``'s splits (all by default) available locally; return their paths.

    A split already in ``PROBING_TREEBANKS`` or the cache is not downloaded again.
    """
    if parse_name(name) is None or parse_name(name)[1] is not None:
        raise ProbingError(f"not a treebank name: {name!r}; name one such as en_ewt, ko_pud or UD_German-GSD")
    tb = _lookup(name)
    return [_resolve(tb, tb.file(split).split, download=True) for split in (splits or tb.splits)]


@dataclass(frozen=True)
class Whereabouts:
    """Where one split of a known treebank would be read from, and whether it is on this machine already.

    ``origin`` is ``PROBING_TREEBANKS`` (a local copy), ``cache`` or ``download``; ``where`` is the file
    or, for a download, the pinned URL. Found without reading the files (their sha256 is checked on use).
    """

    name: str
    split: str
    origin: str
    where: str

    @property
    def local(self) -> bool:
        return self.origin != "download"


def whereabouts() -> list[Whereabouts]:
    """Every split of every pinned treebank, in name order, with where it would come from; then the
    treebanks found under ``$PROBING_TREEBANKS`` that are not pinned.

    >>> found = {(entry.name, entry.split): entry for entry in whereabouts()}
    >>> found["en_ewt", "dev"].origin in ("PROBING_TREEBANKS", "cache", "download")
    True
    """
    found = []
    for name, tb in sorted(KNOWN_TREEBANKS.items()):
        for tb_file in tb.files:
            copy, cached = _local_copy_path(tb, tb_file), cache_dir() / tb.name / tb_file.filename
            if copy is not None:
                found.append(Whereabouts(name, tb_file.split, "PROBING_TREEBANKS", str(copy)))
            elif cached.is_file():
                found.append(Whereabouts(name, tb_file.split, "cache", str(cached)))
            else:
                found.append(Whereabouts(name, tb_file.split, "download", tb.url(tb_file)))
    for tb in local_treebanks():
        for tb_file in tb.files:
            found.append(Whereabouts(tb.name, tb_file.split, "PROBING_TREEBANKS", str(_local_copy_path(tb, tb_file))))
    return found


def local_treebanks() -> list[Treebank]:
    """The treebanks found under ``$PROBING_TREEBANKS`` (``<code or repository>/<code>-ud-<split>.conllu``)."""
    root = treebanks_root()
    if root is None:
        return []
    found = {}
    for folder in sorted(root.iterdir()):
        treebank = _local_treebank(folder.name) if folder.is_dir() else None
        if treebank is not None:
            found.setdefault(treebank.name, treebank)
    return list(found.values())


def treebanks_root(value: str | None = None) -> Path | None:
    """The folder ``value`` (default: ``$PROBING_TREEBANKS``) names, or None when it is empty. Anything but a
    folder (a file, a path that does not exist) is refused in one line: ignored, a typo in the variable would
    send every treebank name to the network, and the error would be about a download nobody asked for.

    >>> treebanks_root("/no/such/folder")
    Traceback (most recent call last):
    probing.errors.ProbingError: PROBING_TREEBANKS=/no/such/folder: no such folder (it should name a folder ...)
    """
    value = os.environ.get(ENVIRONMENT) if value is None else value
    if not value:
        return None
    root = Path(value).expanduser()
    if not root.is_dir():
        what = "is a file, not a folder" if root.is_file() else "is not a folder" if root.exists() else "no such folder"
        raise ProbingError(f"{what} (it should name a folder holding <code>/<code>-ud-<split>.conllu, such as "
                           "en_ewt/en_ewt-ud-dev.conllu)", source=f"{ENVIRONMENT}={value}")
    return root


def _known_names() -> str:
    return ", ".join(sorted(KNOWN_TREEBANKS))


def _known_or_local() -> list[str]:
    """Every treebank name this machine can resolve without asking the UD organisation: the pinned ones, their
    repositories, and those under ``$PROBING_TREEBANKS`` (the candidates of a "did you mean")."""
    return sorted({*KNOWN_TREEBANKS, *_BY_REPOSITORY, *(tb.name for tb in local_treebanks())})


def _lookup(name: str, *, download: bool = True) -> Treebank:
    """The treebank a code or repository name means: pinned, else a local copy, else the UD catalogue."""
    if name in KNOWN_TREEBANKS:
        return KNOWN_TREEBANKS[name]
    if name in _BY_REPOSITORY:
        return _BY_REPOSITORY[name]
    local = _local_treebank(name)
    if local is not None:
        return local
    entry = catalogue.lookup(name, cache_dir(), offline=not download, pinned=_known_names(), known=_known_or_local())
    files = tuple(TreebankFile(split, filename, None) for split, filename in sorted(entry["files"].items()))
    return Treebank(entry["code"], entry["repo"], entry["commit"], files)


def _local_treebank(name: str) -> Treebank | None:
    """A treebank not pinned here but present under ``$PROBING_TREEBANKS/<name>/`` (code or repository name)."""
    if name in KNOWN_TREEBANKS or name in _BY_REPOSITORY:
        return None
    root = treebanks_root()
    if root is None:
        return None
    folder = root / name
    if not folder.is_dir():
        return None
    files: dict[str, TreebankFile] = {}
    codes = set()
    for path in sorted(folder.glob("*-ud-*.conllu")):
        match = _UD_FILE.match(path.name)
        if match is not None and (match.group(1) == name or name.startswith("UD_")):
            codes.add(match.group(1))
            files[match.group(2)] = TreebankFile(match.group(2), path.name, None)
    if len(codes) != 1:
        return None
    code = codes.pop()
    return Treebank(code, name if name.startswith("UD_") else None, None, tuple(files[s] for s in sorted(files)))


def _pick_split(tb: Treebank, split: str | None) -> str:
    if split in HALVES and len(tb.splits) != 1:
        choices = " or ".join(f"{tb.name}:{s}" for s in tb.splits)
        raise ProbingError(f"{tb.name} has several splits ({choices}); halves are for a treebank with one split, "
                           "such as a PUD treebank")
    if split in HALVES or (split == WHOLE and len(tb.splits) == 1):
        return tb.splits[0]  # a half is read from the whole file (probing.data.inputs takes the half)
    if split is not None:
        return tb.file(split).split
    if len(tb.splits) == 1:
        return tb.splits[0]
    # No silent default: probing dev when test was meant (or vice versa) leaks the test set.
    choices = " or ".join(f"{tb.name}:{s}" for s in tb.splits)
    raise ProbingError(f"{tb.name} has several splits; name one: {choices}")


def _resolve(tb: Treebank, split: str, *, download: bool) -> Path:
    tb_file = tb.file(split)
    local = _local_copy(tb, tb_file)
    if local is not None:
        return local
    cached = _cached(tb, tb_file)
    if cached is not None:
        return cached
    if not download or tb.commit is None:
        raise ProbingError(
            f"{tb.name}:{split} is not in the cache ({cache_dir()}); run `probing data fetch "
            f"{tb.name}` or {_where_to_put(tb, tb_file)}"
        )
    return _download(tb, tb_file)


def _local_copy_places(tb: Treebank, tb_file: TreebankFile) -> list[Path]:
    """Where under ``$PROBING_TREEBANKS`` a treebank's file is looked for: ``<code>/<file>``, then
    ``<repository>/<file>`` (none when the variable is not set)."""
    root = treebanks_root()
    if root is None:
        return []
    return [root / folder / tb_file.filename for folder in dict.fromkeys(name for name in (tb.name, tb.repo) if name)]


def _local_copy_path(tb: Treebank, tb_file: TreebankFile) -> Path | None:
    """The file under ``$PROBING_TREEBANKS/<code or repository>/``, if there is one (not checked).

    A variable set one folder too deep (to the treebank's own folder, which holds the file itself) is
    refused naming the folder it should name, rather than read past to the cache and the network."""
    places = _local_copy_places(tb, tb_file)
    for path in places:
        if path.is_file():
            return path
    root = places[0].parent.parent if places else None
    if root is not None and (root / tb_file.filename).is_file():
        above = f"; set {ENVIRONMENT}={root.parent}" if root.name in (tb.name, tb.repo) else ""
        raise ProbingError(f"holds {tb_file.filename} itself: the variable names a folder one level too deep "
                           f"(looked for {' and '.join(str(path) for path in places)}); it should name the folder "
                           f"that holds {tb.name}/{tb_file.filename}{above}", source=f"{ENVIRONMENT}={root}")
    return None


def _where_to_put(tb: Treebank, tb_file: TreebankFile) -> str:
    """How to do without the network: where ``$PROBING_TREEBANKS`` was looked in (when set), or what to set it
    to."""
    places = _local_copy_places(tb, tb_file)
    if places:
        return f"put the file under {ENVIRONMENT} (looked for {' and '.join(str(path) for path in places)})"
    return f"set {ENVIRONMENT} to a folder holding {tb.name}/{tb_file.filename}"


def _local_copy(tb: Treebank, tb_file: TreebankFile) -> Path | None:
    path = _local_copy_path(tb, tb_file)
    if path is None:
        return None
    # A local copy with a known checksum must be the pinned file: a silently
    # different treebank would make scores incomparable.
    if tb_file.sha256 is not None:
        actual = sha256_of(path)
        if actual != tb_file.sha256:
            raise ProbingError(_mismatch(tb_file, actual, "is not the pinned file"), source=str(path))
    return path


def _cached(tb: Treebank, tb_file: TreebankFile) -> Path | None:
    path = cache_dir() / tb.name / tb_file.filename
    if not path.is_file():
        return None
    actual = sha256_of(path)
    expected = tb_file.sha256 or _manifest_sha(tb, tb_file)
    if expected is None:
        # Cached but unrecorded (manifest lost): record it now, still unverified.
        _record(tb, tb_file, actual)
        _warn_unverified(tb, tb_file, actual)
        return path
    if actual == expected:
        return path
    if tb_file.sha256 is None:
        # Trust-on-first-use: a changed file is exactly what the record guards against.
        raise ProbingError(
            f"sha256 {actual} differs from the one recorded on first download ({expected}) "
            f"in {cache_dir() / MANIFEST}; delete the file to download it again",
            source=str(path),
        )
    # A pinned file that no longer matches is damaged: drop it and fetch it again.
    print(f"probing: {path} is damaged (sha256 {actual}); downloading it again", file=sys.stderr)
    path.unlink()
    return None


def _download(tb: Treebank, tb_file: TreebankFile) -> Path:
    url = tb.url(tb_file)
    final = cache_dir() / tb.name / tb_file.filename
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProbingError(
            f"cannot create the cache folder ({exc}); set PROBING_CACHE", source=str(final.parent)
        ) from None
    # probing.atomic: an interrupted or bad download never leaves a file under the final name.
    with atomic_path(final, suffix=".part") as temporary:
        with open(temporary, "wb") as out:
            actual = _copy_url(url, out, tb, tb_file)
        if tb_file.sha256 is not None and actual != tb_file.sha256:
            raise ProbingError(_mismatch(tb_file, actual, f"downloaded from {url}; nothing was cached"),
                               source=f"{tb.name}/{tb_file.filename}")
    if tb_file.sha256 is None:
        _record(tb, tb_file, actual, url=url)
        _warn_unverified(tb, tb_file, actual)
    return final


def _copy_url(url: str, out, tb: Treebank, tb_file: TreebankFile) -> str:
    """Stream ``url`` into ``out``; return the sha256 of what was written. "downloading" is said once the
    server has answered: offline, the one line is the error."""
    digest = hashlib.sha256()
    # A fresh opener per call reads the proxy settings of this moment, not of the first call.
    opener = urllib.request.build_opener()
    try:
        with opener.open(url, timeout=_TIMEOUT_S) as response:
            print(f"probing: downloading {url}", file=sys.stderr)
            for chunk in iter(lambda: response.read(_CHUNK), b""):
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        raise ProbingError(_net_hint(f"HTTP {exc.code} {exc.reason}", tb, tb_file), source=url) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ProbingError(_net_hint(f"download failed ({reason})", tb, tb_file), source=url) from None
    return digest.hexdigest()


def _net_hint(what: str, tb: Treebank, tb_file: TreebankFile) -> str:
    if tb_file.offline:
        return f"{what}; without network, {tb_file.offline}"
    return f"{what}; without network, {_where_to_put(tb, tb_file)}"


def _mismatch(tb_file: TreebankFile, actual: str, note: str) -> str:
    return f"sha256 mismatch for {tb_file.filename}: expected {tb_file.sha256}, got {actual} ({note})"


def _warn_unverified(tb: Treebank, tb_file: TreebankFile, actual: str) -> None:
    print(
        f"probing: warning: {tb.name}/{tb_file.filename} has no pinned sha256 and is unverified; "
        f"trusting it on first use (sha256 {actual}, recorded in {cache_dir() / MANIFEST})",
        file=sys.stderr,
    )


def _manifest_key(tb: Treebank, tb_file: TreebankFile) -> str:
    return f"{tb.name}/{tb_file.filename}"


def read_manifest() -> dict:
    """The record of files trusted on first download (``{"<code>/<file>": {sha256, url, verified}}``)."""
    path = cache_dir() / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ProbingError(
            f"unreadable manifest ({exc}); delete it to start afresh", source=str(path)
        ) from None


def _manifest_sha(tb: Treebank, tb_file: TreebankFile) -> str | None:
    entry = read_manifest().get(_manifest_key(tb, tb_file))
    return entry.get("sha256") if isinstance(entry, dict) else None


def _record(tb: Treebank, tb_file: TreebankFile, sha: str, url: str | None = None) -> None:
    manifest = read_manifest()
    manifest[_manifest_key(tb, tb_file)] = {
        "sha256": sha,
        "url": url or (tb.url(tb_file) if tb.commit else None),
        "verified": False,
    }
    write_json_atomic(manifest, cache_dir() / MANIFEST)
