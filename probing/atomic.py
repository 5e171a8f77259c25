"""Safe output: a path holds either what the user had or the whole new file, never half, never an input.

Every file the tool writes (results, checkpoints, tables, figures, pages)
goes through :func:`atomic_path`: the content is written to a temporary file
in the same folder, flushed, and renamed over the target, keeping the mode of
the file it replaces. Before any model time, :func:`check_output_path`
refuses an output that would destroy something: a path that is an input of
the run (``--output t.conllu`` with ``--treebank t.conllu``) or a path inside a folder the run reads
(``--output MODEL/config.json`` with ``--model MODEL``), a device, FIFO
or other non-regular file (``--output /dev/null`` would replace the system's
``/dev/null``), a symlink (unless ``follow_symlinks``: then its target is
replaced and the link kept), a folder, a name ending in ``/``, a folder that
cannot be written, or a disk without room. Temporary files left by a killed
write of the same output are removed.

An output replaces an existing file only when that file is an earlier output
of the same kind (its :class:`Earlier`): a result file replaces a result of
the same analysis (``probing score --output data/sample.conllu`` is refused:
a result is JSON, a treebank is not), a figure a figure of its format, a table
or page the same command's table or page. A model's files, a treebank, a
BLiMP file, any file that is not the output's kind is refused, whatever the
command; an empty file holds nothing to lose and is replaced.

>>> import tempfile, pathlib
>>> target = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
>>> write_text_atomic("hello\\n", target).read_text()
'hello\\n'
>>> check_output_path(target, inputs=[target])
Traceback (most recent call last):
probing.errors.ProbingError: --output ...t.txt: is also an input of this run (...t.txt); writing it would destroy the input
>>> check_output_path(target, replaces=result_of("probe"))
Traceback (most recent call last):
probing.errors.ProbingError: --output ...t.txt: exists and is not a probe result; ...
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from probing.errors import ProbingError

MIN_FREE_BYTES = 16 << 20
"""An output folder with less free space than this is refused before the run starts."""

FIGURE_FORMATS = ("png", "svg", "pdf")

HEAD_BYTES = 1 << 16
"""How much of an existing file is read to tell whether an output may replace it."""

FULL_READ_BYTES = 64 << 20
"""A JSON file up to this size is parsed whole when its first bytes do not say what it is."""


# ---------------------------------------------------------------------------- what an output may replace


@dataclass(frozen=True)
class Earlier:
    """What an existing file at an output path must be for the output to replace it: an earlier output of
    the same kind. ``what`` names it in the refusal; ``recognise(head, path)`` answers from the file's first
    :data:`HEAD_BYTES` bytes (and may read the whole file when they do not settle it).

    >>> Earlier("a PNG figure", lambda head, path: head.startswith(b"\\x89PNG")).what
    'a PNG figure'
    """

    what: str
    recognise: Callable[[bytes, Path], bool]


_ANALYSIS_FIRST = re.compile(rb'\A\s*\{\s*(?:"schema_version"\s*:\s*"[^"\\]*"\s*,\s*)?"analysis"\s*:\s*"([^"\\]*)"')


def result_analysis(path: str | Path, head: bytes | None = None) -> str | None:
    """The ``analysis`` of a result file (a version-1 file, which has none, is a probe result); None when the file
    is not a JSON object of a result. Results are written with it among their first keys, so a large file is
    not parsed; another JSON file is parsed whole only up to :data:`FULL_READ_BYTES`.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = path.write_text('{"schema_version": "3", "analysis": "surface"}')
    >>> result_analysis(path), result_analysis(path.with_name("absent.json"))
    ('surface', None)
    """
    path = Path(path)
    try:
        if head is None:
            with open(path, "rb") as stream:
                head = stream.read(HEAD_BYTES)
        found = _ANALYSIS_FIRST.match(head)
        if found:
            return found.group(1).decode("utf-8", "replace")
        if not head.lstrip().startswith(b"{") or path.stat().st_size > FULL_READ_BYTES:
            return None
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):  # unreadable, not UTF-8, not JSON (a .jsonl of many objects too)
        return None
    if not isinstance(data, dict):
        return None
    analysis = data.get("analysis")
    if analysis is None and data.get("schema_version") == "1" and "relations" in data:
        return "probe"
    return analysis if isinstance(analysis, str) else None


def result_of(*analyses: str) -> Earlier:
    """A result file of one of ``analyses`` (none given: of any analysis), as every command writes its result.

    >>> result_of("probe").what, result_of().what
    ('a probe result', 'a result file')
    """
    what = f"a {' or '.join(analyses)} result" if analyses else "a result file"
    return Earlier(what, lambda head, path: (result_analysis(path, head) in analyses) if analyses
                   else result_analysis(path, head) is not None)


def json_with(*keys: str, what: str) -> Earlier:
    """A JSON object with every one of ``keys`` at its top (a leaderboard's or an atlas's JSON)."""

    def recognise(head: bytes, path: Path) -> bool:
        if not head.lstrip().startswith(b"{") or path.stat().st_size > FULL_READ_BYTES:
            return False
        try:
            data = json.loads(path.read_bytes())
        except (ValueError, RecursionError):
            return False
        return isinstance(data, dict) and all(key in data for key in keys)

    return Earlier(what, recognise)


def text_matching(pattern: str, what: str) -> Earlier:
    """A UTF-8 text file whose first bytes match ``pattern`` (a regular expression, from the start): how a
    table or page of one command begins.

    >>> text_matching(r"rank,model,", "a leaderboard CSV").recognise(b"rank,model,kind\\n", Path("x.csv"))
    True
    """
    compiled = re.compile(pattern)

    def recognise(head: bytes, path: Path) -> bool:
        text = head.decode("utf-8", "ignore")  # the head may end inside a character
        return "\0" not in text and compiled.match(text) is not None

    return Earlier(what, recognise)


_FIGURE_MAGIC = {
    "png": re.compile(rb"\A\x89PNG\r\n\x1a\n"),
    "pdf": re.compile(rb"\A%PDF-"),
    # an XML declaration, comments and a DOCTYPE may come before <svg (matplotlib writes all three)
    "svg": re.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*(?:<!DOCTYPE svg[^>]*>\s*)?"
                      rb"(?:<!--.*?-->\s*)*<svg", re.DOTALL),
}


def figure_of(path: str | Path) -> Earlier:
    """A figure in the format of ``path``'s suffix (png, svg, pdf), as every command draws its figures.

    >>> figure_of("a.png").recognise(b"\\x89PNG\\r\\n\\x1a\\n...", Path("a.png"))
    True
    """
    fmt = Path(path).suffix.lower().lstrip(".")
    magic = _FIGURE_MAGIC.get(fmt)
    return Earlier(f"a {fmt.upper() or 'figure'} figure", lambda head, path: magic is not None and bool(magic.match(head)))


def check_output_path(
    path: str | Path, *, option: str | None = "--output", inputs: Iterable[str | Path] = (),
    follow_symlinks: bool = False, replaces: Earlier | None = None,
) -> Path:
    """Refuse an output path that cannot or must not be written, before any work is done; return it
    (a followed symlink's target). ``replaces``: what an existing file there must be (an earlier output of the
    same kind); every output a user names passes one, only the tool's own files (its cache) pass None."""
    text = str(path)
    where = f"{option} {text}" if option else text
    if text.endswith(("/", os.sep)):
        raise ProbingError("ends with '/'; give a file name, not a folder", source=where)
    try:
        return _checked_output(Path(text).expanduser(), where, inputs, follow_symlinks, replaces)
    except OSError as error:  # a name the system refuses (ENAMETOOLONG, ELOOP) before any check could run
        raise ProbingError(f"cannot be used as a path: {error.strerror or error}", source=where) from None


