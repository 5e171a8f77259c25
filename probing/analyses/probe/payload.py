"""What a ``probe`` result holds beyond the common blocks, and the checks its types cannot express.

These are the fields the result-file specification fixes (docs/results.md): the treebank block, each
relation's correct counts per head, direction and offset, the bootstrap's replicate counts and, for a run
chosen on DEV, the held-out block. The blocks a held-out report shares with coref's live in
:mod:`probing.results.schema`. No torch: validation runs without a model framework.

>>> result = {"treebank": {"sentences_scored": 3, "sentences_total": 2}}
>>> counts_within_totals(result)
Traceback (most recent call last):
probing.results.schema.Invalid: treebank.sentences_scored: 3 is more than sentences_total (2)
"""

from __future__ import annotations

from probing.results.schema import (
    BEST,
    CHOSEN_HEAD,
    COUNT,
    DIFFERENCE,
    HALF,
    HEAD,
    HEAD_REPORT,
    INT,
    LAYER,
    LEVEL,
    SELECT_ON_MODEL,
    SHARE,
    SHARE_REPORT,
    STR,
    Array,
    Field,
    Grid,
    Invalid,
    ListOf,
    MapOf,
    Nullable,
    Obj,
    OneOf,
    Section,
    Shape,
    decoded,
    heads_per_layer,
    shown,
)

CAUSAL_BEST = Nullable(
    Obj(
        {
            "layer": Field(LAYER, "from 0"),
            "head": Field(HEAD, "from 0"),
            "direction": Field(OneOf(("causal",)), "causal"),
            "accuracy": Field(SHARE, "correct / total"),
        }
    )
)

CAUSAL = Obj(
    {
        "heads": Field(Grid(), "correct counts of every head in the causal direction, [layer][head] from 0: the "
                               "later word of a pair attends most, among earlier words, to the earlier one"),
        "best": Field(CAUSAL_BEST, "the most accurate head in the causal direction (ties: lower layer, lower head); "
                                   "direction 'causal'"),
        "head_first": Field(COUNT, "pairs whose head precedes the dependent (what dep_to_head can reach; "
                                   "head_to_dep reaches the others)"),
    },
    "the causal direction of a decoder",
)

RELATION = Obj(
    {
        "total": Field(COUNT, "(dependent, head) pairs scored"),
        "heads": Field(Obj({"dep_to_head": Field(Grid(), "correct counts"), "head_to_dep": Field(Grid(), "correct counts")}),
                       "correct predictions of every head, per direction, [layer][head] from 0"),
        "baselines": Field(MapOf(COUNT, "offset"), "correct predictions of each fixed offset (-3 .. +3)"),
        "best": Field(BEST, "the most accurate head (ties: lower layer, lower head, dep_to_head first)"),
        "best_baseline": Field(Nullable(Obj({"offset": Field(INT, "signed"), "accuracy": Field(SHARE, "")})),
                               "the most accurate offset (ties: the offset listed first)"),
        "reachable": Field(MapOf(COUNT, "direction"), "pairs each direction can get right at all (causal stacks see "
                                                      "one side)", required=False),
        "best_reachable": Field(BEST, "the best head by accuracy over reachable pairs", required=False),
        "causal": Field(CAUSAL, "decoders only: the causal direction (each pair scored by its later word)",
                        required=False),
    }
)

BOOTSTRAP = Nullable(
    Obj(
        {
            "replicates": Field(COUNT, "Poisson bootstrap replicates over sentences"),
            "seed": Field(INT, "seed of the per-sentence weights"),
            "method": Field(STR, "'poisson'"),
            "arrays": Field(MapOf(Array(), "array"), "replicate counts (boot_total [B, R], boot_heads [B, R, 2, L, H], "
                                                     "boot_baselines [B, R, O]; decoders also boot_causal "
                                                     "[B, R, L, H])"),
        }
    )
)

