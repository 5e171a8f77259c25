"""The options of a minimal-pairs run: which pairs (a pair set by name, or one's own file), after what context, the
bootstrap; and the model's. The pair-set options (``--pair-set``, ``--minimal-pairs``, ``--lexicon``) are declared
here once, as fields, and shared by ``probing pairs``, ``probing ablate --metric minimal-pairs`` and ``probing data
pairs``, with what reads them (:func:`sources_of`, :func:`check_pairs_file_alone`, :func:`pair_set_inputs`).

>>> from probing.engine.arguments import spec_from
>>> spec_from(PairsOptions, OPTIONS.values({"model": "m", "paradigms": "anaphor_gender_agreement"})).paradigms
['anaphor_gender_agreement']
>>> chosen = spec_from(PairsOptions, OPTIONS.values({"model": "m", "pair_set": "de_pud:agreement",
...                                                  "lexicon": "de_gsd:dev"}))
>>> chosen.pair_set, sources_of(chosen)
('de_pud:agreement', Sources(root=None, blimp=None, lexicon=('de_gsd:dev',)))
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.engine.arguments import BadValue, option, options_of
from probing.engine.options import MAX_BATCH_SIZE, PassOptions
from probing.engine.specs import InputSpec, ModelSpec, bootstrap_option, dtype_help, output_options, run_options
from probing.errors import ProbingError

PAIR_SET_HELP = ("the pair set to score: blimp (the default), clams-de, clams-fr, clams-ru, rublimp, or "
                 "TREEBANK:agreement, subject-verb agreement pairs made from a treebank named as --treebank names it "
                 "(de_pud:agreement, de_pud:odd:agreement, fi_tdt:dev:agreement, FILE.conllu:agreement)")
PAIR_SET_OPTIONS = ("pair_set", "minimal_pairs", "lexicon")
"""The options that choose a pair set (and its sources); none of them means anything beside ``--pairs-file``."""


def pair_set_option(group: str | None = None):
    """``--pair-set NAME``: the field of every options dataclass that scores a pair set."""
    return option(metavar="NAME", group=group, help=PAIR_SET_HELP)


def minimal_pairs_option(group: str | None = None):
    """``--minimal-pairs DIR``: where the pair sets are read from."""
    return option(metavar="DIR", group=group,
                  help="a folder of pair sets, holding blimp/UID.jsonl, clams/LANG/PHENOMENON.txt and rublimp/PID.csv "
                       "(default: $PROBING_MINIMAL_PAIRS, else a cache filled from each set's public home); every "
                       "file is checked by its pinned sha256")


def lexicon_option(group: str | None = None):
    """``--lexicon TREEBANK ...``: more forms for pairs made from a treebank."""
    return option((), several=True, metavar="TREEBANK", group=group,
                  help="more treebanks (names or CoNLL-U files) whose forms pairs made from a treebank may take "
                       "(default: the treebank's own forms only)")


def sources_of(options):
    """Where the pairs of ``options`` (an options dataclass or a command line's namespace) are read from
    (probing.data.pair_sets.catalogue.Sources)."""
    from probing.data.pair_sets.catalogue import Sources

    return Sources(options.minimal_pairs, getattr(options, "blimp", None),
                   tuple(getattr(options, "lexicon", None) or ()))


def check_pairs_file_alone(options) -> None:
    """``--pairs-file`` is one's own pairs: a pair set or the folders and treebanks of one mean nothing beside it,
    and are refused by name rather than ignored."""
    if not getattr(options, "pairs_file", None):
        return
    for name in PAIR_SET_OPTIONS:
        if getattr(options, name, None):
            raise ProbingError("chooses a pair set; --pairs-file scores your own file instead: give one of them",
                               source="--" + name.replace("_", "-"))


def chosen_pair_set(name: str | None, paradigms=None, *, blimp: str | None = None, lexicon=(), option: str = "--pair-set"):
    """The pair set ``name`` names (BLiMP when None), its options checked before any file is read: a BLiMP paradigm
    name (``--paradigms``), ``--blimp`` for BLiMP only, ``--lexicon`` for pairs made from a treebank only.

    >>> chosen_pair_set("clams-de", blimp="folder")
    Traceback (most recent call last):
    probing.errors.ProbingError: --blimp: is BLiMP's folder; the pair set clams-de is read from --minimal-pairs DIR \
(a folder holding blimp/, clams/ and rublimp/) or $PROBING_MINIMAL_PAIRS
    """
    from probing.data.minimal_pairs import check_paradigms
    from probing.data.pair_sets.catalogue import pair_set

    chosen = pair_set(name or "blimp", option)
    if chosen.name == "blimp":
        check_paradigms(paradigms)
    elif blimp:
        raise ProbingError(f"is BLiMP's folder; the pair set {chosen.name} is read from --minimal-pairs DIR (a folder "
                           "holding blimp/, clams/ and rublimp/) or $PROBING_MINIMAL_PAIRS", source="--blimp")
    if lexicon and not hasattr(chosen, "treebank"):
        raise ProbingError(f"adds forms to pairs made from a treebank (TREEBANK:agreement); the pair set {chosen.name} "
                           "is read as published", source="--lexicon")
    return chosen


def pair_set_inputs(options) -> list:
    """What a run that reads the pair set of ``options`` reads besides the model: no output may go among them."""
    from probing.data.pair_sets.catalogue import pair_set

    if getattr(options, "pairs_file", None):
        return [options.pairs_file]
    return pair_set(options.pair_set or "blimp").inputs(sources_of(options))


def context_choice(text: str) -> str:
    """``--context``: bos, eos, none, or one token of the vocabulary (checked once the tokenizer is loaded).

    >>> context_choice("eos"), context_choice("<|endoftext|>")
    ('eos', '<|endoftext|>')
    """
    if not text or text != text.strip() or not text.isprintable():
        raise BadValue(f"must be bos, eos, none or one token such as <|endoftext|>, got {text!r}")
    return text


@dataclass(frozen=True)
class PairsOptions:
    """What decides a minimal-pairs run beyond its model, ``--limit`` (pairs per paradigm) and batching."""

    pair_set: str | None = pair_set_option()
    minimal_pairs: str | None = minimal_pairs_option()
    lexicon: tuple = lexicon_option()
    paradigms: list | None = option(several=True, metavar="UID", exclusive="paradigms",
                                    help="paradigms to score, of the pair set or the file (default: all; BLiMP's 67 "
                                         "UIDs, a CLAMS file's name, a RuBLiMP PID, the feature of pairs made from a "
                                         "treebank: number, person, gender)")
    phenomena: list | None = option(several=True, metavar="TERM", exclusive="paradigms",
                                    help="every paradigm of these phenomena (BLiMP's linguistics_term: "
                                         "subject_verb_agreement, island_effects ...; RuBLiMP's phenomenon; a CLAMS "
                                         "file's name)")
    blimp: str | None = option(metavar="DIR", exclusive="source", help="a folder of BLiMP's UID.jsonl files "
                                                                       "(default: $PROBING_BLIMP, else the download cache)")
    pairs_file: str | None = option(metavar="FILE.JSONL", exclusive="source",
                                    help="your own pairs instead of a pair set: JSON lines in BLiMP's format "
                                         "(sentence_good, sentence_bad; optional UID, field, linguistics_term, "
                                         "pairID), as probing data pairs writes them; not pinned: the result records "
                                         "the file's own sha256; --paradigms and --phenomena choose among the file's")
    context: str = option("bos", type=context_choice, metavar="TOKEN",
                          help="what every sentence is scored after: bos (the tokenizer's BOS token, else its EOS), "
                               "eos, none (the first token is then not scored), or one token of the vocabulary as "
                               "the tokenizer writes it (<|endoftext|>); an instruct model's BOS may be a chat-turn "
                               "marker, so the token is recorded and shown (default: bos)")
    bootstrap: int = bootstrap_option("bootstrap replicates for the paired interval of a difference between two runs "
                                      "on the same pairs (the board's contexts), pairs resampled with replacement "
                                      "within each paradigm; the accuracies' own intervals are Wilson's and need none")

    def __post_init__(self) -> None:  # a bad name or option before any file is looked at
        check_pairs_file_alone(self)
        if not self.pairs_file:
            chosen_pair_set(self.pair_set, self.paradigms, blimp=self.blimp, lexicon=self.lexicon)


OPTIONS = (
    options_of(ModelSpec, only=("model", "revision", "dtype", "device", "device_map"))
    .changed("model", required=True, help="a causal LM: hub id or local folder")
    .changed("dtype", help=dtype_help("log-probabilities are taken"))
    + options_of(PairsOptions, only=PAIR_SET_OPTIONS + ("paradigms", "phenomena"))
    + options_of(InputSpec, only=("limit",)).changed("limit", help="only the first N pairs of each paradigm")
    + options_of(PairsOptions, only=("blimp", "pairs_file"))
    + options_of(PassOptions, only=("batch_size",)).changed(
        "batch_size", group=None, metavar="B",
        help=f"sentences per forward pass, at most {MAX_BATCH_SIZE} (changes no score; default: 32)")
    + options_of(PairsOptions, only=("context",))
    + run_options().changed(
        "shard", group=None, help="only the pairs whose place in their paradigm is I modulo N; add the parts up with "
                                  "probing merge (the same result as one run)")
    + options_of(ModelSpec, only=("seed",)).changed("seed", help="seed of the bootstrap (default: 0)")
    + options_of(PairsOptions, only=("bootstrap",))
    + output_options(figures=False)
).named("probing pairs", spec=PairsOptions)
"""Every option of ``probing pairs`` (and of ``probing.run("pairs", ...)``)."""
