"""Where the pair sets are read from: one folder that holds them all, as ``blimp/``, ``clams/`` and ``rublimp/``
(``--minimal-pairs DIR``, else ``$PROBING_MINIMAL_PAIRS``), as ``PROBING_TREEBANKS`` holds the treebanks; without
one, each set's files come from the cache, filled from their public homes (probing.data.pair_sets.pinned).
BLiMP's own folder (``--blimp DIR``, ``$PROBING_BLIMP``) is read before it, as it always was.

>>> set_folder("shared/minimal-pairs", "clams", "--minimal-pairs")
(PosixPath('shared/minimal-pairs/clams'), '--minimal-pairs')
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT_VARIABLE = "PROBING_MINIMAL_PAIRS"
"""A folder holding the pair sets: ``blimp/UID.jsonl``, ``clams/LANG/PHENOMENON.txt``, ``rublimp/PID.csv``."""


def set_folder(root: str, subfolder: str, given_by: str) -> tuple[Path, str]:
    """A set's folder under a folder of pair sets, and how messages name where it came from."""
    return Path(root).expanduser() / subfolder, given_by


def root_source(root: str | None) -> tuple[str | None, str]:
    """The folder of pair sets a run reads (``--minimal-pairs``, else ``$PROBING_MINIMAL_PAIRS``), or None for the
    cache, and how messages name it.

    >>> root_source("here")
    ('here', '--minimal-pairs')
    """
    if root:
        return root, "--minimal-pairs"
    if os.environ.get(ROOT_VARIABLE):
        return os.environ[ROOT_VARIABLE], ROOT_VARIABLE
    return None, ""
