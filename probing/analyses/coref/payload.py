"""What a ``coref`` result holds beyond the common blocks, and the checks its types cannot express.

Antecedent counts of every head per direction and mention type beside the three baselines', the head chosen
in-sample and, with ``--select-on``, the head chosen on DEV reported here by type. The blocks a held-out report
shares with the probe's live in :mod:`probing.results.schema.blocks`. No torch.

>>> counts = {"all": 2, "pronoun": 1, "proper": 0, "nominal": 0}
>>> counts_within_totals({"coref": {block: counts for block in ("mentions", "scored", "heads", "baselines", "sieves")}})
Traceback (most recent call last):
probing.results.schema.specs.Invalid: coref.mentions: the types add up to 1, not all (2)
"""

from __future__ import annotations

from probing.analyses.coref.report import TYPE_AXIS
from probing.results.schema.blocks import BEST, CHOSEN_HEAD, DIFFERENCE, HEAD_REPORT, SELECT_ON_MODEL, SHARE_REPORT, STATE
from probing.results.schema.specs import COUNT, INT, LEVEL, SHARE, STR, Field, Grid, Invalid, ListOf, MapOf, Nullable, Obj, Section, decoded
from probing.results.schema.validation import heads_per_layer

CHOICE = Nullable(Obj({**CHOSEN_HEAD, "accuracy": Field(SHARE, "on the mentions chosen on"),
                       "mentions": Field(COUNT, "scored mentions chosen on"),
                       "ties": Field(COUNT, "heads tied")}))

TYPE_REPORT = Obj({
    "mentions": Field(COUNT, "scored mentions of the type"),
    "head": Field(HEAD_REPORT, "the chosen head's accuracy, or null"),
    "baselines": Field(MapOf(Nullable(SHARE_REPORT), "baseline"), "each baseline's accuracy, or null"),
    "difference": Field(MapOf(DIFFERENCE, "baseline"), "head minus each baseline"),
})

REPORT = {
    "level": Field(LEVEL, "coverage of the intervals"),
    "types": Field(MapOf(TYPE_REPORT, "type"), "per mention type"),
}

HELDOUT = Obj({
    **REPORT,
    "replicates": Field(COUNT, "bootstrap replicates (0: no intervals)"),
    "select_on": Field(Obj({"input": Field(Obj({"path": Field(STR, ""), "sha256": Field(STR, "")}), "DEV"),
                            "model": Field(SELECT_ON_MODEL, "the DEV run's model")}), "the DEV run chosen on"),
    "dev": Field(CHOICE, "the head chosen on DEV's all-mentions accuracy, or null"),
})

COREF = Obj(
    {
        "window": Field(COUNT, "window length in tokens, special tokens included"),
        "types": Field(ListOf(STR), "the mention types: all, pronoun, proper, nominal"),
        "baseline_names": Field(ListOf(STR), "the baselines: nearest, head_match, rule_based"),
        "sieve_names": Field(ListOf(STR), "the rule-based baseline's sieves, earliest first"),
        "windows": Field(COUNT, "windows scored (each a run of whole sentences of one document)"),
        "words": Field(COUNT, "words in the scored windows"),
        "mentions": Field(MapOf(COUNT, "type"), "mentions whose head word lies in a scored window"),
        "scored": Field(MapOf(COUNT, "type"), "mentions with an antecedent (an earlier mention of their entity) in "
                                              "their window"),
        "heads": Field(MapOf(Obj({"dep_to_head": Field(Grid(), "correct counts"),
                                  "head_to_dep": Field(Grid(), "correct counts")}), "type"),
                       "per type, scored mentions whose predicted word is an antecedent's head word, [layer][head]"),
        "baselines": Field(MapOf(MapOf(COUNT, "baseline"), "type"), "per type, correct counts of each baseline"),
        "sieves": Field(MapOf(MapOf(COUNT, "sieve"), "type"), "per type, how often each sieve decided the rule-based "
                                                              "choice"),
        "best": Field(MapOf(BEST, "type"), "each type's own most accurate head, in-sample"),
        "in_sample": Field(Obj({**REPORT, "choice": Field(CHOICE, "the head chosen, or null")}),
                           "the head chosen on these counts' all-mentions accuracy, reported by type"),
        "bootstrap": Field(Nullable(Obj({"replicates": Field(COUNT, "Poisson replicates over windows"),
                                         "seed": Field(INT, "seed of the per-window weights")})),
                           "replicate counts are in state (boot_scored, boot_heads, boot_baselines), or null"),
    }
)

