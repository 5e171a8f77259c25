"""The options of a minimal-pairs run: which pairs, after what context, the bootstrap; and the model's.

>>> from probing.engine.arguments import spec_from
>>> spec_from(PairsOptions, OPTIONS.values({"model": "m", "paradigms": "anaphor_gender_agreement"})).paradigms
['anaphor_gender_agreement']
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.engine.arguments import BadValue, option, options_of
from probing.engine.options import MAX_BATCH_SIZE, PassOptions
from probing.engine.specs import InputSpec, ModelSpec, bootstrap_option, dtype_help, output_options


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

    paradigms: list | None = option(several=True, metavar="UID", exclusive="paradigms",
                                    help="BLiMP paradigms to score (default: all 67)")
    phenomena: list | None = option(several=True, metavar="TERM", exclusive="paradigms",
                                    help="every paradigm of these BLiMP phenomena (its linguistics_term: "
                                         "subject_verb_agreement, determiner_noun_agreement, island_effects ...)")
    blimp: str | None = option(metavar="DIR", exclusive="source", help="a folder of BLiMP's UID.jsonl files "
                                                                       "(default: $PROBING_BLIMP, else the download cache)")
    pairs_file: str | None = option(metavar="FILE.JSONL", exclusive="source",
                                    help="your own pairs instead of BLiMP: JSON lines in BLiMP's format (sentence_good, "
                                         "sentence_bad; optional UID, field, linguistics_term, pairID), not pinned: "
                                         "the result records the file's own sha256; --paradigms and --phenomena choose "
                                         "among the file's")
    context: str = option("bos", type=context_choice, metavar="TOKEN",
                          help="what every sentence is scored after: bos (the tokenizer's BOS token, else its EOS), "
                               "eos, none (the first token is then not scored), or one token of the vocabulary as "
                               "the tokenizer writes it (<|endoftext|>); an instruct model's BOS may be a chat-turn "
                               "marker, so the token is recorded and shown (default: bos)")
    bootstrap: int = bootstrap_option("bootstrap replicates for the paired interval of a difference between two runs "
                                      "on the same pairs (the board's contexts), pairs resampled with replacement "
                                      "within each paradigm; the accuracies' own intervals are Wilson's and need none")


OPTIONS = (
    options_of(ModelSpec, only=("model", "revision", "dtype", "device", "device_map"))
    .changed("model", required=True, help="a causal LM: hub id or local folder")
    .changed("dtype", help=dtype_help("log-probabilities are taken"))
    + options_of(PairsOptions, only=("paradigms", "phenomena"))
    + options_of(InputSpec, only=("limit",)).changed("limit", help="only the first N pairs of each paradigm")
    + options_of(PairsOptions, only=("blimp", "pairs_file"))
    + options_of(PassOptions, only=("batch_size",)).changed(
        "batch_size", group=None, metavar="B",
        help=f"sentences per forward pass, at most {MAX_BATCH_SIZE} (changes no score; default: 32)")
    + options_of(PairsOptions, only=("context",))
    + options_of(PassOptions, only=("shard",)).changed(
        "shard", group=None, help="only the pairs whose place in their paradigm is I modulo N; add the parts up with "
                                  "probing merge (the same result as one run)")
    + options_of(ModelSpec, only=("seed",)).changed("seed", help="seed of the bootstrap (default: 0)")
    + options_of(PairsOptions, only=("bootstrap",))
    + output_options(figures=False)
).named("probing pairs", spec=PairsOptions)
"""Every option of ``probing pairs`` (and of ``probing.run("pairs", ...)``)."""
