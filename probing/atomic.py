"""Atomic file writes: a path holds either its old content or the whole new one.

Every file the tool writes (results, checkpoints, tables, figures) goes
through :func:`atomic_path`: the content is written to a temporary file in the
same folder and renamed over the target, so a crash, a full disk or Ctrl-C
never leaves a half-written file or destroys what the user had.

>>> import tempfile, pathlib
>>> target = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
>>> write_text_atomic("hello\\n", target).read_text()
'hello\\n'
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import ProbingError


@contextmanager
def atomic_path(path: str | Path, *, suffix: str = ".tmp") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block succeeds it replaces ``path``.

    On any error the temporary file is removed and ``path`` is left untouched.
    """
    path = Path(path)
    if path.is_dir():
        raise ProbingError("is a folder; give a file name", source=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(handle)
    try:
        yield Path(temporary)
        _readable_by_all(temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_text_atomic(text: str, path: str | Path) -> Path:
    """Write text (UTF-8, flushed to disk) atomically; returns ``path``."""
    with atomic_path(path) as temporary:
        with open(temporary, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
    return Path(path)


def write_json_atomic(data, path: str | Path) -> Path:
    """Write JSON (one-space indent, trailing newline) atomically; returns ``path``."""
    return write_text_atomic(json.dumps(data, indent=1) + "\n", path)


def save_figure_atomic(figure, path: str | Path, *, dpi: int = 110) -> Path:
    """Save a matplotlib figure as PNG atomically, then close it; returns ``path``."""
    import matplotlib.pyplot as plt

    try:
        with atomic_path(path, suffix=".png") as temporary:
            figure.savefig(temporary, dpi=dpi, format="png")
    finally:
        plt.close(figure)
    return Path(path)


def _readable_by_all(path: str | Path) -> None:
    """mkstemp makes 0600 files; give the mode a plain open() would (results are meant to be shared)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)