PAYLOAD = {
    "coref": Field(COREF, "antecedent counts per head, direction and mention type, and the baselines'"),
    "state": STATE,
    "heldout": Field(HELDOUT, "head chosen on a DEV treebank by all-mentions accuracy, reported here by type with "
                              "intervals", required=False),
}

SECTIONS = (Section("heldout", HELDOUT),)
"""The blocks docs/results.md shows in tables of their own."""


def counts_within_totals(result: dict) -> None:
    """Every type's counts present and adding up to ``all``, each count at most the scored mentions, the sieves
    deciding every scored mention, and the state's arrays of the shapes the counts say."""
    coref = result["coref"]
    for block in ("mentions", "scored", "heads", "baselines", "sieves"):
        if sorted(coref[block]) != sorted(TYPE_AXIS):
            raise Invalid(f"coref.{block}", f"has types {sorted(coref[block])}, expected {list(TYPE_AXIS)}")
    for block in ("mentions", "scored"):
        parts = sum(coref[block][name] for name in TYPE_AXIS[1:])
        if parts != coref[block]["all"]:
            raise Invalid(f"coref.{block}", f"the types add up to {parts}, not all ({coref[block]['all']})")
    for name in TYPE_AXIS:
        scored = coref["scored"][name]
        if scored > coref["mentions"][name]:
            raise Invalid(f"coref.scored.{name}", f"{scored} scored of {coref['mentions'][name]} mentions")
        for direction, grid in coref["heads"][name].items():
            for layer, row in enumerate(grid):
                for head, count in enumerate(row):
                    if count > scored:
                        raise Invalid(f"coref.heads.{name}.{direction}[{layer}][{head}]",
                                      f"{count} correct of {scored} scored mentions")
        for baseline, count in coref["baselines"][name].items():
            if count > scored:
                raise Invalid(f"coref.baselines.{name}.{baseline}", f"{count} correct of {scored} scored mentions")
        decided = sum(coref["sieves"][name].values())
        if decided != scored:
            raise Invalid(f"coref.sieves.{name}", f"decide {decided} mentions, not the {scored} scored")
    for block, report in (("coref.in_sample", coref["in_sample"]), ("heldout", result.get("heldout"))):
        if report and sorted(report["types"]) != sorted(TYPE_AXIS):
            raise Invalid(f"{block}.types", f"has types {sorted(report['types'])}, expected {list(TYPE_AXIS)}")
    boot = coref.get("bootstrap")
    state = result["state"]
    model = result["model"]
    types, kinds = len(TYPE_AXIS), len(coref["baseline_names"])
    heads = heads_per_layer(result)
    expected = {"scored": [types], "heads": [types, 2, model["num_layers"], heads],
                "baselines": [types, kinds]}
    if boot:
        expected.update({f"boot_{name}": [boot["replicates"], *shape] for name, shape in list(expected.items())})
    for name, shape in expected.items():
        if name not in state:
            raise Invalid(f"state.{name}", "missing")
        if state[name]["shape"] != shape:
            raise Invalid(f"state.{name}.shape", f"is {state[name]['shape']}, expected {shape}")
    if int(decoded(state["scored"], "state.scored")[0]) != coref["scored"]["all"]:
        raise Invalid("state.scored", "disagrees with coref.scored")

