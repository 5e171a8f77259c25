"""What a ``probe`` result holds beyond the common blocks, and the checks its types cannot express.

These are the fields the result-file specification fixes (docs/results.md): the treebank block, each
relation's correct counts per head, direction and offset and, for a run chosen on DEV, the held-out block;
then, as in every analysis's result, the ``state`` the numbers are derived from (the same counts as arrays,
and the bootstrap's replicate counts), which merges, resumes and intervals read. The blocks a held-out report
shares with coref's live in :mod:`probing.results.schema.blocks`. No torch: validation runs without a model framework.

>>> result = {"treebank": {"sentences_scored": 3, "sentences_total": 2}}
>>> counts_within_totals(result)
Traceback (most recent call last):
probing.results.schema.specs.Invalid: treebank.sentences_scored: 3 is more than sentences_total (2)
"""

from __future__ import annotations

import numpy as np

from probing.naming import DIRECTIONS
from probing.results.schema import specs
from probing.results.schema.arrays import encode_array
from probing.results.schema.blocks import BEST, CHOSEN_HEAD, DIFFERENCE, HALF, HEAD_REPORT, SELECT_ON_MODEL, SHARE_REPORT
from probing.results.schema.validation import heads_per_layer

CAUSAL_BEST = specs.Nullable(
    specs.Obj(
              {
            "layer": specs.Field(specs.LAYER, "from 0"),
            "head": specs.Field(specs.HEAD, "from 0"),
            "direction": specs.Field(specs.OneOf(("causal",)), "causal"),
            "accuracy": specs.Field(specs.SHARE, "correct / total"),
              }
    )
)

CAUSAL = specs.Obj(
    {
        "heads": specs.Field(specs.Grid(), "correct counts of every head in the causal direction, [layer][head] from 0: the "
                               "later word of a pair attends most, among earlier words, to the earlier one"),
        "best": specs.Field(CAUSAL_BEST, "the most accurate head in the causal direction (ties: lower layer, lower head); "
                                   "direction 'causal'"),
        "head_first": specs.Field(specs.COUNT, "pairs whose head precedes the dependent (what dep_to_head can reach; "
                                   "head_to_dep reaches the others)"),
    },
    "the causal direction of a decoder",
)

RELATION = specs.Obj(
    {
        "total": specs.Field(specs.COUNT, "(dependent, head) pairs scored"),
        "heads": specs.Field(specs.Obj({"dep_to_head": specs.Field(specs.Grid(), "correct counts"),
                                        "head_to_dep": specs.Field(specs.Grid(), "correct counts")}),
                             "correct predictions of every head, per direction, [layer][head] from 0"),
        "baselines": specs.Field(specs.MapOf(specs.COUNT, "offset"), "correct predictions of each fixed offset (-3 .. +3)"),
        "best": specs.Field(BEST, "the most accurate head (ties: lower layer, lower head, dep_to_head first)"),
        "best_baseline": specs.Field(specs.Nullable(specs.Obj({"offset": specs.Field(specs.INT, "signed"),
                                                               "accuracy": specs.Field(specs.SHARE, "")})),
                                     "the most accurate offset (ties: the offset listed first)"),
        "reachable": specs.Field(specs.MapOf(specs.COUNT, "direction"), "pairs each direction can get right at all (causal stacks see "
                                                      "one side)", required=False),
        "best_reachable": specs.Field(BEST, "the best head by accuracy over reachable pairs", required=False),
        "causal": specs.Field(CAUSAL, "decoders only: the causal direction (each pair scored by its later word)",
                              required=False),
    }
)

BOOTSTRAP = specs.Nullable(
    specs.Obj(
              {
            "replicates": specs.Field(specs.COUNT, "Poisson bootstrap replicates over sentences"),
            "seed": specs.Field(specs.INT, "seed of the per-sentence weights"),
            "method": specs.Field(specs.STR, "'poisson'"),
              }
    )
)

STATE_ARRAYS = specs.Obj({
    "total": specs.Field(specs.Array(), "[R] pairs per relation (R relations, in the order of relations)"),
    "heads": specs.Field(specs.Array(), "[R, 2, L, H] correct counts per direction (dep_to_head, head_to_dep), layer and head"),
    "baselines": specs.Field(specs.Array(), "[R, O] correct counts per offset, in the order of config.offsets"),
    "reachable": specs.Field(specs.Array(), "[R, 2] pairs each direction can reach"),
    "causal_heads": specs.Field(specs.Array(), "[R, L, H] correct counts in the causal direction", required=False),
    "head_first": specs.Field(specs.Array(), "[R] pairs whose head comes first", required=False),
    "boot_total": specs.Field(specs.Array(), "[B, R] replicate sums of total (B replicates)", required=False),
    "boot_heads": specs.Field(specs.Array(), "[B, R, 2, L, H] replicate sums of heads", required=False),
    "boot_baselines": specs.Field(specs.Array(), "[B, R, O] replicate sums of baselines", required=False),
    "boot_causal": specs.Field(specs.Array(), "[B, R, L, H] replicate sums of causal_heads", required=False),
    "sentences": specs.Field(specs.Array(), "[] sentences scored"),
    "words": specs.Field(specs.Array(), "[] words scored"),
}, "the probe's state")
"""The probe's state arrays: decoders add the causal ones, a bootstrap the replicate sums; what merges add up."""

