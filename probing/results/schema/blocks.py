"""The blocks every result has (``COMMON``: the provenance of its numbers), and the pieces several payloads share
(a chosen head, its report, a paired difference, the ``state`` of sums and counts).

>>> sorted(COMMON)[:3]
['analysis', 'config', 'created']
"""

from __future__ import annotations

from probing.results.schema import SCHEMA_VERSION
from probing.results.schema.specs import (
    ANY,
    BOOL,
    COUNT,
    DIRECTION,
    HEAD,
    LAYER,
    SECONDS,
    SHARE,
    SIGNED_SHARE,
    STR,
    Array,
    Field,
    Interval,
    ListOf,
    MapOf,
    Nullable,
    Obj,
    OneOf,
)

TOOL = Obj(
    {
        "name": Field(STR, "always 'probing'"),
        "version": Field(STR, "the package version that wrote the file"),
        "git_commit": Field(Nullable(STR), "commit of the source checkout, null for an installed package"),
    }
)

TOKENIZER = Obj(
    {
        "class": Field(STR, "the transformers tokenizer class"),
        "fast": Field(BOOL, "a Rust (fast) tokenizer"),
        "alignment": Field(STR, "how pieces were matched to words"),
        "prefix_space": Field(Nullable(STR), "how a byte-level BPE tokenizer gets a space before each word, or null"),
    }
)

HALF = Obj(
    {
        "half": Field(OneOf(("even", "odd")), "the sentences of an even or of an odd 0-based index"),
        "limit": Field(Nullable(COUNT), "the --limit the half was taken of, or null (the whole file)"),
        "rule": Field(STR, "the rule in words"),
    }
)

MODEL = Obj(
    {
        "name_or_path": Field(STR, "hub id or local folder, as given"),
        "name": Field(STR, "the name tables and plots use (folder name or hub id)", required=False),
        "revision": Field(Nullable(STR), "hub branch, tag or commit as asked"),
        "commit": Field(Nullable(STR), "hub commit resolved at load time, null for a local folder"),
        "fingerprint": Field(STR, "what identifies the model: sha256 of its weight, config and tokenizer files, "
                                  "the hub commit, or the random-init recipe; resume, merge and held-out selection "
                                  "compare it"),
        "architecture": Field(STR, "the transformers class of the checkpoint"),
        "num_layers": Field(COUNT, "layers of the scored self-attention stack"),
        "num_heads": Field(COUNT, "heads per layer of that stack (rollout results: 1, see config.attention)"),
        "dtype": Field(STR, "weights' dtype: float32, float16 or bfloat16"),
        "device": Field(STR, "where the model ran (several, comma-separated, in a merged result or for a model "
                             "spread by --device-map)"),
        "attention_path": Field(STR, "how attention was read: fused (the forward pass ran SDPA, each layer's weights "
                                     "rebuilt from its queries and keys), eager (each layer's weights taken from its "
                                     "attention module) or returned (every layer's, as the model returns them); "
                                     "several, comma-separated, in a merged result", required=False),
        "is_causal": Field(BOOL, "measured at load time: no head attends to a later token"),
        "random_init": Field(BOOL, "the architecture with seeded random weights (the untrained control)"),
        "stack": Field(STR, "the self-attention scored: encoder, or decoder", required=False),
        "tokenizer": Field(TOKENIZER, "tokenizer class, fast or not, alignment method, prefix-space rule",
                           required=False),
    }
)

MADE_FROM = Obj(
    {
        "treebank": Field(STR, "the treebank the pairs were made of, as named"),
        "sha256": Field(STR, "of its file's bytes"),
        "half": Field(HALF, "the half of a one-split treebank read", required=False),
        "lexicon": Field(ListOf(Obj({"path": Field(STR, "as named"), "sha256": Field(STR, "of its bytes")})),
                         "the treebanks whose forms the pairs could take besides the treebank's own (--lexicon)"),
        "lexicon_words": Field(COUNT, "words of the lexicon's sentences, the treebank's own included"),
        "arcs": Field(COUNT, "subject arcs (nsubj and its subtypes)"),
        "arcs_with_pair": Field(COUNT, "subject arcs that gave one pair or more"),
        "pairs": Field(COUNT, "pairs made (before --paradigms, --phenomena and --limit choose among them)"),
        "repeated": Field(COUNT, "pairs a second subject of the same verb made again (same id), kept once"),
        "no_pair": Field(MapOf(COUNT, "reason"), "subject arcs that gave no pair, each once, by the first check that "
                                                "stopped it: no_finite_agreeing_word, in_multiword_token, "
                                                "feature_not_shared, no_other_form, syncretism"),
        "features": Field(MapOf(MapOf(COUNT, "count"), "feature"), "per feature (Number, Person, Gender): the arcs "
                                                                   "that shared it, the pairs it gave (repeats "
                                                                   "included), and no_other_form, syncretism"),
    }
)

