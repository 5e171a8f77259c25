"""What a ``trees`` result holds beyond the common blocks, and the checks its types cannot express.

Every head as a tree on this treebank (UAS and UUAS counts per decoding and direction, with the branching
baselines); with ``--select-on``, what was chosen and trained on DEV (the selection) and its choices measured
here (the held-out block). No torch: validation runs without a model framework.

>>> entry = {"uas": 5, "uuas": 4}
>>> result = {"trees": {"words": 9, "layers": 0, "heads": 0, "decodings": {}, "baselines": {"right_branching": entry}}}
>>> counts_within_totals(result)
Traceback (most recent call last):
probing.results.schema.specs.Invalid: trees.baselines.right_branching: UAS count 5 exceeds the UUAS count 4
"""

from __future__ import annotations

from probing.results.schema.blocks import STATE
from probing.results.schema.specs import COUNT, INT, SHARE, STR, Array, Field, Invalid, ListOf, MapOf, Nullable, Obj, OneOf, Section

_HEAD = {"layer": Field(COUNT, "from 0"), "head": Field(COUNT, "from 0")}
_SENTENCES = Obj({"scored": Field(COUNT, "sentences with exactly one root word"),
                  "skipped": Field(MapOf(COUNT, "reason"), "sentences skipped: no_root, several_roots")})
_UAS_UUAS = Obj({"uas": Field(COUNT, "scored words whose predicted head is the gold head"),
                 "uuas": Field(COUNT, "scored words whose gold edge is a predicted edge in either direction")})
_GRIDS = Obj({"dep_to_head": Field(ListOf(ListOf(COUNT)), "[layer][head] from 0"),
              "head_to_dep": Field(ListOf(ListOf(COUNT)), "[layer][head] from 0")})
_TREE_BEST = Nullable(Obj({**_HEAD, "direction": Field(STR, "dep_to_head or head_to_dep"),
                           "correct": Field(COUNT, "its count"), "ties": Field(COUNT, "cells with that count"),
                           "accuracy": Field(SHARE, "correct / words")}))
_DECODING = Obj({
    "uas": Field(_GRIDS, "UAS counts of every head per direction"),
    "uuas": Field(_GRIDS, "UUAS counts of every head per direction"),
    "best_uas": Field(_TREE_BEST, "the best head by UAS here (in-sample; ties: lower layer, lower head, dep_to_head)"),
    "best_uuas": Field(_TREE_BEST, "the best head by UUAS here (in-sample)"),
})

_CAUSAL_TREE_BEST = Nullable(Obj({**_HEAD, "direction": Field(OneOf(("causal",)), "causal"),
                                  "correct": Field(COUNT, "its count"), "ties": Field(COUNT, "cells with that count"),
                                  "accuracy": Field(SHARE, "correct / words")}))
_CAUSAL_DECODING = Obj({
    "uas": Field(ListOf(ListOf(COUNT)), "UAS counts of every head, [layer][head] from 0"),
    "uuas": Field(ListOf(ListOf(COUNT)), "UUAS counts of every head"),
    "best_uas": Field(_CAUSAL_TREE_BEST, "the best head by UAS here (in-sample; ties: lower layer, lower head)"),
    "best_uuas": Field(_CAUSAL_TREE_BEST, "the best head by UUAS here (in-sample)"),
})
_CAUSAL_TREES = Obj({"max": Field(_CAUSAL_DECODING, "each word's head is its best-scoring word"),
                     "mst": Field(_CAUSAL_DECODING, "maximum spanning tree rooted at the gold root"),
                     "head_first": Field(COUNT, "scored words whose gold head precedes them: all dep_to_head can get "
                                                "right on a decoder (head_to_dep reaches the others)")})

TREES = Obj({
    "layers": Field(COUNT, "layers of the [layer][head] grids"),
    "heads": Field(COUNT, "heads per layer of the grids"),
    "sentences": Field(_SENTENCES, "sentences scored and skipped"),
    "words": Field(COUNT, "scored words: every word but the gold root and UPOS PUNCT"),
    "decodings": Field(Obj({"max": Field(_DECODING, "each word's head is its argmax (not a tree)"),
                            "mst": Field(_DECODING, "maximum spanning tree rooted at the gold root")}),
                       "per decoding: counts of every head and direction"),
    "baselines": Field(Obj({"right_branching": Field(_UAS_UUAS, "each word's head is the next word"),
                            "left_branching": Field(_UAS_UUAS, "each word's head is the previous word")}),
                       "positional trees on the same scored words"),
    "bootstrap": Field(Nullable(Obj({"replicates": Field(COUNT, "Poisson replicates over sentences"),
                                     "seed": Field(INT, "seed of the per-sentence weights"),
                                     "method": Field(STR, "'poisson'")})),
                       "replicate counts (in state) for intervals, or null (--bootstrap 0)"),
    "causal": Field(_CAUSAL_TREES, "decoders only: every head as a tree in the causal reading (an edge scored by "
                                   "its later word's attention to the earlier one, whichever is the head)",
                    required=False),
    "ensembles": Field(ListOf(Obj({"relation": Field(STR, "relation name"), "direction": Field(STR, "its direction"),
                                   "members": Field(ListOf(Obj(_HEAD)), "heads averaged"),
                                   "total": Field(COUNT, "pairs here"), "correct": Field(COUNT, "ensemble correct"),
                                   "single_correct": Field(COUNT, "its best single head's correct")})),
                       "held-out: each ensemble's relation counts here", required=False),
    "ensemble_trees": Field(Obj({"words": Field(COUNT, "scored words"), "uas": Field(COUNT, "directed"),
                                 "uuas": Field(COUNT, "undirected")}),
                            "held-out: trees decoded (mst) from all classic ensembles together", required=False),
    "causal_ensemble_trees": Field(Obj({"words": Field(COUNT, "scored words"), "uas": Field(COUNT, "directed"),
                                        "uuas": Field(COUNT, "undirected")}),
                                   "held-out, decoders only: trees decoded (mst) from the causal ensembles together, "
                                   "in the causal reading", required=False),
    "probes": Field(MapOf(Obj({"words": Field(COUNT, "scored words"), "argmax": Field(_UAS_UUAS, "per word"),
                               "mst": Field(_UAS_UUAS, "tree rooted at the gold root")}), "probe"),
                    "held-out: each trained probe's counts", required=False),
})

