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

from probing.results.schema import specs

DIRECTIONS = specs.OneOf(("dep_to_head", "head_to_dep", "causal"))
"""The directions DEV ranks a head in: the classic two, and a decoder's later-to-earlier one."""

SOURCE = specs.Obj({
    "path": specs.Field(specs.STR, "the file as given"),
    "sha256": specs.Field(specs.STR, "of its bytes"),
    "created": specs.Field(specs.STR, "when that result was made (its own created field)"),
})

EFFECTS = specs.Nullable(specs.NUMBER)
MAP = specs.Obj({
    "effect": specs.Field(specs.Grid(EFFECTS), "metric(the head disabled alone) - metric(intact), on the same units; null: the "
                                   "part had no unit"),
    "low": specs.Field(specs.Grid(EFFECTS), "2.5th percentile of the effect over the paired bootstrap replicates"),
    "high": specs.Field(specs.Grid(EFFECTS), "97.5th percentile of the same"),
    "harm": specs.Field(specs.Grid(EFFECTS), "the effect in the metric's harmful direction: -effect for an accuracy, the effect "
                                 "for a loss (larger: the metric needs the head more)"),
})

RANK = specs.Obj({
    "layers": specs.Field(specs.ListOf(specs.LAYER, 2), "the first and last layer compared (from 0): the head's band L-1 to L+1 "
                                      "within the model, or every layer"),
    "heads": specs.Field(specs.COUNT, "heads compared, the chosen one included"),
    "rank": specs.Field(specs.COUNT, "1 + the heads more harmful than the chosen one (by more than 1e-9)"),
    "ties": specs.Field(specs.COUNT, "the other heads as harmful as the chosen one (within 1e-9)"),
    "p_value": specs.Field(specs.SHARE, "(1 + the other heads at least as harmful) / heads = (rank + ties) / heads: exact, no "
                            "draw"),
})

CHOSEN_PART = specs.Nullable(specs.Obj({
    "effect": specs.Field(specs.NUMBER, "the chosen head's effect, as in the map"),
    "harm": specs.Field(specs.NUMBER, "its harm, as in the map"),
    "interval": specs.Field(specs.Nullable(specs.ListOf(specs.NUMBER, 2)), "its 95% paired bootstrap interval"),
    "band": specs.Field(RANK, "against every other head of its layer band (layers L-1 to L+1)"),
    "model": specs.Field(RANK, "against every other head of the model"),
}))

CHOSEN = specs.Obj({
    "head": specs.Field(specs.Obj({
        "layer": specs.Field(specs.LAYER, "from 0"), "head": specs.Field(specs.HEAD, "from 0"),
        "direction": specs.Field(DIRECTIONS, "its better direction on DEV"),
        "accuracy": specs.Field(specs.SHARE, "its accuracy on DEV in that direction")}),
        "the relation's top head on DEV (ablate --chosen REL --k 1 disables it; the tie rule of docs/scoring.md)"),
    "parts": specs.Field(specs.MapOf(CHOSEN_PART, "metric part"), "per metric part, its place in the map; null: no unit"),
})

SYNTAX = specs.Obj({
    "rho": specs.Field(specs.Nullable(specs.SIGNED_SHARE), "Spearman's rho over all heads of DEV accuracy and harm (average ranks); "
                                         "null: every harm (or accuracy) equal"),
    "interval": specs.Field(specs.Interval(-1.0, 1.0), "95% bootstrap interval over units: rho of each replicate's harms, the "
                                           "accuracies fixed"),
    "p_value": specs.Field(specs.Nullable(specs.SHARE), "(1 + permutations with rho at least the observed one) / (1 + permutations), "
                                      "the accuracies permuted among the heads of each layer"),
    "replicates": specs.Field(specs.COUNT, "bootstrap replicates the interval is taken over (those that measured every head and "
                               "whose harms are not all equal)"),
})

PERMUTATIONS = specs.Obj({
    "count": specs.Field(specs.COUNT, "permutations of the DEV accuracies per test"),
    "seed": specs.Field(specs.INT, "np.random.default_rng(seed) draws them, the same for every relation and part"),
    "within": specs.Field(specs.OneOf(("layer",)), "accuracies move only among the heads of one layer"),
    "sided": specs.Field(specs.OneOf(("harmful",)), "p counts rho at least the observed one (syntactic heads more harmful)"),
})

