"""The pair sets by name: one registry (:data:`PAIR_SETS`) of the published sets (``blimp``, ``clams-de``,
``clams-fr``, ``clams-ru``, ``rublimp``) and of the pairs made from a treebank (``TREEBANK:agreement``, where
TREEBANK is anything ``--treebank`` takes: ``de_pud``, ``de_pud:odd``, ``fi_tdt:dev``, a CoNLL-U file).

Every set reads as a list of :class:`~probing.data.minimal_pairs.MinimalPair` (each paradigm's pairs together)
and the ``input`` block a result records: which set, the sha256 of what was read, and for pairs made from a
treebank what became of its subject arcs.

>>> pair_set("clams-de").title, pair_set("de_pud:odd:agreement").treebank
('CLAMS German', 'de_pud:odd')
>>> pair_set("clams-dee")
Traceback (most recent call last):
probing.errors.ProbingError: --pair-set: unknown pair set 'clams-dee' (did you mean clams-de?); use one of: blimp, \
clams-de, clams-fr, clams-ru, rublimp, TREEBANK:agreement (de_pud:agreement, fi_tdt:dev:agreement, FILE.conllu:agreement)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from probing.data.minimal_pairs import MinimalPair, choose_pairs, known_paradigms
from probing.data.pair_sets.folders import root_source, set_folder
from probing.data.pair_sets.pinned import PinnedFiles
from probing.errors import ProbingError
from probing.registry import Registry


@dataclass(frozen=True)
class Sources:
    """Where a run's pairs are read from: ``root`` a folder of pair sets (``--minimal-pairs``), ``blimp`` BLiMP's own
    folder (``--blimp``), ``lexicon`` the treebanks whose forms pairs made from a treebank may also take
    (``--lexicon``); None or empty: the environment's, else the cache."""

    root: str | None = None
    blimp: str | None = None
    lexicon: tuple[str, ...] = ()


@dataclass(frozen=True)
class PublishedSet:
    """A set its authors published as one file per paradigm: ``files`` (pinned), the local names of this set's
    files (``prefix`` + paradigm + ``suffix``) under ``subfolder`` of a folder of pair sets, and the ``reader`` of
    one file (path, the path as messages show it) -> its pairs."""

    name: str
    title: str
    language: str
    files: PinnedFiles
    subfolder: str
    prefix: str
    suffix: str
    reader: Callable[[Path, str], list[MinimalPair]]

    @property
    def paradigms(self) -> tuple[str, ...]:
        """The paradigms, one a file, in name order."""
        return tuple(sorted(name[len(self.prefix):-len(self.suffix)] for name in self.files.pins
                            if name.startswith(self.prefix) and name.endswith(self.suffix)))

    def folder(self, sources: Sources) -> tuple[Path | None, str]:
        """The folder this set is read from and how messages name it ((None, "") for the cache)."""
        root, given_by = root_source(sources.root)
        return set_folder(root, self.subfolder, given_by) if root else (None, "")

    def inputs(self, sources: Sources) -> list[Path]:
        """What a run reads, which no output may be inside."""
        from probing.data.datasets.cache import cache_dir

        folder, _ = self.folder(sources)
        return [folder if folder is not None else cache_dir() / self.files.cache]

    def read(self, sources: Sources, paradigms=None, phenomena=None, limit: int | None = None
             ) -> tuple[list[MinimalPair], dict]:
        """The pairs chosen (probing.data.minimal_pairs.choose_pairs), every file read checked by its sha256 and
        by its format first, and the ``input`` block."""
        names = self.paradigms
        chosen = known_paradigms(paradigms, names, kind=f"{self.title} paradigm",
                                 known=f"{len(names)} are known: {', '.join(names)}") if paradigms else names
        folder, given_by = self.folder(sources)
        pairs: list[MinimalPair] = []
        for paradigm in chosen:
            path = self.files.checked_file(f"{self.prefix}{paradigm}{self.suffix}", folder, given_by=given_by)
            pairs += self.reader(path, str(path))
        pairs = choose_pairs(pairs, paradigms, phenomena, limit, whose=f"{self.name}'s")
        kept = list(dict.fromkeys(pair.uid for pair in pairs))
        digest = self.files.digest([f"{self.prefix}{paradigm}{self.suffix}" for paradigm in kept])
        return pairs, {"path": f"{self.name}@{self.files.commit[:7]}", "sha256": digest, "kind": "minimal_pairs",
                       "commit": self.files.commit, "pair_set": self.name}