INPUT = Obj(
    {
        "path": Field(STR, "the file read (a named treebank is resolved to its file)"),
        "sha256": Field(STR, "of the file's bytes"),
        "kind": Field(STR, "treebank, text, or documents (treebank windows for coreference)"),
        "pairs": Field(BOOL, "consecutive sentences paired as segments A and B", required=False),
        "pinned": Field(BOOL, "minimal pairs: false for a pair file of one's own (--pairs-file), which no sha256 is "
                              "pinned for (sha256 is then the file's own); absent: BLiMP, checked by its pins",
                        required=False),
        "units_total": Field(COUNT, "units in the file (sentences, lines, pairs or windows)"),
        "units_used": Field(COUNT, "units that reached the model (after --limit, --shard and skips)"),
        "skipped": Field(MapOf(COUNT, "reason"), "units not used, by reason (too_long, ...)"),
        "half": Field(HALF, "the half of a one-split treebank read (even or odd), its --limit and the rule",
                      required=False),
        "tokenized_apart_words": Field(COUNT, "words of running text that shared a piece with a neighbour and "
                                              "were tokenized on their own (absent: none)", required=False),
        "pair_set": Field(STR, "minimal pairs: the pair set read (blimp, clams-de, rublimp, de_pud:agreement ...; "
                               "absent: BLiMP, or a pair file of one's own)", required=False),
        "made_from": Field(MADE_FROM, "minimal pairs made from a treebank (TREEBANK:agreement): the files read and "
                                      "what became of the treebank's subject arcs", required=False),
    }
)

ENVIRONMENT = Obj(
    {
        "python": Field(STR, "Python version"),
        "platform": Field(STR, "operating system and machine"),
        "packages": Field(MapOf(Nullable(STR), "package"), "versions of the packages that decide the numbers"),
    }
)

TIMING = Obj(
    {
        "seconds_total": Field(SECONDS, "wall-clock seconds of the run's passes: a held-out run's DEV and TEST "
                                        "passes together (summed over parts in a merge)"),
        "seconds_model": Field(SECONDS, "of which in the model's forward passes"),
        "seconds_waiting_for_input": Field(SECONDS, "of which the model waited for its next batch: reading, "
                                                    "tokenising and batching not hidden behind it (absent in older "
                                                    "files)", required=False),
        "seconds_selecting_on_dev": Field(SECONDS, "of which the DEV pass of a held-out run that scored DEV itself "
                                                   "(absent otherwise)", required=False),
    }
)

CONFIG = Obj(
    {
        "attention": Field(STR, "how attention was read: weights, norms or rollout", required=False),
        "batch_size": Field(COUNT, "units per batch (decides nothing but float rounding at near-ties)", required=False),
        "max_length": Field(Nullable(COUNT), "longest input in tokens; longer units were skipped", required=False),
        "limit": Field(Nullable(COUNT), "only the first N units of the input", required=False),
        "shard": Field(Nullable(Obj({"index": Field(COUNT, "from 0"), "count": Field(COUNT, "shards in all")})),
                       "this part of a split run, or null for a whole run", required=False),
        "options": Field(MapOf(ANY), "every option of the command that can change a number, by its name (relations, "
                                     "k, random, chosen, ...), and select_on: DEV's spec and the sha256 of its bytes; "
                                     "absent in results written before it was recorded", required=False),
        "training_step": Field(COUNT, "the training step of the scored weights (a checkpoint-STEP folder, or the "
                                      "step a training callback scored at; 0 for the random-init control)",
                               required=False),
    }
)

COMMON = {
    "schema_version": Field(STR, f"'{SCHEMA_VERSION}'; readers refuse newer versions"),
    "analysis": Field(STR, "which analysis made this file (probe, surface, heads, patterns, compare, ablation, "
                           "gradients, trees, coref, noop, pairs)"),
    "tool": Field(TOOL, "the program that wrote the file"),
    "model": Field(MODEL, "the checkpoint, identified by its fingerprint"),
    "input": Field(INPUT, "the text the model read, identified by its sha256"),
    "config": Field(CONFIG, "every option that decides the numbers"),
    "environment": Field(ENVIRONMENT, "Python, platform and package versions"),
    "timing": Field(TIMING, "how long it took"),
    "created": Field(STR, "ISO 8601 time the file was written"),
    "merged_from": Field(ListOf(Obj({"path": Field(STR, "a part's file")})), "the parts of a merged result", required=False),
}


BEST = Nullable(
    Obj(
        {
            "layer": Field(LAYER, "from 0"),
            "head": Field(HEAD, "from 0"),
            "direction": Field(DIRECTION, "dep_to_head or head_to_dep"),
            "accuracy": Field(SHARE, "correct / total"),
        }
    )
)
"""A relation's (probe) or a mention type's (coref) most accurate head, or null."""

CHOSEN_HEAD = {"layer": Field(LAYER, "from 0"), "head": Field(HEAD, "from 0"),
               "direction": Field(DIRECTION, "dep_to_head or head_to_dep")}
HEAD_REPORT = Nullable(Obj({**CHOSEN_HEAD, "accuracy": Field(SHARE, "correct / pairs here"),
                            "interval": Field(Interval(), "bootstrap interval, or null")}))
SHARE_REPORT = Obj({"accuracy": Field(SHARE, "correct / pairs here"),
                    "interval": Field(Interval(), "bootstrap interval, or null")})
DIFFERENCE = Obj({"value": Field(SIGNED_SHARE, "head minus baseline accuracy"),
                  "interval": Field(Interval(-1.0, 1.0), "paired bootstrap interval, or null"),
                  "p_not_better": Field(Nullable(SHARE), "share of replicates where the head is not better")})
SELECT_ON_MODEL = Obj({"fingerprint": Field(Nullable(STR), "the model chosen with")})
"""The blocks of a head chosen on one input and measured on another, as the probe's and coref's held-out
reports both write them."""


TOKEN_NAMES = Field(Obj({"first_special": Field(STR, "[CLS], <s>, or 'first special'"),
                         "separator": Field(STR, "[SEP], </s>, or 'separator'")}),
                    "how tables name the first special token and the separators (surface, heads, gradients)")

STATE = Field(MapOf(Array(), "name"), "the accumulator's sums and counts, from which every other number of the "
                                      "payload is derived; probing merge adds them up")
