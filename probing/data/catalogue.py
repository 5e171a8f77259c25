"""UD treebanks that are not pinned here: found in the UniversalDependencies organisation on first use.

A repository name (``UD_German-GSD``) is read directly; a UD code (``de_gsd``) needs the
organisation's list of repositories first (the code's language part cannot be turned into the
repository's language name without it): every repository whose treebank part matches the code's
(``...-GSD`` for ``de_gsd``) is looked at until one holds ``de_gsd-ud-*.conllu``. What is found (the
repository, its newest commit and its files) is recorded in ``<cache>/catalogue.json``, so the same
name later resolves to the same commit without network; the files themselves are then trusted on
first download (probing.data.datasets). ``PROBING_UD_API_URL`` replaces ``https://api.github.com``.

>>> treebank_part("de_gsd"), treebank_part("UD_Ancient_Greek-PROIEL")
('gsd', 'proiel')
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

from probing.atomic import write_json_atomic
from probing.errors import ProbingError

ORGANISATION = "UniversalDependencies"
DEFAULT_API_URL = "https://api.github.com"
CATALOGUE = "catalogue.json"
_PAGE = 100
_TIMEOUT_S = 30
_UD_FILE = re.compile(r"^([a-z]{2,3}_[a-z0-9]+)-ud-(\w+)\.conllu$")


def treebank_part(name: str) -> str:
    """The treebank part of a code or repository name, lowercased (what both spellings share)."""
    return (name.rsplit("-", 1)[1] if name.startswith("UD_") else name.split("_", 1)[1]).lower()


def recorded(name: str, cache: Path) -> dict | None:
    """The catalogue entry recorded in the ``cache`` folder for a code or repository name, or None."""
    for entry in _read(cache).values():
        if name in (entry.get("code"), entry.get("repo")):
            return entry
    return None


def lookup(name: str, cache: Path, *, offline: bool = False, pinned: str = "", known=()) -> dict:
    """``{code, repo, commit, files: {split: filename}}`` for a UD code or repository name.

    Recorded entries need no network; otherwise the organisation is asked, and the answer recorded. A name
    no one knows is refused naming the nearest of ``known`` (the names resolvable here) and those recorded:
    a typo such as ``en_ewtt`` is most often what sent it here. The name comes first in the message, the API
    address that did not answer last.

    >>> lookup("en_ewtt", Path("/no/such/cache"), offline=True, pinned="en_ewt", known=["en_ewt"])
    Traceback (most recent call last):
    probing.errors.ProbingError: unknown treebank 'en_ewtt' (did you mean en_ewt?): not pinned and not looked up yet ...
    """
    from probing.data.relations import did_you_mean

    entry = recorded(name, cache)
    if entry is not None:
        return entry
    near = did_you_mean(name, [*known, *_read(cache)])
    unknown = f"unknown treebank {name!r}{near}"
    hint = (f"pinned here: {pinned}; or set PROBING_TREEBANKS to a folder holding "
            f"{name}/<code>-ud-<split>.conllu")
    if offline:
        raise ProbingError(f"{unknown}: not pinned and not looked up yet ({hint})")
    try:
        entry = _from_repository(name) if name.startswith("UD_") else _from_code(name)
    except _Unreachable as error:
        raise ProbingError(f"cannot look up treebank {name!r}{near}: it is not pinned here, and the {ORGANISATION} "
                           f"repositories could not be asked for it ({error} from {error.url}); {hint}") from None
    if entry is None:
        raise ProbingError(f"{unknown}: no {ORGANISATION} repository holds it ({hint})")
    catalogue = _read(cache)
    catalogue[entry["code"]] = entry
    write_json_atomic(catalogue, cache / CATALOGUE)
    return entry


def _from_code(code: str) -> dict | None:
    part = treebank_part(code)
    for repo in _repositories():
        if repo.startswith("UD_") and "-" in repo and treebank_part(repo) == part:
            entry = _from_repository(repo)
            if entry is not None and entry["code"] == code:
                return entry
    return None


def _from_repository(repo: str) -> dict | None:
    commit = _get(f"repos/{ORGANISATION}/{repo}/commits/HEAD")
    if commit is None:
        return None
    listing = _get(f"repos/{ORGANISATION}/{repo}/contents?ref={commit['sha']}") or []
    files, codes = {}, set()
    for item in listing:
        match = _UD_FILE.match(str(item.get("name", "")))
        if match is not None:
            codes.add(match.group(1))
            files[match.group(2)] = item["name"]
    if len(codes) != 1:
        return None
    return {"code": codes.pop(), "repo": repo, "commit": commit["sha"], "files": files}


def _repositories() -> list[str]:
    names, page = [], 1
    while True:
        batch = _get(f"orgs/{ORGANISATION}/repos?per_page={_PAGE}&page={page}") or []
        names += [str(item.get("name", "")) for item in batch]
        if len(batch) < _PAGE:
            return names
        page += 1


class _Unreachable(Exception):
    def __init__(self, reason: str, url: str):
        super().__init__(reason)
        self.url = url


def _get(path: str):
    """The JSON at ``path`` of the API; None for a 404 (no such repository); _Unreachable otherwise."""
    base = os.environ.get("PROBING_UD_API_URL") or DEFAULT_API_URL
    url = f"{base.rstrip('/')}/{path}"
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.github+json"})
    try:
        with urllib.request.build_opener().open(request, timeout=_TIMEOUT_S) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise _Unreachable(f"HTTP {error.code} {error.reason}", url) from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise _Unreachable(f"no answer: {getattr(error, 'reason', error)}", url) from None


def _read(cache: Path) -> dict:
    path = cache / CATALOGUE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise ProbingError(f"unreadable catalogue ({error}); delete it to start afresh", source=str(path)) from None