def _checked_output(path: Path, where: str, inputs: Iterable[str | Path], follow_symlinks: bool,
                    replaces: Earlier | None) -> Path:
    if path.is_symlink():
        if not follow_symlinks:
            raise ProbingError("is a symbolic link; pass --follow-symlinks to replace the file it points to",
                               source=where)
        path = path.resolve()
    if path.exists():
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise ProbingError("is a folder; give a file name", source=where)
        if not stat.S_ISREG(mode):
            raise ProbingError("is not a regular file (a device, FIFO or socket); refusing to replace it",
                               source=where)
    for given in inputs:
        given = Path(given).expanduser()
        if not given.exists():
            continue
        if given.is_dir():  # a model folder: every file in it is read (config, weights, tokenizer)
            if path.resolve().is_relative_to(given.resolve()):
                raise ProbingError(f"is inside {given}, a folder this run reads; writing there could destroy "
                                   "its files", source=where)
        elif path.exists() and os.path.samefile(path, given):
            raise ProbingError(f"is also an input of this run ({given}); writing it would destroy the input",
                               source=where)
    if replaces is not None and path.is_file() and path.stat().st_size:
        with open(path, "rb") as stream:
            head = stream.read(HEAD_BYTES)
        if not replaces.recognise(head, path):
            raise ProbingError(f"exists and is not {replaces.what}; an output replaces only an earlier output of "
                               "its kind: give another name, or delete the file first", source=where)
    folder = _existing_ancestor(path.parent, where)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ProbingError(f"cannot write in {folder} (permission denied)", source=where)
    free = shutil.disk_usage(folder).free
    if free < MIN_FREE_BYTES:
        raise ProbingError(f"{folder} has only {free >> 20} MiB free; the output needs room", source=where)
    return path


