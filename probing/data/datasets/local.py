"""Treebank files under ``$PROBING_TREEBANKS`` (``<code or repository>/<code>-ud-<split>.conllu``): local
copies of pinned treebanks, and treebanks known from a local copy alone."""

from __future__ import annotations

import os
from pathlib import Path

from probing.data.datasets.names import UD_FILE
from probing.data.datasets.pinned import BY_REPOSITORY, KNOWN_TREEBANKS, Treebank, TreebankFile
from probing.errors import ProbingError

ENVIRONMENT = "PROBING_TREEBANKS"
"""The variable naming a folder of local treebank copies (``<code or repository>/<file>``)."""


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



def local_treebanks() -> list[Treebank]:
    """The treebanks found under ``$PROBING_TREEBANKS`` (``<code or repository>/<code>-ud-<split>.conllu``)."""
    root = treebanks_root()
    if root is None:
        return []
    found = {}
    for folder in sorted(root.iterdir()):
        treebank = local_treebank(folder.name) if folder.is_dir() else None
        if treebank is not None:
            found.setdefault(treebank.name, treebank)
    return list(found.values())


def local_treebank(name: str) -> Treebank | None:
    """A treebank not pinned here but present under ``$PROBING_TREEBANKS/<name>/`` (code or repository name)."""
    if name in KNOWN_TREEBANKS or name in BY_REPOSITORY:
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
        match = UD_FILE.match(path.name)
        if match is not None and (match.group(1) == name or name.startswith("UD_")):
            codes.add(match.group(1))
            files[match.group(2)] = TreebankFile(match.group(2), path.name, None)
    if len(codes) != 1:
        return None
    code = codes.pop()
    return Treebank(code, name if name.startswith("UD_") else None, None, tuple(files[s] for s in sorted(files)))


def _local_copy_places(tb: Treebank, tb_file: TreebankFile) -> list[Path]:
    """Where under ``$PROBING_TREEBANKS`` a treebank's file is looked for: ``<code>/<file>``, then
    ``<repository>/<file>`` (none when the variable is not set)."""
    root = treebanks_root()
    if root is None:
        return []
    return [root / folder / tb_file.filename for folder in dict.fromkeys(name for name in (tb.name, tb.repo) if name)]


def local_copy_path(tb: Treebank, tb_file: TreebankFile) -> Path | None:
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


def where_to_put(tb: Treebank, tb_file: TreebankFile) -> str:
    """How to do without the network: where ``$PROBING_TREEBANKS`` was looked in (when set), or what to set it
    to."""
    places = _local_copy_places(tb, tb_file)
    if places:
        return f"put the file under {ENVIRONMENT} (looked for {' and '.join(str(path) for path in places)})"
    return f"set {ENVIRONMENT} to a folder holding {tb.name}/{tb_file.filename}"
