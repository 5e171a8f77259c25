"""The cache of downloaded treebanks (``$PROBING_CACHE/treebanks``): files checked by their sha256, a pinned one
fetched again when damaged, others trusted on first download and recorded in ``manifest.json``."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

from probing.atomic import atomic_path, write_json_atomic
from probing.data.datasets.local import where_to_put
from probing.data.datasets.pinned import Treebank, TreebankFile
from probing.errors import ProbingError

MANIFEST = "manifest.json"
_TIMEOUT_S = 60
_CHUNK = 1 << 20

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


def cached_copy(tb: Treebank, tb_file: TreebankFile) -> Path | None:
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


def download_file(tb: Treebank, tb_file: TreebankFile) -> Path:
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
            raise ProbingError(mismatch(tb_file, actual, f"downloaded from {url}; nothing was cached"),
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
    return f"{what}; without network, {where_to_put(tb, tb_file)}"


def mismatch(tb_file: TreebankFile, actual: str, note: str) -> str:
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