SELECTION = Obj({
    "made_on": Field(Obj({"path": Field(STR, "the selection treebank"), "sha256": Field(STR, "of its bytes"),
                          "sentences": Field(COUNT, "sentences scored"), "words": Field(COUNT, "scored words")}),
                     "the treebank the choices were made on"),
    "model": Field(Obj({"fingerprint": Field(STR, "the weights chosen with")}), "the model chosen with"),
    "reading": Field(Obj({"attention": Field(STR, "weights, ..."), "pool_from": Field(STR, "mean, first or max")}),
                     "how attention was read"),
    "options": Field(Obj({"relations": Field(ListOf(STR), "relations of the ensembles")}), "options of the choice"),
    "best_heads": Field(MapOf(MapOf(Nullable(Obj({**_HEAD, "direction": Field(STR, ""), "correct": Field(COUNT, ""),
                                                  "total": Field(COUNT, "")})), "metric"), "decoding"),
                        "per decoding and metric the best single head, with its counts on the selection treebank"),
    "causal_best_heads": Field(MapOf(MapOf(Nullable(Obj({**_HEAD, "direction": Field(OneOf(("causal",)), "causal"),
                                                         "correct": Field(COUNT, ""), "total": Field(COUNT, "")})),
                                         "metric"), "decoding"),
                               "decoders only: per decoding and metric the best head in the causal reading",
                               required=False),
    "ensembles": Field(ListOf(Obj({"relation": Field(STR, ""), "direction": Field(STR, ""),
                                   "members": Field(ListOf(Obj(_HEAD)), "from 0"),
                                   "correct": Field(COUNT, "on the selection treebank"),
                                   "single": Field(Obj(_HEAD), "the best single head it started from"),
                                   "single_correct": Field(COUNT, ""), "total": Field(COUNT, "pairs")})),
                       "per relation and direction the greedy ensemble"),
    "probes": Field(MapOf(Obj({"dim": Field(COUNT, "word vector size"),
                               "parameters": Field(MapOf(Array(dtype="float32"), "parameter"), "trained weights "
                                                   "(absent when written with --drop-probe-weights)", required=False),
                               "parameters_sha256": Field(STR, "sha256 of the dropped weights' canonical JSON (only "
                                                          "with --drop-probe-weights)", required=False),
                               "parameter_shapes": Field(MapOf(ListOf(INT), "parameter"), "the dropped weights' "
                                                         "shapes (only with --drop-probe-weights)", required=False),
                               "training": Field(Obj({"seed": Field(INT, "seed"), "epochs": Field(COUNT, "")}),
                                                 "the training record: optimiser, settings, loss per epoch")}), "probe"),
                    "trained attention probes (empty with --no-probes)"),
    "word_vectors": Field(Obj({"source": Field(STR, "input_embeddings or file")}), "the probes' word vectors"),
    "digest": Field(STR, "sha256 of the choices: parts with another digest never merge"),
})

_MEASURED = Nullable(Obj({"correct": Field(COUNT, "here"), "total": Field(COUNT, "here"),
                          "accuracy": Field(Nullable(SHARE), "correct / total"),
                          "interval": Field(Nullable(ListOf(SHARE, 2)), "95% bootstrap interval")}))