STATE = specs.Field(specs.MapOf(specs.Array(), "name"), "the counts relations shows, as arrays, and the bootstrap's replicate sums "
                                      "(the arrays below); what merges add up and intervals are made from")

TREEBANK = specs.Obj(
    {
        "path": specs.Field(specs.STR, "the treebank file"),
        "sha256": specs.Field(specs.STR, "of its bytes"),
        "sentences_total": specs.Field(specs.COUNT, "sentences in the file"),
        "sentences_scored": specs.Field(specs.COUNT, "sentences scored (after --limit, --shard, skips)"),
        "words_scored": specs.Field(specs.COUNT, "words of the scored sentences"),
        "skipped": specs.Field(specs.MapOf(specs.COUNT, "reason"), "sentences not scored, by reason"),
        "unk_substituted_words": specs.Field(specs.COUNT, "words that gave no piece and were replaced by the unknown token"),
        "tokenized_apart_words": specs.Field(specs.COUNT, "words of running text that shared a piece with a "
                                              "neighbour and were tokenized on their own (absent: none)",
                                             required=False),
        "half": specs.Field(HALF, "the half of a one-split treebank scored (even or odd), its --limit "
                            "and the rule", required=False),
    }
)

REPORT = specs.Obj({
    "head": specs.Field(HEAD_REPORT, "the chosen head's accuracy here, or null"),
    "baseline": specs.Field(specs.Nullable(specs.Obj({"offset": specs.Field(specs.INT, "signed"), **SHARE_REPORT.fields})),
                            "the chosen offset's accuracy here, or null"),
    "difference": specs.Field(specs.Nullable(DIFFERENCE), "head minus baseline, or null"),
})

HELDOUT = specs.Obj({
    "level": specs.Field(specs.LEVEL, "coverage of the intervals"),
    "replicates": specs.Field(specs.COUNT, "bootstrap replicates (0: no intervals)"),
    "seed": specs.Field(specs.Nullable(specs.INT), "seed of the replicates"),
    "select_on": specs.Field(specs.Obj({"treebank": specs.Field(specs.Obj({"path": specs.Field(specs.STR, ""),
                                                                          "sha256": specs.Field(specs.STR, "")}),
                                                                "the DEV treebank"),
                                        "model": specs.Field(SELECT_ON_MODEL, "the DEV run's model")}), "the DEV run chosen on"),
    "report_on": specs.Field(specs.Obj({"path": specs.Field(specs.STR, ""), "sha256": specs.Field(specs.STR, "")}),
                             "this result's treebank"),
    "relations": specs.Field(specs.MapOf(specs.Obj({
        "pairs": specs.Field(specs.COUNT, "pairs of the relation here"),
        "dev": specs.Field(specs.Obj({
            "pairs": specs.Field(specs.COUNT, "pairs on DEV"),
            "head": specs.Field(specs.Nullable(specs.Obj({**CHOSEN_HEAD, "accuracy": specs.Field(specs.SHARE, "on DEV"),
                                                          "ties": specs.Field(specs.COUNT, "heads tied on DEV")})), "or null"),
            "baseline": specs.Field(specs.Nullable(specs.Obj({"offset": specs.Field(specs.INT, "signed"),
                                                              "accuracy": specs.Field(specs.SHARE, "on DEV"),
                                                              "ties": specs.Field(specs.COUNT, "offsets tied")})), "or null"),
        }), "what DEV chose"),
        "heldout": specs.Field(REPORT, "DEV's choice measured here"),
        "in_sample": specs.Field(REPORT, "this treebank's own best, for comparison"),
    }), "relation"), "per relation: the DEV choice, its held-out and in-sample numbers"),
})

PAYLOAD = {
    "treebank": specs.Field(TREEBANK, "the treebank block of the probe's contract (docs/results.md)"),
    "relations": specs.Field(specs.MapOf(RELATION, "relation"), "per relation: counts of every head and offset"),
    "bootstrap": specs.Field(BOOTSTRAP, "the bootstrap's settings (its replicate sums are in state), or null "
                                  "(--bootstrap 0)"),
    "heldout": specs.Field(HELDOUT, "choice on a selection treebank, reported here with intervals", required=False),
    "state": STATE,
}

