"""A pair set's files as their authors published them at one commit: read from a folder when one is given, else from
the cache, which a download from the public home fills; every file checked by the sha256 pinned for it, wherever
it comes from (the treebanks' machinery, probing.data.datasets: a damaged cached file is fetched again, a bad
download never reaches the cache).

>>> pins = read_pins(Path(__file__).with_name("clams.sha256"))
>>> len(pins), sorted(pins)[0]
(21, 'de/long_vp_coord.txt')
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from probing.errors import ProbingError

BASE_URL = "https://raw.githubusercontent.com"
"""Where public GitHub repositories serve their files at a commit."""

BASE_VARIABLE = "PROBING_MINIMAL_PAIRS_BASE_URL"
"""Replaces :data:`BASE_URL` for every pair set (a mirror, or a local server in tests)."""


def read_pins(path: Path) -> dict[str, str]:
    """A ``sha256sum`` listing (``DIGEST  NAME`` lines) as {name: digest}."""
    pins = {}
    for line in filter(None, path.read_text(encoding="utf-8").split("\n")):
        digest, name = line.split()
        pins[name] = digest
    return pins


@dataclass(frozen=True)
class PinnedFiles:
    """Where a pair set's files live: ``repository`` (owner/name on GitHub) at ``commit``; ``pins`` maps each
    file's name in a local folder (``de/simple_agrmt.txt``) to its sha256, ``remote`` that name to its path in
    the repository (``de_evalset/simple_agrmt.txt``). ``title`` names the set in messages, ``cache`` its folder
    in the cache, ``offline`` says how to do without the network, ``variables`` the environment variables that
    replace the host (the first one set wins)."""

    title: str
    cache: str
    repository: str
    commit: str
    pins: Mapping[str, str]
    remote: Callable[[str], str]
    layout: str
    offline: str
    variables: tuple[str, ...] = (BASE_VARIABLE,)

    def checked_file(self, name: str, folder: Path | None, *, given_by: str) -> Path:
        """The file ``name``, checked by its sha256: under ``folder`` (named in messages as ``given_by``), or when
        ``folder`` is None from the cache, downloaded there first when absent."""
        if folder is not None:
            return self._local(name, folder, given_by)
        from probing.data.datasets.cache import cached_copy, download_file
        from probing.data.datasets.pinned import Treebank, TreebankFile

        # The treebanks' cache: <cache>/CACHE/REMOTE, downloaded from BASE/REPOSITORY/COMMIT/REMOTE.
        home = Treebank(self.cache, self.repository, self.commit,
                        (TreebankFile(name, self.remote(name), self.pins[name], self.offline),))
        cached = cached_copy(home, home.files[0])
        if cached is not None:
            return cached
        base = next((os.environ[variable] for variable in self.variables if os.environ.get(variable)), BASE_URL)
        previous = os.environ.get("PROBING_UD_BASE_URL")
        os.environ["PROBING_UD_BASE_URL"] = base  # the one host variable the treebanks' download reads
        try:
            return download_file(home, home.files[0])
        finally:
            if previous is None:
                os.environ.pop("PROBING_UD_BASE_URL", None)
            else:
                os.environ["PROBING_UD_BASE_URL"] = previous

    def _local(self, name: str, folder: Path, given_by: str) -> Path:
        from probing.data.datasets.cache import sha256_of

        path = folder / name
        if not path.is_file():
            raise ProbingError(f"has no {name} ({self.layout})",
                               source=f"{given_by} {folder}")
        actual = sha256_of(path)
        if actual != self.pins[name]:
            raise ProbingError(f"sha256 mismatch for {name}: expected {self.pins[name]}, got {actual} (is not the "
                               f"pinned file of {self.title} commit {self.commit[:7]})", source=str(path))
        return path

    def digest(self, names) -> str:
        """One sha256 over the pinned sha256s of ``names``: what a result records of the files it read.

        >>> files = PinnedFiles("x", "x", "o/x", "0" * 40, {"a": "1" * 64}, str, "a folder", "")
        >>> files.digest(["a"])[:12]
        '9f1270bc14c1'
        """
        import hashlib

        return hashlib.sha256("\n".join(f"{self.pins[name]}  {name}" for name in names).encode()).hexdigest()