def _existing_ancestor(folder: Path, where: str) -> Path:
    """The nearest folder that exists (the rest is created when writing); a file in the way is an error."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            if not candidate.is_dir():
                raise ProbingError(f"{candidate} is a file, so no folder can be made under it", source=where)
            return candidate
    return Path(".")


@contextmanager
def atomic_path(path: str | Path, *, suffix: str = ".tmp", follow_symlinks: bool = False,
                replaces: Earlier | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block succeeds it replaces ``path``.

    On any error the temporary file is removed and ``path`` is left untouched;
    a failure to write (full disk, read-only folder) is a one-line ProbingError. ``replaces`` is checked
    again here, at the write, so that no command that forgot it early can destroy a file.
    """
    path = check_output_path(path, option=None, follow_symlinks=follow_symlinks, replaces=replaces)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(path)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=suffix, dir=path.parent)
        os.close(handle)
    except OSError as error:
        raise ProbingError(f"cannot write: {error.strerror or error}", source=str(path)) from None
    try:
        yield Path(temporary)
        os.chmod(temporary, _mode_for(path))
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        reason = "the disk is full" if error.errno == errno.ENOSPC else (error.strerror or str(error))
        raise ProbingError(f"cannot write: {reason}; nothing was changed", source=str(path)) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _mode_for(path: Path) -> int:
    """The mode of the file being replaced, else what a plain open() would give (results are shared)."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _remove_stale_temporaries(path: Path) -> None:
    """Temporary files of earlier writes of ``path`` whose process is gone (a ``kill -9`` mid-write)."""
    for leftover in path.parent.glob(f".{path.name}.*.*"):
        parts = leftover.name[len(path.name) + 2 :].split(".", 1)
        if parts[0].isdigit() and not _alive(int(parts[0])):
            leftover.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_text_atomic(text: str, path: str | Path, *, follow_symlinks: bool = False,
                      replaces: Earlier | None = None) -> Path:
    """Write text (UTF-8, flushed to disk) atomically; returns the path written."""
    with atomic_path(path, follow_symlinks=follow_symlinks, replaces=replaces) as temporary:
        with open(temporary, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
    return Path(path)


def write_json_atomic(data, path: str | Path, *, follow_symlinks: bool = False, replaces: Earlier | None = None) -> Path:
    """Write JSON (one-space indent, trailing newline) atomically; returns the path written."""
    return write_text_atomic(json.dumps(data, indent=1) + "\n", path, follow_symlinks=follow_symlinks,
                             replaces=replaces)


def figure_format(path: str | Path, option: str = "--output") -> str:
    """png, svg or pdf, from a figure path's suffix."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FIGURE_FORMATS:
        raise ProbingError(f"a figure is written as {', '.join(FIGURE_FORMATS)}; {path} has no such suffix",
                           source=option)
    return suffix


def save_figure_atomic(figure, path: str | Path, *, dpi: int = 110) -> Path:
    """Save a matplotlib ``Figure`` atomically in the format its suffix names (png, svg, pdf).

    Every figure here is made by :func:`probing.report.drawing.new_figure`, which draws its texts as plain
    text (names and words from files reach titles and labels: a ``$`` in them is not mathtext), also when
    it is laid out before it is saved.
    """
    fmt = figure_format(path)
    with atomic_path(path, suffix=f".{fmt}", replaces=figure_of(path)) as temporary:
        figure.savefig(temporary, dpi=dpi, format=fmt, metadata=_reproducible(fmt))
    return Path(path)


def _reproducible(fmt: str) -> dict:
    """No creation dates or software versions in vector figures, so regenerated files only change with content."""
    if fmt == "svg":
        return {"Date": None, "Creator": None}
    if fmt == "pdf":
        return {"CreationDate": None, "Creator": None, "Producer": None}
    return {"Software": None}