SECTIONS = (
    specs.Section("relations.NAME", RELATION),
    specs.Section("relations.NAME.causal", CAUSAL, note="decoders"),
    specs.Section("heldout", HELDOUT),
    specs.Section("state", STATE_ARRAYS),
)
"""The blocks docs/results.md shows in tables of their own."""


def counts_within_totals(result: dict) -> None:
    """Every count at most its total, the offsets the config names, causal counts only for a causal model, the
    replicate arrays of the bootstrap's shapes, and a held-out block of the result's relations and pair counts."""
    treebank = result["treebank"]
    if treebank["sentences_scored"] > treebank["sentences_total"]:
        raise specs.Invalid("treebank.sentences_scored", f"{treebank['sentences_scored']} is more than sentences_total "
                                                   f"({treebank['sentences_total']})")
    specs.ListOf(specs.INT).check(result["config"].get("offsets", []), "config.offsets", specs.Shape())  # read as numbers below
    offsets = [str(offset) for offset in result["config"].get("offsets", [])]
    for name, entry in result["relations"].items():
        total = entry["total"]
        for direction, grid in entry["heads"].items():
            for layer, row in enumerate(grid):
                for head, count in enumerate(row):
                    if count > total:
                        raise specs.Invalid(f"relations.{name}.heads.{direction}[{layer}][{head}]",
                                            f"{count} correct of {total} pairs")
        for offset, count in entry["baselines"].items():
            if not _is_offset(offset):
                raise specs.Invalid(f"relations.{name}.baselines.{offset}", "is not an offset (a signed integer)")
            if count > total:
                raise specs.Invalid(f"relations.{name}.baselines.{offset}", f"{count} correct of {total} pairs")
        if offsets and sorted(entry["baselines"], key=int) != sorted(offsets, key=int):
            raise specs.Invalid(f"relations.{name}.baselines", f"has offsets {list(entry['baselines'])}, config says {offsets}")
        for direction, count in (entry.get("reachable") or {}).items():
            if count > total:
                raise specs.Invalid(f"relations.{name}.reachable.{direction}", f"{count} of {total} pairs")
        causal = entry.get("causal")
        if causal is not None:
            if not result["model"].get("is_causal"):
                raise specs.Invalid(f"relations.{name}.causal", "present for a model that is not causal")
            if causal["head_first"] > total:
                raise specs.Invalid(f"relations.{name}.causal.head_first", f"{causal['head_first']} of {total} pairs")
            for layer, row in enumerate(causal["heads"]):
                for head, count in enumerate(row):
                    if count > total:
                        raise specs.Invalid(f"relations.{name}.causal.heads[{layer}][{head}]",
                                            f"{count} correct of {total} pairs")
    _state_matches(result)
    heldout = result.get("heldout")
    if heldout:
        if list(heldout["relations"]) != list(result["relations"]):
            raise specs.Invalid("heldout.relations", f"has relations {specs.shown(list(heldout['relations']))}, the result "
                                               f"{specs.shown(list(result['relations']))}")
        for name, entry in heldout["relations"].items():
            if entry["pairs"] != result["relations"][name]["total"]:
                raise specs.Invalid(f"heldout.relations.{name}.pairs",
                                    f"{entry['pairs']}, but relations.{name}.total is {result['relations'][name]['total']}")
            for part in ("dev", "heldout", "in_sample"):  # an offset is read by its place in config.offsets
                baseline = entry[part]["baseline"]
                if offsets and baseline is not None and str(baseline["offset"]) not in offsets:
                    raise specs.Invalid(f"heldout.relations.{name}.{part}.baseline.offset",
                                        f"{baseline['offset']} is not among config.offsets ({', '.join(offsets)})")


def _is_offset(key: str) -> bool:
    """A baseline's key reads as a signed integer (``"-3"``), as the offsets of the config are compared by number."""
    try:
        int(key)
    except ValueError:
        return False
    return True