TREEBANK = Obj(
    {
        "path": Field(STR, "the treebank file"),
        "sha256": Field(STR, "of its bytes"),
        "sentences_total": Field(COUNT, "sentences in the file"),
        "sentences_scored": Field(COUNT, "sentences scored (after --limit, --shard, skips)"),
        "words_scored": Field(COUNT, "words of the scored sentences"),
        "skipped": Field(MapOf(COUNT, "reason"), "sentences not scored, by reason"),
        "unk_substituted_words": Field(COUNT, "words that gave no piece and were replaced by the unknown token"),
        "tokenized_apart_words": Field(COUNT, "words of running text that shared a piece with a "
                                              "neighbour and were tokenized on their own (absent: none)",
                                       required=False),
        "half": Field(HALF, "the half of a one-split treebank scored (even or odd), its --limit "
                            "and the rule", required=False),
    }
)

REPORT = Obj({
    "head": Field(HEAD_REPORT, "the chosen head's accuracy here, or null"),
    "baseline": Field(Nullable(Obj({"offset": Field(INT, "signed"), **SHARE_REPORT.fields})),
                      "the chosen offset's accuracy here, or null"),
    "difference": Field(Nullable(DIFFERENCE), "head minus baseline, or null"),
})

HELDOUT = Obj({
    "level": Field(LEVEL, "coverage of the intervals"),
    "replicates": Field(COUNT, "bootstrap replicates (0: no intervals)"),
    "seed": Field(Nullable(INT), "seed of the replicates"),
    "select_on": Field(Obj({"treebank": Field(Obj({"path": Field(STR, ""), "sha256": Field(STR, "")}),
                                              "the DEV treebank"),
                            "model": Field(SELECT_ON_MODEL, "the DEV run's model")}), "the DEV run chosen on"),
    "report_on": Field(Obj({"path": Field(STR, ""), "sha256": Field(STR, "")}), "this result's treebank"),
    "relations": Field(MapOf(Obj({
        "pairs": Field(COUNT, "pairs of the relation here"),
        "dev": Field(Obj({"pairs": Field(COUNT, "pairs on DEV"),
                          "head": Field(Nullable(Obj({**CHOSEN_HEAD, "accuracy": Field(SHARE, "on DEV"),
                                                      "ties": Field(COUNT, "heads tied on DEV")})), "or null"),
                          "baseline": Field(Nullable(Obj({"offset": Field(INT, "signed"),
                                                          "accuracy": Field(SHARE, "on DEV"),
                                                          "ties": Field(COUNT, "offsets tied")})), "or null")}),
                     "what DEV chose"),
        "heldout": Field(REPORT, "DEV's choice measured here"),
        "in_sample": Field(REPORT, "this treebank's own best, for comparison"),
    }), "relation"), "per relation: the DEV choice, its held-out and in-sample numbers"),
})

PAYLOAD = {
    "treebank": Field(TREEBANK, "the treebank block of the probe's contract (docs/results.md)"),
    "relations": Field(MapOf(RELATION, "relation"), "per relation: counts of every head and offset"),
    "bootstrap": Field(BOOTSTRAP, "replicate counts for intervals, or null (--bootstrap 0)"),
    "heldout": Field(HELDOUT, "choice on a selection treebank, reported here with intervals", required=False),
}

SECTIONS = (
    Section("relations.NAME", RELATION),
    Section("relations.NAME.causal", CAUSAL, note="decoders"),
    Section("heldout", HELDOUT),
)
"""The blocks docs/results.md shows in tables of their own."""


