"""``TREEBANK:agreement``: the subject-verb agreement pairs of a treebank (probing.data.pair_sets.agreement), read as
a pair set: the treebank as ``--treebank`` names it (a name with its split or half, or a CoNLL-U file), its own
forms the lexicon, and those of the treebanks of ``--lexicon`` too.

>>> from probing.data.inputs import sample_treebank_path
>>> from probing.data.pair_sets.catalogue import Sources
>>> pairs, described = AgreementSet(str(sample_treebank_path())).read(Sources())
>>> made = described["made_from"]  # the sample's verbs carry no features: none is finite
>>> len(pairs), made["arcs"], made["no_pair"]["no_finite_agreeing_word"]
(0, 83, 83)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from probing.data.minimal_pairs import MinimalPair, choose_pairs


@dataclass(frozen=True)
class AgreementSet:
    """The agreement pairs of ``treebank`` (as ``--treebank`` names it)."""

    treebank: str

    @property
    def name(self) -> str:
        return f"{self.treebank}:agreement"

    @property
    def title(self) -> str:
        return f"{self.name} (subject-verb agreement pairs made from the treebank)"

    def source(self):
        """The treebank's sentences, as every command reads a treebank (its half, where named); a treebank that
        cannot be read is named by the set's name in the error."""
        from probing.data.inputs import InputSource

        return InputSource.treebank(self.treebank, option=self.name)

    def inputs(self, sources) -> list[Path]:
        """What a run reads, which no output may replace: the treebank and the lexicon's treebanks."""
        from probing.data.inputs import InputSource

        return [self.source().path] + [InputSource.treebank(spec, option="--lexicon").path for spec in sources.lexicon]

    def made(self, sources):
        """Every pair made (probing.data.pair_sets.agreement.AgreementPair), what became of the subject arcs
        (Counts), and the ``made_from`` block that records both with the files read."""
        from probing.data.inputs import InputSource
        from probing.data.pair_sets.agreement import Lexicon, make_pairs

        source = self.source()
        lexicon = Lexicon()
        for unit in source.units():  # a pass for the forms, then one for the pairs: no treebank held in memory
            lexicon.add(unit.sentence)
        others = []
        for spec in sources.lexicon:
            other = InputSource.treebank(spec, option="--lexicon")
            for unit in other.units():
                lexicon.add(unit.sentence)
            others.append({"path": other.recorded_path, "sha256": other.sha256})
        made, counts = make_pairs((unit.sentence for unit in source.units()), lexicon, source=str(source.path))
        block = {"treebank": source.recorded_path, "sha256": source.sha256, "lexicon": others,
                 "lexicon_words": lexicon.words, **counts.block()}
        if source.half is not None:
            block["half"] = source.half_rule()
        return made, counts, block

    def read(self, sources, paradigms=None, phenomena=None, limit: int | None = None
             ) -> tuple[list[MinimalPair], dict]:
        """The pairs chosen (probing.data.minimal_pairs.choose_pairs) and the ``input`` block: the set's name, one
        sha256 over the treebank's and the lexicon's, and ``made_from``."""
        made, _, block = self.made(sources)
        pairs = choose_pairs([pair.minimal_pair() for pair in made], paradigms, phenomena, limit,
                             whose=f"{self.name}'s")
        files = [f"{block['sha256']}  {block['treebank']}"] + [f"{entry['sha256']}  {entry['path']}"
                                                                for entry in block["lexicon"]]
        digest = hashlib.sha256("\n".join(files).encode()).hexdigest()
        return pairs, {"path": self.name, "sha256": digest, "kind": "minimal_pairs", "pair_set": self.name,
                       "made_from": block}


NO_PAIR_WORDS = {"no_finite_agreeing_word": "no finite agreeing word", "in_multiword_token": "v in a multiword token",
                 "feature_not_shared": "feature not shared", "no_other_form": "no other form attested",
                 "syncretism": "syncretism"}
"""Each reason for no pair (probing.data.pair_sets.agreement.REASONS) as tables and lines write it."""


def made_from_line(block: dict) -> str:
    """What became of a treebank's subject arcs, in one line (a ``made_from`` block).

    >>> print(made_from_line({"treebank": "de_pud", "arcs": 10, "arcs_with_pair": 6, "pairs": 7, "repeated": 0,
    ...     "no_pair": {"no_finite_agreeing_word": 1, "in_multiword_token": 0, "feature_not_shared": 0,
    ...                 "no_other_form": 2, "syncretism": 1}, "lexicon": []}))
    made from de_pud (its own forms the lexicon): 10 subject arcs, 6 gave 7 pairs; no pair from 4: \
no finite agreeing word 1, no other form attested 2, syncretism 1
    """
    lexicon = "its own forms" + "".join(f" and {entry['path']}'s" for entry in block["lexicon"])
    reasons = ", ".join(f"{NO_PAIR_WORDS[reason]} {count:,}" for reason, count in block["no_pair"].items() if count)
    repeated = (f"; {block['repeated']:,} repeated (a second subject of the same verb), kept once"
                if block.get("repeated") else "")
    return (f"made from {block['treebank']} ({lexicon} the lexicon): {block['arcs']:,} subject arcs, "
            f"{block['arcs_with_pair']:,} gave {block['pairs']:,} pairs{repeated}; no pair from "
            f"{block['arcs'] - block['arcs_with_pair']:,}" + (f": {reasons}" if reasons else ""))