@dataclass(frozen=True)
class Blimp:
    """BLiMP (probing.data.minimal_pairs): its 67 paradigms, chosen by UID or by phenomenon as ``probing pairs``
    always chose them, from ``--blimp``, a folder of pair sets, ``$PROBING_BLIMP`` or the cache."""

    name: str = "blimp"
    title: str = "BLiMP"
    language: str = "en"

    def inputs(self, sources: Sources) -> list[Path]:
        from probing.data.minimal_pairs import blimp_folder

        return [blimp_folder(sources.blimp, sources.root)]

    def read(self, sources: Sources, paradigms=None, phenomena=None, limit: int | None = None
             ) -> tuple[list[MinimalPair], dict]:
        from probing.data.minimal_pairs import check_paradigms, paradigms_of, read_pairs

        chosen = paradigms_of(phenomena, sources.blimp, sources.root) if phenomena else check_paradigms(paradigms)
        return read_pairs(chosen, sources.blimp, limit, root=sources.root)


@dataclass(frozen=True)
class MadeFromTreebank:
    """Pairs that a rule makes from a treebank's trees (``TREEBANK:KIND``): ``kind`` names the rule, ``make`` it
    (the treebank as ``--treebank`` names it -> the set)."""

    kind: str
    title: str
    make: Callable[[str], object]


PAIR_SETS: Registry = Registry("pair set", option="--pair-set")
"""The pair sets by name; an entry named ``TREEBANK:KIND`` stands for pairs made from any treebank."""


def _register_published() -> None:
    from probing.data.pair_sets import clams, rublimp

    PAIR_SETS.register("blimp", Blimp())
    for language, title in (("de", "German"), ("fr", "French"), ("ru", "Russian")):
        PAIR_SETS.register(f"clams-{language}", PublishedSet(
            f"clams-{language}", f"CLAMS {title}", language, clams.FILES, "clams", f"{language}/", ".txt",
            clams.read_clams))
    PAIR_SETS.register("rublimp", PublishedSet("rublimp", "RuBLiMP", "ru", rublimp.FILES, "rublimp", "", ".csv",
                                               rublimp.read_rublimp))


def _register_made() -> None:
    from probing.data.pair_sets.from_treebank import AgreementSet

    PAIR_SETS.register("TREEBANK:agreement", MadeFromTreebank("agreement", "subject-verb agreement", AgreementSet))


_register_published()
_register_made()

EXAMPLES = "de_pud:agreement, fi_tdt:dev:agreement, FILE.conllu:agreement"


def pair_set(name: str, option: str = "--pair-set"):
    """The set ``name`` names: a published one, or pairs made from a treebank (``TREEBANK:KIND``); an unknown name
    is refused in one line (naming ``option``, what gave it), with the nearest known name and every known one."""
    from probing.data.relations import did_you_mean

    if name in PAIR_SETS and ":" not in name:
        return PAIR_SETS[name]
    for entry in (entry for _, entry in PAIR_SETS.items()):
        if isinstance(entry, MadeFromTreebank) and name.endswith(f":{entry.kind}") and len(name) > len(entry.kind) + 1:
            return entry.make(name[: -len(entry.kind) - 1])
    known = [known for known in PAIR_SETS.names() if ":" not in known]
    raise ProbingError(f"unknown pair set {name!r}{did_you_mean(name, known)}; use one of: "
                       f"{', '.join(PAIR_SETS.names())} ({EXAMPLES})", source=option)
