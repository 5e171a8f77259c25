"""What a ``pairs`` result holds beyond the common blocks: minimal pairs (a pair set: BLiMP, CLAMS, RuBLiMP, pairs
made from a treebank, one's own) scored by a causal LM.

Each paradigm's accuracy and interval with every pair's log-probabilities, and the summaries per field, per
phenomenon and overall. Its types say all there is to check. No torch.

>>> from probing.results.schema.specs import Shape
>>> PARADIGM.check({"field": "syntax"}, "pairs.paradigms.anaphor_gender_agreement", Shape())
Traceback (most recent call last):
probing.results.schema.specs.Invalid: pairs.paradigms.anaphor_gender_agreement.pairs: missing (pairs scored ...)
"""

from __future__ import annotations

from probing.results.schema.specs import BOOL, COUNT, INT, NUMBER, SHARE, STR, Field, ListOf, MapOf, Nullable, Obj

INTERVAL = Nullable(ListOf(SHARE, 2))

PARADIGM = Obj(
    {
        "field": Field(STR, "BLiMP's field (syntax, morphology, semantics, syntax_semantics, ...), RuBLiMP's level; "
                            "morphology for subject-verb agreement pairs (CLAMS, pairs made from a treebank)"),
        "phenomenon": Field(STR, "the paradigm's phenomenon (BLiMP's linguistics_term, RuBLiMP's phenomenon, a CLAMS "
                                 "file's name, subject-verb agreement); empty when its pairs name none (absent in "
                                 "results made before pair sets)", required=False),
        "pairs": Field(COUNT, "pairs scored (the first --limit of the file, in file order)"),
        "accuracy": Field(SHARE, "share of pairs with log p(good) > log p(bad); a tie is wrong"),
        "interval": Field(INTERVAL, "95% Wilson score interval of the share right (null only in results made "
                                    "before Wilson, with --bootstrap 0)"),
        "right": Field(ListOf(BOOL), "each pair, in file order: right or not"),
        "log_p_good": Field(ListOf(NUMBER), "each pair's log p(grammatical sentence), natural log"),
        "log_p_bad": Field(ListOf(NUMBER), "each pair's log p(ungrammatical sentence)"),
    }
)

SUMMARY = Obj(
    {
        "paradigms": Field(COUNT, "paradigms in it"),
        "pairs": Field(COUNT, "pairs in it"),
        "accuracy": Field(Nullable(SHARE), "a field's or a phenomenon's: share right over its pairs; overall: the "
                                           "mean of the paradigm accuracies (BLiMP's convention)"),
        "interval": Field(INTERVAL, "95% Wilson score interval: a field's or a phenomenon's of its pairs right; "
                                    "overall, of the mean "
                                    "at the effective number of pairs (docs/minimal-pairs.md)"),
    }
)

PAIRS = Obj(
    {
        "overall": Field(SUMMARY, "the mean of the paradigm accuracies"),
        "fields": Field(MapOf(SUMMARY, "field"), "per field"),
        "phenomena": Field(MapOf(SUMMARY, "phenomenon"), "per phenomenon (absent in results made before pair sets)",
                           required=False),
        "paradigms": Field(MapOf(PARADIGM, "UID"), "per paradigm"),
        "bootstrap": Field(Obj({"replicates": Field(COUNT, "replicates of the paired intervals between two "
                                                                   "runs on the same pairs; 0: none"), "seed": Field(INT, ""),
                                "level": Field(SHARE, "")}), "the intervals' level, and how a paired "
                                                                      "difference's are drawn"),
        "context_token": Field(Nullable(STR), "the one token every sentence was scored after (config.context: BOS, "
                                              "else EOS, by default), or null when it was scored after nothing"),
    }
)

PAYLOAD = {
    "pairs": Field(PAIRS, "minimal pairs (a pair set): accuracy per paradigm, per field, per phenomenon and "
                          "overall, each pair's log-probabilities"),
}

SECTIONS = ()
"""No block of its own in docs/results.md."""
