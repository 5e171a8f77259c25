"""A treebank's name to its file: a local copy, else the cache, else a download (the package's overview,
probing.data.datasets, says where each is looked for); and where each split would come from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from probing.data import catalogue
from probing.data.datasets.cache import cache_dir, cached_copy, download_file, mismatch, sha256_of
from probing.data.datasets.local import local_copy_path, local_treebank, local_treebanks, where_to_put
from probing.data.datasets.names import HALVES, WHOLE, is_treebank_name, parse_name
from probing.data.datasets.pinned import BY_REPOSITORY, KNOWN_TREEBANKS, Treebank, TreebankFile
from probing.data.treebank import check_input_file
from probing.errors import ProbingError


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
    treebank = lookup(parsed[0])
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
                                                      f"ko_pud; pinned: {pinned_names()})")
    tb = lookup(parsed[0], download=download)
    return _resolve(tb, _pick_split(tb, parsed[1]), download=download)


def fetch(name: str, splits: list[str] | tuple[str, ...] | None = None) -> list[Path]:
    """Make ``name``'s splits (all by default) available locally; return their paths.

    A split already in ``PROBING_TREEBANKS`` or the cache is not downloaded again.
    """
    if parse_name(name) is None or parse_name(name)[1] is not None:
        raise ProbingError(f"not a treebank name: {name!r}; name one such as en_ewt, ko_pud or UD_German-GSD")
    tb = lookup(name)
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
            copy, cached = local_copy_path(tb, tb_file), cache_dir() / tb.name / tb_file.filename
            if copy is not None:
                found.append(Whereabouts(name, tb_file.split, "PROBING_TREEBANKS", str(copy)))
            elif cached.is_file():
                found.append(Whereabouts(name, tb_file.split, "cache", str(cached)))
            else:
                found.append(Whereabouts(name, tb_file.split, "download", tb.url(tb_file)))
    for tb in local_treebanks():
        for tb_file in tb.files:
            found.append(Whereabouts(tb.name, tb_file.split, "PROBING_TREEBANKS", str(local_copy_path(tb, tb_file))))
    return found


def pinned_names() -> str:
    return ", ".join(sorted(KNOWN_TREEBANKS))


def _known_or_local() -> list[str]:
    """Every treebank name this machine can resolve without asking the UD organisation: the pinned ones, their
    repositories, and those under ``$PROBING_TREEBANKS`` (the candidates of a "did you mean")."""
    return sorted({*KNOWN_TREEBANKS, *BY_REPOSITORY, *(tb.name for tb in local_treebanks())})


def lookup(name: str, *, download: bool = True) -> Treebank:
    """The treebank a code or repository name means: pinned, else a local copy, else the UD catalogue."""
    if name in KNOWN_TREEBANKS:
        return KNOWN_TREEBANKS[name]
    if name in BY_REPOSITORY:
        return BY_REPOSITORY[name]
    local = local_treebank(name)
    if local is not None:
        return local
    entry = catalogue.lookup(name, cache_dir(), offline=not download, pinned=pinned_names(), known=_known_or_local())
    files = tuple(TreebankFile(split, filename, None) for split, filename in sorted(entry["files"].items()))
    return Treebank(entry["code"], entry["repo"], entry["commit"], files)


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
    cached = cached_copy(tb, tb_file)
    if cached is not None:
        return cached
    if not download or tb.commit is None:
        raise ProbingError(
            f"{tb.name}:{split} is not in the cache ({cache_dir()}); run `probing data fetch "
            f"{tb.name}` or {where_to_put(tb, tb_file)}"
        )
    return download_file(tb, tb_file)


def _local_copy(tb: Treebank, tb_file: TreebankFile) -> Path | None:
    path = local_copy_path(tb, tb_file)
    if path is None:
        return None
    # A local copy with a known checksum must be the pinned file: a silently
    # different treebank would make scores incomparable.
    if tb_file.sha256 is not None:
        actual = sha256_of(path)
        if actual != tb_file.sha256:
            raise ProbingError(mismatch(tb_file, actual, "is not the pinned file"), source=str(path))
    return path