def counts_within_totals(result: dict) -> None:
    """Every count at most its total, the offsets the config names, causal counts only for a causal model, the
    replicate arrays of the bootstrap's shapes, and a held-out block of the result's relations and pair counts."""
    treebank = result["treebank"]
    if treebank["sentences_scored"] > treebank["sentences_total"]:
        raise Invalid("treebank.sentences_scored", f"{treebank['sentences_scored']} is more than sentences_total "
                                                   f"({treebank['sentences_total']})")
    ListOf(INT).check(result["config"].get("offsets", []), "config.offsets", Shape())  # read as numbers below
    offsets = [str(offset) for offset in result["config"].get("offsets", [])]
    for name, entry in result["relations"].items():
        total = entry["total"]
        for direction, grid in entry["heads"].items():
            for layer, row in enumerate(grid):
                for head, count in enumerate(row):
                    if count > total:
                        raise Invalid(f"relations.{name}.heads.{direction}[{layer}][{head}]",
                                      f"{count} correct of {total} pairs")
        for offset, count in entry["baselines"].items():
            if not _is_offset(offset):
                raise Invalid(f"relations.{name}.baselines.{offset}", "is not an offset (a signed integer)")
            if count > total:
                raise Invalid(f"relations.{name}.baselines.{offset}", f"{count} correct of {total} pairs")
        if offsets and sorted(entry["baselines"], key=int) != sorted(offsets, key=int):
            raise Invalid(f"relations.{name}.baselines", f"has offsets {list(entry['baselines'])}, config says {offsets}")
        for direction, count in (entry.get("reachable") or {}).items():
            if count > total:
                raise Invalid(f"relations.{name}.reachable.{direction}", f"{count} of {total} pairs")
        causal = entry.get("causal")
        if causal is not None:
            if not result["model"].get("is_causal"):
                raise Invalid(f"relations.{name}.causal", "present for a model that is not causal")
            if causal["head_first"] > total:
                raise Invalid(f"relations.{name}.causal.head_first", f"{causal['head_first']} of {total} pairs")
            for layer, row in enumerate(causal["heads"]):
                for head, count in enumerate(row):
                    if count > total:
                        raise Invalid(f"relations.{name}.causal.heads[{layer}][{head}]",
                                      f"{count} correct of {total} pairs")
    _bootstrap_shapes(result)
    heldout = result.get("heldout")
    if heldout:
        if list(heldout["relations"]) != list(result["relations"]):
            raise Invalid("heldout.relations", f"has relations {shown(list(heldout['relations']))}, the result "
                                               f"{shown(list(result['relations']))}")
        for name, entry in heldout["relations"].items():
            if entry["pairs"] != result["relations"][name]["total"]:
                raise Invalid(f"heldout.relations.{name}.pairs",
                              f"{entry['pairs']}, but relations.{name}.total is {result['relations'][name]['total']}")


def _is_offset(key: str) -> bool:
    """A baseline's key reads as a signed integer (``"-3"``), as the offsets of the config are compared by number."""
    try:
        int(key)
    except ValueError:
        return False
    return True


def _bootstrap_shapes(result: dict) -> None:
    boot = result.get("bootstrap")
    if not boot:
        return
    relations, model = len(result["relations"]), result["model"]
    expected = {
        "boot_total": [boot["replicates"], relations],
        "boot_heads": [boot["replicates"], relations, 2, model["num_layers"], heads_per_layer(result)],
        "boot_baselines": [boot["replicates"], relations, len(result["config"].get("offsets", [])) or None],
    }
    if "boot_causal" in boot["arrays"]:
        expected["boot_causal"] = expected["boot_heads"][:2] + expected["boot_heads"][3:]
    for name, shape in expected.items():
        if name not in boot["arrays"]:
            raise Invalid(f"bootstrap.arrays.{name}", "missing")
        found = boot["arrays"][name]["shape"]
        if len(found) != len(shape) or any(want is not None and want != got for want, got in zip(shape, found)):
            raise Invalid(f"bootstrap.arrays.{name}.shape", f"is {found}, expected {[s if s else 'O' for s in shape]}")
        if decoded(boot["arrays"][name], f"bootstrap.arrays.{name}").min(initial=0) < 0:
            raise Invalid(f"bootstrap.arrays.{name}", "holds a negative count")

