"""What an ``importance`` result holds beyond the common blocks, and the checks its types cannot express.

Its ``model`` and ``input`` blocks are the ablation's (the weights whose heads were disabled, the units
measured); ``sources`` names the two result files it was made of. No torch.

>>> grid = [[0.1, -0.2]]
>>> harm_is_the_harmful_effect({"metric": {"higher_is_better": True},
...                             "map": {"loss": {"effect": grid, "harm": grid, "low": grid, "high": grid}}})
Traceback (most recent call last):
probing.results.schema.specs.Invalid: map.loss.harm[0][0]: 0.1 is not the effect 0.1 in the harmful direction (-0.1)
"""

from __future__ import annotations

from probing.results.schema.specs import (
    BOOL,
    COUNT,
    HEAD,
    INT,
    LAYER,
    LEVEL,
    NUMBER,
    SHARE,
    SIGNED_SHARE,
    STR,
    Field,
    Grid,
    Interval,
    Invalid,
    ListOf,
    MapOf,
    Nullable,
    Obj,
    OneOf,
    Section,
)

DIRECTIONS = OneOf(("dep_to_head", "head_to_dep", "causal"))
"""The directions DEV ranks a head in: the classic two, and a decoder's later-to-earlier one."""

SOURCE = Obj({
    "path": Field(STR, "the file as given"),
    "sha256": Field(STR, "of its bytes"),
    "created": Field(STR, "when that result was made (its own created field)"),
})

EFFECTS = Nullable(NUMBER)
MAP = Obj({
    "effect": Field(Grid(EFFECTS), "metric(the head disabled alone) - metric(intact), on the same units; null: the "
                                   "part had no unit"),
    "low": Field(Grid(EFFECTS), "2.5th percentile of the effect over the paired bootstrap replicates"),
    "high": Field(Grid(EFFECTS), "97.5th percentile of the same"),
    "harm": Field(Grid(EFFECTS), "the effect in the metric's harmful direction: -effect for an accuracy, the effect "
                                 "for a loss (larger: the metric needs the head more)"),
})

RANK = Obj({
    "layers": Field(ListOf(LAYER, 2), "the first and last layer compared (from 0): the head's band L-1 to L+1 "
                                      "within the model, or every layer"),
    "heads": Field(COUNT, "heads compared, the chosen one included"),
    "rank": Field(COUNT, "1 + the heads more harmful than the chosen one (by more than 1e-9)"),
    "ties": Field(COUNT, "the other heads as harmful as the chosen one (within 1e-9)"),
    "p_value": Field(SHARE, "(1 + the other heads at least as harmful) / heads = (rank + ties) / heads: exact, no "
                            "draw"),
})

CHOSEN_PART = Nullable(Obj({
    "effect": Field(NUMBER, "the chosen head's effect, as in the map"),
    "harm": Field(NUMBER, "its harm, as in the map"),
    "interval": Field(Nullable(ListOf(NUMBER, 2)), "its 95% paired bootstrap interval"),
    "band": Field(RANK, "against every other head of its layer band (layers L-1 to L+1)"),
    "model": Field(RANK, "against every other head of the model"),
}))

CHOSEN = Obj({
    "head": Field(Obj({
        "layer": Field(LAYER, "from 0"), "head": Field(HEAD, "from 0"),
        "direction": Field(DIRECTIONS, "its better direction on DEV"),
        "accuracy": Field(SHARE, "its accuracy on DEV in that direction")}),
        "the relation's top head on DEV (ablate --chosen REL --k 1 disables it; the tie rule of docs/scoring.md)"),
    "parts": Field(MapOf(CHOSEN_PART, "metric part"), "per metric part, its place in the map; null: no unit"),
})

SYNTAX = Obj({
    "rho": Field(Nullable(SIGNED_SHARE), "Spearman's rho over all heads of DEV accuracy and harm (average ranks); "
                                         "null: every harm (or accuracy) equal"),
    "interval": Field(Interval(-1.0, 1.0), "95% bootstrap interval over units: rho of each replicate's harms, the "
                                           "accuracies fixed"),
    "p_value": Field(Nullable(SHARE), "(1 + permutations with rho at least the observed one) / (1 + permutations), "
                                      "the accuracies permuted among the heads of each layer"),
    "replicates": Field(COUNT, "bootstrap replicates the interval is taken over (those that measured every head and "
                               "whose harms are not all equal)"),
})

PERMUTATIONS = Obj({
    "count": Field(COUNT, "permutations of the DEV accuracies per test"),
    "seed": Field(INT, "np.random.default_rng(seed) draws them, the same for every relation and part"),
    "within": Field(OneOf(("layer",)), "accuracies move only among the heads of one layer"),
    "sided": Field(OneOf(("harmful",)), "p counts rho at least the observed one (syntactic heads more harmful)"),
})