def _state_matches(result: dict) -> None:
    """The state holds the arrays of the result's shapes, its counts are the ``relations`` and ``treebank``
    numbers (what a merge adds up is what the file shows), and no replicate sum is negative."""
    relations, model, state = result["relations"], result["model"], result["state"]
    names = list(relations)
    causal = bool(relations) and all("causal" in entry for entry in relations.values())
    layers, heads = model["num_layers"], heads_per_layer(result)
    offsets = [str(offset) for offset in result["config"].get("offsets", [])]
    shapes = {"total": [len(names)], "heads": [len(names), 2, layers, heads], "baselines": [len(names), len(offsets)],
              "reachable": [len(names), 2], "sentences": [], "words": []}
    if causal:
        shapes.update({"causal_heads": [len(names), layers, heads], "head_first": [len(names)]})
    boot = result.get("bootstrap")
    if boot:
        shapes.update({"boot_" + name: [boot["replicates"], *shapes[name]] for name in ("total", "heads", "baselines")})
        if causal:
            shapes["boot_causal"] = [boot["replicates"], *shapes["causal_heads"]]
    for name, shape in shapes.items():
        if name not in state:
            raise specs.Invalid(f"state.{name}", "missing")
        if state[name]["shape"] != shape:
            raise specs.Invalid(f"state.{name}.shape", f"is {state[name]['shape']}, expected {shape}")
    extra = sorted(set(state) - set(shapes))
    if extra:
        raise specs.Invalid(f"state.{extra[0]}", "is not an array of this result (its bootstrap or model says otherwise)")
    shown_counts = _counts_shown(result, names, offsets, causal)
    for name, expected in shown_counts.items():
        if name not in state:
            continue  # an older file's relation without reachable counts: merging it says so
        if specs.decoded(state[name], f"state.{name}").tolist() != expected:
            raise specs.Invalid(f"state.{name}", "differs from the counts the result shows (relations, treebank)")
    for name in shapes:
        if name.startswith("boot_") and specs.decoded(state[name], f"state.{name}").min(initial=0) < 0:
            raise specs.Invalid(f"state.{name}", "holds a negative count")


def _counts_shown(result: dict, names: list[str], offsets: list[str], causal: bool) -> dict:
    """The counts ``relations`` and ``treebank`` show, as the state's nested lists."""
    relations = result["relations"]
    shown_counts = {
        "total": [relations[name]["total"] for name in names],
        "heads": [[relations[name]["heads"][direction] for direction in DIRECTIONS] for name in names],
        "baselines": [[relations[name]["baselines"].get(offset) for offset in offsets] for name in names],
        "sentences": result["treebank"]["sentences_scored"],
        "words": result["treebank"]["words_scored"],
    }
    if all("reachable" in relations[name] for name in names):
        shown_counts["reachable"] = [[relations[name]["reachable"].get(d) for d in DIRECTIONS] for name in names]
    if causal:
        shown_counts["causal_heads"] = [relations[name]["causal"]["heads"] for name in names]
        shown_counts["head_first"] = [relations[name]["causal"]["head_first"] for name in names]
    return shown_counts


def upgrade(result: dict, version: str) -> dict:
    """A probe result of schema version 1 or 2 read as version 3: its counts, and the replicate sums it kept in
    ``bootstrap.arrays``, move into ``state``, as every analysis keeps them. The counts come from
    ``relations`` and ``treebank``; what is malformed there is left out, for validation to name where the file
    has it. A version-3 result is returned as it is.

    >>> old = {"relations": {"det": {"total": 2, "heads": {"dep_to_head": [[1]], "head_to_dep": [[0]]},
    ...        "baselines": {"-1": 2}, "reachable": {"dep_to_head": 2, "head_to_dep": 2}}},
    ...        "treebank": {"sentences_scored": 1, "words_scored": 3}, "config": {"offsets": [-1]},
    ...        "bootstrap": None}
    >>> from probing.results.schema.arrays import decode_array
    >>> decode_array(upgrade(old, "2")["state"]["heads"]).tolist()
    [[[[1]], [[0]]]]
    """
    if version not in ("1", "2") or "state" in result:
        return result
    relations = result.get("relations")
    offsets = [str(offset) for offset in (result.get("config") or {}).get("offsets", [])]
    boot = result.get("bootstrap")
    upgraded = dict(result)
    state = {}
    if isinstance(relations, dict):
        names = list(relations)
        causal = bool(relations) and all(isinstance(entry, dict) and "causal" in entry for entry in relations.values())
        try:
            counts = _counts_shown(result, names, offsets, causal)
        except (KeyError, TypeError, AttributeError):
            counts = {}
        for name, value in counts.items():
            try:
                state[name] = encode_array(np.asarray(value, dtype=np.int64))
            except (TypeError, ValueError, OverflowError):
                pass  # ragged or not numbers: validation names the field in relations or treebank
    if isinstance(boot, dict):
        arrays = boot.get("arrays")
        if isinstance(arrays, dict):
            state.update(arrays)
        upgraded["bootstrap"] = {key: value for key, value in boot.items() if key not in ("arrays", "encoding")}
    upgraded["state"] = state
    return upgraded


