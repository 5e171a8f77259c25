"""Public Universal Dependencies treebanks, pinned and checksummed.

A treebank is named ``name:split`` (``en_ewt:dev``); a name alone is enough
when the treebank has one split (``en_pud``). A plain file path is passed
through untouched, so every command can take either.

>>> KNOWN_TREEBANKS["en_ewt"].file("dev").filename   # what resolve_treebank("en_ewt:dev") finds
'en_ewt-ud-dev.conllu'

Where a file comes from, first match wins:

1. ``$PROBING_TREEBANKS/<name>/<filename>``: a local copy (offline use, CI);
2. the cache, ``$PROBING_CACHE/treebanks`` or ``~/.cache/probing/treebanks``,
   laid out as ``<cache>/<name>/<filename>``;
3. a download of the pinned commit from
   ``https://raw.githubusercontent.com/UniversalDependencies/<repo>/<commit>/<filename>``
   (``PROBING_UD_BASE_URL`` replaces the part before ``/<repo>``).

Files with a known sha256 are checked wherever they come from. A file whose
sha256 is not known (``en_pud``) is trusted on first use: its first download
is recorded in ``<cache>/manifest.json`` with a warning on stderr, and later
uses must match that record.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from probing.errors import ProbingError
from probing.data.treebank import check_input_file

__all__ = [
    "KNOWN_TREEBANKS",
    "Treebank",
    "TreebankFile",
    "Whereabouts",
    "cache_dir",
    "fetch",
    "resolve_treebank",
    "sha256_of",
    "whereabouts",
]

DEFAULT_BASE_URL = "https://raw.githubusercontent.com/UniversalDependencies"
MANIFEST = "manifest.json"
_TIMEOUT_S = 60
_CHUNK = 1 << 20
# Only word characters: anything else (a slash, a dot) means the user meant a file.
_SPEC = re.compile(r"^(\w+)(?::(\w+))?$")


@dataclass(frozen=True)
class TreebankFile:
    split: str
    filename: str
    sha256: str | None  # None: not known offline, trusted on first use


@dataclass(frozen=True)
class Treebank:
    name: str
    repo: str
    commit: str
    files: tuple[TreebankFile, ...]

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(f.split for f in self.files)

    def file(self, split: str) -> TreebankFile:
        for f in self.files:
            if f.split == split:
                return f
        raise ProbingError(
            f"unknown split {split!r} of {self.name}; known splits: {', '.join(self.splits)}"
        )

    def url(self, tb_file: TreebankFile) -> str:
        base = os.environ.get("PROBING_UD_BASE_URL") or DEFAULT_BASE_URL
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{tb_file.filename}"


def _tb(name: str, repo: str, commit: str, **sha_by_split: str | None) -> Treebank:
    files = tuple(
        TreebankFile(split, f"{name}-ud-{split}.conllu", sha) for split, sha in sha_by_split.items()
    )
    return Treebank(name, repo, commit, files)


# Commits and checksums of the files the UD maintainers published at these commits; train
# splits are left out on purpose (the probe selects heads on dev and reports on test).
KNOWN_TREEBANKS: dict[str, Treebank] = {
    tb.name: tb
    for tb in (
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
        # PUD is a test set only. Its checksum could not be measured offline,
        # so the first download is trusted and recorded (see module docstring).
        _tb("en_pud", "UD_English-PUD", "b3e4e5ec6aee90b8605190ef3e13d68ebce8b11f", test=None),
    )
}


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


def is_treebank_name(spec: str) -> bool:
    """Whether ``spec`` names a known public treebank (``en_ewt:dev``, ``en_pud``) rather than a file.

    >>> is_treebank_name("en_ewt:dev"), is_treebank_name("my.conllu")
    (True, False)
    """
    match = _SPEC.match(spec)
    return bool(match) and match.group(1) in KNOWN_TREEBANKS and not Path(spec).expanduser().is_file()


def resolve_treebank(spec: str, *, download: bool = True) -> Path:
    """Path of the treebank file that ``spec`` (a file path or ``name[:split]``) names."""
    path = Path(spec).expanduser()
    if path.is_file():
        return path
    match = _SPEC.match(spec)
    if match is None or (match.group(2) is None and match.group(1) not in KNOWN_TREEBANKS):
        # Not a name: say why the path is no treebank file (missing, a folder,
        # a FIFO...), rather than "not found" for a path that exists.
        return check_input_file(path, not_found_hint=f" (or name a known treebank as name:split: {_known_names()})")
    tb = _lookup(match.group(1))
    return _resolve(tb, _pick_split(tb, match.group(2)), download=download)


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
    """Every split of every treebank in :data:`KNOWN_TREEBANKS`, in name order, with where it would come from.

    >>> found = {(entry.name, entry.split): entry for entry in whereabouts()}
    >>> found["en_ewt", "dev"].origin in ("PROBING_TREEBANKS", "cache", "download")
    True
    """
    found = []
    for name, tb in sorted(KNOWN_TREEBANKS.items()):
        for tb_file in tb.files:
            copy, cached = _local_copy_path(tb, tb_file), _cache_path(tb, tb_file)
            if copy is not None and copy.is_file():
                found.append(Whereabouts(name, tb_file.split, "PROBING_TREEBANKS", str(copy)))
            elif cached.is_file():
                found.append(Whereabouts(name, tb_file.split, "cache", str(cached)))
            else:
                found.append(Whereabouts(name, tb_file.split, "download", tb.url(tb_file)))
    return found


def fetch(name: str, splits: list[str] | tuple[str, ...] | None = None) -> list[Path]:
    """Make ``name``'s splits (all by default) available locally; return their paths.

    A split already in ``PROBING_TREEBANKS`` or the cache is not downloaded again.
    """
    tb = _lookup(name)
    return [_resolve(tb, split, download=True) for split in (splits or tb.splits)]


def _known_names() -> str:
    return ", ".join(sorted(KNOWN_TREEBANKS))


def _lookup(name: str) -> Treebank:
    try:
        return KNOWN_TREEBANKS[name]
    except KeyError:
        raise ProbingError(f"unknown treebank {name!r}; known treebanks: {_known_names()}") from None


def _pick_split(tb: Treebank, split: str | None) -> str:
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
    if not download:
        raise ProbingError(
            f"{tb.name}:{split} is not in the cache ({cache_dir()}); run `probing data fetch "
            f"{tb.name}` or set PROBING_TREEBANKS to a folder holding {tb.name}/{tb_file.filename}"
        )
    return _download(tb, tb_file)


def _local_copy_path(tb: Treebank, tb_file: TreebankFile) -> Path | None:
    """Where ``$PROBING_TREEBANKS`` would hold the file (None when it is not set)."""
    root = os.environ.get("PROBING_TREEBANKS")
    return Path(root).expanduser() / tb.name / tb_file.filename if root else None


def _cache_path(tb: Treebank, tb_file: TreebankFile) -> Path:
    return cache_dir() / tb.name / tb_file.filename


def _local_copy(tb: Treebank, tb_file: TreebankFile) -> Path | None:
    path = _local_copy_path(tb, tb_file)
    if path is None or not path.is_file():
        return None
    # A local copy with a known checksum must be the pinned file: a silently
    # different treebank would make scores incomparable.
    if tb_file.sha256 is not None:
        actual = sha256_of(path)
        if actual != tb_file.sha256:
            raise ProbingError(_mismatch(tb_file, actual, "is not the pinned file"), source=str(path))
    return path


def _cached(tb: Treebank, tb_file: TreebankFile) -> Path | None:
    path = _cache_path(tb, tb_file)
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
    folder = cache_dir() / tb.name
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProbingError(
            f"cannot create the cache folder ({exc}); set PROBING_CACHE", source=str(folder)
        ) from None
    print(f"probing: downloading {url}", file=sys.stderr)
    # The temp file sits in the target folder so os.replace is an atomic rename:
    # an interrupted or bad download never leaves a file under the final name.
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{tb_file.filename}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            actual = _copy_url(url, out, tb_file)
        if tb_file.sha256 is not None and actual != tb_file.sha256:
            raise ProbingError(_mismatch(tb_file, actual, f"downloaded from {url}; nothing was cached"),
                               source=f"{tb.name}/{tb_file.filename}")
        final = folder / tb_file.filename
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    if tb_file.sha256 is None:
        _record(tb, tb_file, actual, url=url)
        _warn_unverified(tb, tb_file, actual)
    return final


def _copy_url(url: str, out, tb_file: TreebankFile) -> str:
    """Stream ``url`` into ``out``; return the sha256 of what was written."""
    digest = hashlib.sha256()
    # A fresh opener per call reads the proxy settings of this moment, not of the first call.
    opener = urllib.request.build_opener()
    try:
        with opener.open(url, timeout=_TIMEOUT_S) as response:
            for chunk in iter(lambda: response.read(_CHUNK), b""):
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        raise ProbingError(_net_hint(f"HTTP {exc.code} {exc.reason}", tb_file), source=url) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ProbingError(_net_hint(f"download failed ({reason})", tb_file), source=url) from None
    return digest.hexdigest()


def _net_hint(what: str, tb_file: TreebankFile) -> str:
    return (f"{what}; without network, set PROBING_TREEBANKS to a folder laid out as "
            f"<name>/{tb_file.filename}")


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


def _read_manifest() -> dict:
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
    entry = _read_manifest().get(_manifest_key(tb, tb_file))
    return entry.get("sha256") if isinstance(entry, dict) else None


def _record(tb: Treebank, tb_file: TreebankFile, sha: str, url: str | None = None) -> None:
    manifest = _read_manifest()
    manifest[_manifest_key(tb, tb_file)] = {
        "sha256": sha,
        "url": url or tb.url(tb_file),
        "verified": False,
    }
    path = cache_dir() / MANIFEST
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".manifest.", suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(manifest, out, indent=2, sort_keys=True)
            out.write("\n")
        os.replace(tmp, path)  # atomic, like the treebank files themselves
    finally:
        Path(tmp).unlink(missing_ok=True)