PAYLOAD = {
    "sources": Field(Obj({
        "ablation": Field(SOURCE, "the ablate --each-head result the map comes from"),
        "dev": Field(Obj({**SOURCE.fields,
                          "input": Field(Obj({"path": Field(STR, "the treebank DEV was scored on"),
                                              "sha256": Field(STR, "of its bytes")}), "DEV's units"),
                          "units": Field(COUNT, "sentences DEV was scored on")}),
                     "the probe result (probing score) whose accuracies the harms are set against, and which "
                     "chooses each relation's head")}), "the result files the numbers come from"),
    "metric": Field(Obj({
        "name": Field(STR, "the ablation's metric (probe, lm, mlm, minimal-pairs, classification)"),
        "description": Field(STR, "in words"),
        "higher_is_better": Field(BOOL, "whether a drop of the metric is the harmful direction"),
        "parts": Field(ListOf(STR), "its parts: a relation of the probe, the loss, BLiMP overall and its fields and "
                                    "phenomena"),
    }), "what was measured with each head disabled"),
    "bootstrap": Field(Obj({"replicates": Field(COUNT, "the ablation's replicates"),
                            "seed": Field(INT, "their seed"),
                            "level": Field(LEVEL, "coverage of every interval")}), "the intervals' bootstrap"),
    "permutations": Field(PERMUTATIONS, "the permutation test of rho"),
    "map": Field(MapOf(MAP, "metric part"), "per metric part, every head's effect, interval and harm"),
    "accuracy": Field(MapOf(Obj({
        "pairs": Field(COUNT, "the relation's pairs on DEV"),
        "accuracy": Field(Grid(SHARE), "each head's DEV accuracy in its better direction"),
        "direction": Field(Grid(DIRECTIONS), "that direction"),
    }), "relation"), "per relation, DEV's accuracy of every head"),
    "syntax": Field(MapOf(MapOf(SYNTAX, "metric part"), "relation"), "per relation and metric part: DEV accuracy "
                                                                    "against harm"),
    "chosen": Field(MapOf(CHOSEN, "relation"), "per relation, the chosen head's rank by harm"),
}

SECTIONS = (Section("permutations", PERMUTATIONS), Section("map.PART", MAP), Section("syntax.REL.PART", SYNTAX),
            Section("chosen.REL", CHOSEN), Section("chosen.REL.parts.PART.band", RANK, note="and .model"))
"""The blocks docs/results.md shows in tables of their own."""


def blocks_match(result: dict) -> None:
    """The map has every metric part, and only those; DEV's accuracies, the tests and the chosen heads name the
    same relations, each with every part."""
    parts = result["metric"]["parts"]
    if list(result["map"]) != parts:
        raise Invalid("map", f"has parts {list(result['map'])}, the metric {parts}")
    relations = list(result["accuracy"])
    for block in ("syntax", "chosen"):
        if list(result[block]) != relations:
            raise Invalid(block, f"names relations {list(result[block])}, the accuracy block {relations}")
        for relation, entry in result[block].items():
            found = list(entry["parts"] if block == "chosen" else entry)
            if found != parts:
                raise Invalid(f"{block}.{relation}", f"has parts {found}, the metric {parts}")


def harm_is_the_harmful_effect(result: dict) -> None:
    """Each harm is its effect turned to the harmful direction, and each interval is low <= high."""
    sign = -1.0 if result["metric"]["higher_is_better"] else 1.0
    for part, entry in result["map"].items():
        for layer, row in enumerate(entry["effect"]):
            for head, effect in enumerate(row):
                where = f"map.{part}.{{}}[{layer}][{head}]"
                harm, low, high = (entry[name][layer][head] for name in ("harm", "low", "high"))
                if (effect is None) != (harm is None) or (effect is not None and abs(harm - sign * effect) > 1e-12):
                    raise Invalid(where.format("harm"), f"{harm} is not the effect {effect} in the harmful direction "
                                                        f"({None if effect is None else sign * effect})")
                if low is not None and high is not None and low > high:
                    raise Invalid(where.format("low"), f"{low} is above high {high}")


def ranks_fit_the_model(result: dict) -> None:
    """A chosen head's band is layers L-1 to L+1 within the model and the model rank compares every head; each
    rank is among the heads compared, and its p is what the rank and ties give."""
    layers, heads = result["model"]["num_layers"], result["model"]["num_heads"]
    for relation, entry in result["chosen"].items():
        layer = entry["head"]["layer"]
        bounds = {"band": [max(0, layer - 1), min(layers - 1, layer + 1)], "model": [0, layers - 1]}
        for part, ranks in entry["parts"].items():
            for name, expected in bounds.items():
                if ranks is None:
                    continue
                where, rank = f"chosen.{relation}.parts.{part}.{name}", ranks[name]
                if rank["layers"] != expected or rank["heads"] != (expected[1] - expected[0] + 1) * heads:
                    raise Invalid(where, f"compares layers {rank['layers']} ({rank['heads']} heads), not layers "
                                         f"{expected} of the model's {heads} heads a layer")
                if not 1 <= rank["rank"] <= rank["rank"] + rank["ties"] <= rank["heads"]:
                    raise Invalid(f"{where}.rank", f"{rank['rank']} (ties {rank['ties']}) is not a rank among "
                                                   f"{rank['heads']} heads")
                if abs(rank["p_value"] - (rank["rank"] + rank["ties"]) / rank["heads"]) > 1e-12:
                    raise Invalid(f"{where}.p_value", f"{rank['p_value']} is not (rank + ties) / heads = "
                                                      f"({rank['rank']} + {rank['ties']}) / {rank['heads']}")