HELDOUT = Obj({
    "level": Field(SHARE, "coverage of the intervals"),
    "replicates": Field(COUNT, "bootstrap replicates (0: no intervals)"),
    "best_heads": Field(MapOf(MapOf(_MEASURED, "metric"), "decoding"), "the selection's best heads measured here"),
    "baselines": Field(MapOf(MapOf(_MEASURED, "metric"), "baseline"), "branching baselines measured here"),
    "causal_best_heads": Field(MapOf(MapOf(_MEASURED, "metric"), "decoding"),
                               "decoders only: the selection's best heads in the causal reading measured here",
                               required=False),
    "ensembles": Field(ListOf(Obj({"relation": Field(STR, ""), "accuracy": Field(Nullable(SHARE), "ensemble"),
                                   "single": Field(Obj({**_HEAD, "accuracy": Field(Nullable(SHARE), "here"),
                                                        "interval": Field(Nullable(ListOf(SHARE, 2)), "95%")}),
                                                   "its best single head (the one the search started from)")})),
                       "each ensemble's relation accuracy beside its best single head's", required=False),
    "ensemble_trees": Field(MapOf(_MEASURED, "metric"), "UAS and UUAS of the ensembles' trees", required=False),
    "causal_ensemble_trees": Field(MapOf(_MEASURED, "metric"), "decoders only: UAS and UUAS of the trees of the "
                                                               "causal ensembles", required=False),
    "probes": Field(MapOf(MapOf(MapOf(_MEASURED, "metric"), "decoding"), "probe"), "each probe's UAS and UUAS",
                    required=False),
})


PAYLOAD = {
    "trees": Field(TREES, "counts of every head as a tree on this treebank, and of the selection's ensembles and "
                          "probes (derived from state)"),
    "selection": Field(SELECTION, "what was chosen and trained on the selection treebank (DEV): a later "
                                  "--select-on reads it", required=False),
    "heldout": Field(HELDOUT, "the selection's choices measured on this treebank, with intervals", required=False),
    "state": STATE,
}

SECTIONS = (Section("trees", TREES), Section("selection", SELECTION), Section("heldout", HELDOUT))
"""The blocks docs/results.md shows in tables of their own."""


def counts_within_totals(result: dict) -> None:
    """Every count at most its total, UAS at most UUAS (a directed hit is an undirected one), grids of the
    declared shape, a held-out block only with a selection."""
    trees = result["trees"]
    words, layers, heads = trees["words"], trees["layers"], trees["heads"]

    def within(path: str, uas: int, uuas: int, total: int) -> None:
        if uuas > total:
            raise Invalid(path, f"{uuas} correct of {total} words")
        if uas > uuas:
            raise Invalid(path, f"UAS count {uas} exceeds the UUAS count {uuas}")

    for decoding, entry in trees["decodings"].items():
        for metric in ("uas", "uuas"):
            for direction, grid in entry[metric].items():
                if len(grid) != layers or any(len(row) != heads for row in grid):
                    raise Invalid(f"trees.decodings.{decoding}.{metric}.{direction}",
                                  f"is not a grid of {layers} layers x {heads} heads")
        for direction in entry["uas"]:
            for layer, (uas_row, uuas_row) in enumerate(zip(entry["uas"][direction], entry["uuas"][direction])):
                for head, (uas, uuas) in enumerate(zip(uas_row, uuas_row)):
                    within(f"trees.decodings.{decoding}.uas.{direction}[{layer}][{head}]", uas, uuas, words)
    causal = trees.get("causal")
    if causal is not None and not result["model"].get("is_causal"):
        raise Invalid("trees.causal", "present for a model that is not causal")
    if causal is not None and causal["head_first"] > words:
        raise Invalid("trees.causal.head_first", f"{causal['head_first']} of {words} words")
    for decoding, entry in ((key, value) for key, value in (causal or {}).items() if key != "head_first"):
        for metric in ("uas", "uuas"):
            if len(entry[metric]) != layers or any(len(row) != heads for row in entry[metric]):
                raise Invalid(f"trees.causal.{decoding}.{metric}", f"is not a grid of {layers} layers x {heads} heads")
        for layer, (uas_row, uuas_row) in enumerate(zip(entry["uas"], entry["uuas"])):
            for head, (uas, uuas) in enumerate(zip(uas_row, uuas_row)):
                within(f"trees.causal.{decoding}[{layer}][{head}]", uas, uuas, words)
    for name, entry in trees["baselines"].items():
        within(f"trees.baselines.{name}", entry["uas"], entry["uuas"], words)
    for index, entry in enumerate(trees.get("ensembles", [])):
        for key in ("correct", "single_correct"):
            if entry[key] > entry["total"]:
                raise Invalid(f"trees.ensembles[{index}].{key}", f"{entry[key]} correct of {entry['total']} pairs")
    for name in ("ensemble_trees", "causal_ensemble_trees"):
        if name in trees:
            within(f"trees.{name}", trees[name]["uas"], trees[name]["uuas"], trees[name]["words"])
    for name, entry in trees.get("probes", {}).items():
        for decoding in ("argmax", "mst"):
            within(f"trees.probes.{name}.{decoding}", entry[decoding]["uas"], entry[decoding]["uuas"], entry["words"])
    if "heldout" in result and not result.get("selection"):
        raise Invalid("heldout", "present without the selection it measures")
    if "causal_best_heads" in (result.get("heldout") or {}) and causal is None:
        raise Invalid("heldout.causal_best_heads", "present without the causal counts (trees.causal) it comes from")