PAYLOAD = {
    "sources": specs.Field(specs.Obj({
        "ablation": specs.Field(SOURCE, "the ablate --each-head result the map comes from"),
        "dev": specs.Field(specs.Obj({**SOURCE.fields,
                                      "input": specs.Field(specs.Obj({"path": specs.Field(specs.STR, "the treebank DEV was scored on"),
                                                                      "sha256": specs.Field(specs.STR, "of its bytes")}), "DEV's units"),
                                      "units": specs.Field(specs.COUNT, "sentences DEV was scored on")}),
                           "the probe result (probing score) whose accuracies the harms are set against, and which "
                           "chooses each relation's head")}), "the result files the numbers come from"),
    "metric": specs.Field(specs.Obj({
        "name": specs.Field(specs.STR, "the ablation's metric (probe, lm, mlm, minimal-pairs, classification)"),
        "description": specs.Field(specs.STR, "in words"),
        "higher_is_better": specs.Field(specs.BOOL, "whether a drop of the metric is the harmful direction"),
        "parts": specs.Field(specs.ListOf(specs.STR), "its parts: a relation of the probe, the loss, BLiMP overall and its fields and "
                                    "phenomena"),
    }), "what was measured with each head disabled"),
    "bootstrap": specs.Field(specs.Obj({"replicates": specs.Field(specs.COUNT, "the ablation's replicates"),
                                        "seed": specs.Field(specs.INT, "their seed"),
                                        "level": specs.Field(specs.LEVEL, "coverage of every interval")}), "the intervals' bootstrap"),
    "permutations": specs.Field(PERMUTATIONS, "the permutation test of rho"),
    "map": specs.Field(specs.MapOf(MAP, "metric part"), "per metric part, every head's effect, interval and harm"),
    "accuracy": specs.Field(specs.MapOf(specs.Obj({
        "pairs": specs.Field(specs.COUNT, "the relation's pairs on DEV"),
        "accuracy": specs.Field(specs.Grid(specs.SHARE), "each head's DEV accuracy in its better direction"),
        "direction": specs.Field(specs.Grid(DIRECTIONS), "that direction"),
    }), "relation"), "per relation, DEV's accuracy of every head"),
    "syntax": specs.Field(specs.MapOf(specs.MapOf(SYNTAX, "metric part"), "relation"), "per relation and metric part: DEV accuracy "
                                                                    "against harm"),
    "chosen": specs.Field(specs.MapOf(CHOSEN, "relation"), "per relation, the chosen head's rank by harm"),
}

SECTIONS = (specs.Section("permutations", PERMUTATIONS), specs.Section("map.PART", MAP), specs.Section("syntax.REL.PART", SYNTAX),
            specs.Section("chosen.REL", CHOSEN), specs.Section("chosen.REL.parts.PART.band", RANK, note="and .model"))
"""The blocks docs/results.md shows in tables of their own."""


def blocks_match(result: dict) -> None:
    """The map has every metric part, and only those; DEV's accuracies, the tests and the chosen heads name the
    same relations, each with every part."""
    parts = result["metric"]["parts"]
    if list(result["map"]) != parts:
        raise specs.Invalid("map", f"has parts {list(result['map'])}, the metric {parts}")
    relations = list(result["accuracy"])
    for block in ("syntax", "chosen"):
        if list(result[block]) != relations:
            raise specs.Invalid(block, f"names relations {list(result[block])}, the accuracy block {relations}")
        for relation, entry in result[block].items():
            found = list(entry["parts"] if block == "chosen" else entry)
            if found != parts:
                raise specs.Invalid(f"{block}.{relation}", f"has parts {found}, the metric {parts}")


def harm_is_the_harmful_effect(result: dict) -> None:
    """Each harm is its effect turned to the harmful direction, and each interval is low <= high."""
    sign = -1.0 if result["metric"]["higher_is_better"] else 1.0
    for part, entry in result["map"].items():
        for layer, row in enumerate(entry["effect"]):
            for head, effect in enumerate(row):
                where = f"map.{part}.{{}}[{layer}][{head}]"
                harm, low, high = (entry[name][layer][head] for name in ("harm", "low", "high"))
                if (effect is None) != (harm is None) or (effect is not None and abs(harm - sign * effect) > 1e-12):
                    raise specs.Invalid(where.format("harm"), f"{harm} is not the effect {effect} in the harmful direction "
                                                        f"({None if effect is None else sign * effect})")
                if low is not None and high is not None and low > high:
                    raise specs.Invalid(where.format("low"), f"{low} is above high {high}")


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
                    raise specs.Invalid(where, f"compares layers {rank['layers']} ({rank['heads']} heads), not layers "
                                         f"{expected} of the model's {heads} heads a layer")
                if not 1 <= rank["rank"] <= rank["rank"] + rank["ties"] <= rank["heads"]:
                    raise specs.Invalid(f"{where}.rank", f"{rank['rank']} (ties {rank['ties']}) is not a rank among "
                                                   f"{rank['heads']} heads")
                if abs(rank["p_value"] - (rank["rank"] + rank["ties"]) / rank["heads"]) > 1e-12:
                    raise specs.Invalid(f"{where}.p_value", f"{rank['p_value']} is not (rank + ties) / heads = "
                                                      f"({rank['rank']} + {rank['ties']}) / {rank['heads']}")
