"""What an ``ablation`` result holds beyond the common blocks, and the checks its types cannot express.

Each condition (the heads it disables and what the metric did), the accumulator's state and, for an
``ablate --chosen`` run, the versus block: every chosen set's effect against matched random sets'. No torch.

>>> result = {"model": {"num_layers": 2, "num_heads": 4}, "config": {},
...           "conditions": [{"label": "none", "heads": []}, {"label": "3-1", "heads": [[2, 0]]}]}
>>> heads_exist_in_the_model(result)
Traceback (most recent call last):
probing.results.schema.specs.Invalid: conditions[1].heads[0][0]: layer 2 does not exist: the model has 2 layers (from 0)
"""

from __future__ import annotations

from probing.results.schema import specs
from probing.results.schema.blocks import STATE
from probing.results.schema.validation import heads_per_layer

VERSUS_SET = specs.Obj(
    {
        "chosen": specs.Field(specs.Obj({
            "heads": specs.Field(specs.ListOf(specs.ListOf(specs.COUNT, 2)), "the chosen set's [layer, head] (from 0)"),
            "effect": specs.Field(specs.Nullable(specs.NUMBER), "metric(disabled) - metric(intact) on the same units; null: no unit"),
            "interval": specs.Field(specs.Nullable(specs.ListOf(specs.NUMBER, 2)), "95% paired bootstrap interval of the effect"),
            "se": specs.Field(specs.Nullable(specs.NUMBER), "the effect's standard error: the standard deviation of its paired bootstrap "
                                          "replicates (null: fewer than two with units)", required=False),
        }), "the chosen set (the top k heads of the relation on DEV)"),
        "random": specs.Field(specs.Nullable(specs.Obj({
            "mean": specs.Field(specs.NUMBER, "mean effect of the matched random sets"),
            "percentiles": specs.Field(specs.ListOf(specs.NUMBER, 2), "their 2.5th and 97.5th percentiles"),
            "draws": specs.Field(specs.COUNT, "matched random sets drawn (a set drawn twice counts twice); exact: every set of "
                                  "the space, once"),
            "distinct": specs.Field(specs.COUNT, "distinct sets among them, each computed once", required=False),
        })), "the matched random sets' effects, or null without draws"),
        "short_sets": specs.Field(specs.COUNT, "random draws smaller than the chosen set (a layer had too few heads left)"),
        "p_value": specs.Field(specs.Nullable(specs.SHARE), "(1 + count) / (1 + draws), count the draws at least as harmful"),
        "exact": specs.Field(specs.BOOL, "whether the random sets are the whole space of matched sets (it held no more sets "
                             "than the draws asked for), each once: p is then exact", required=False),
        "space": specs.Field(specs.Nullable(specs.COUNT), "distinct matched random sets there are: layer-matched, the product over the "
                                        "chosen set's layers of C(heads left there, heads taken); band-matched, C(heads "
                                        "of the chosen heads' bands, k); null beyond an int64", required=False),
    }
)

VERSUS = specs.Obj(
    {
        "metric": specs.Field(specs.STR, "the metric's name (accuracy, loss, probe)"),
        "higher_is_better": specs.Field(specs.BOOL, "whether a drop of the metric is the harmful direction"),
        "match": specs.Field(specs.OneOf(("layer", "band")), "how the random sets were matched (--match): as many heads in each "
                                                 "layer, or k heads from layers L-1 to L+1 of the chosen heads; absent "
                                                 "in files written before band matching (layer)", required=False),
        "parts": specs.Field(specs.MapOf(specs.MapOf(VERSUS_SET, "chosen set REL@K"), "metric part"), "per metric part and chosen set"),
    }
)

PAYLOAD = {
    "conditions": specs.Field(specs.ListOf(specs.Obj({"label": specs.Field(specs.STR, "")})), "each condition's change"),
    "state": specs.Field(STATE.spec, STATE.doc + "; with the probe as the metric, the intact model's counts "
                         "are c0.NAME and every other condition i's are d{i}.NAME, their difference from the intact model's, "
                         "zigzag-coded (0, -1, 1, -2 as 0, 1, 2, 3); files written before hold c{i}.NAME for every condition"),
    "versus": specs.Field(VERSUS, "a --chosen run: per metric part and chosen set, its effect against the matched random "
                            "sets' (docs/dark-secrets.md)", required=False),
}

SECTIONS = ()
"""No block of its own in docs/results.md."""


def versus_matches_the_conditions(result: dict) -> None:
    """A versus block names only chosen sets that ran, with their heads, and as many draws as ran."""
    if "versus" not in result:
        return
    labels = {condition["label"]: condition.get("heads", []) for condition in result["conditions"]}
    metric = result.get("metric", {})  # undeclared by the payload, but what the parts are named against
    parts_spec = specs.Field(specs.Nullable(specs.ListOf(specs.STR)), "the metric's parts", required=False)
    specs.Obj({"parts": parts_spec}).check(metric, "metric", specs.Shape())
    parts = metric.get("parts")
    for part, sets in result["versus"]["parts"].items():
        if parts is not None and part not in parts:
            raise specs.Invalid(f"versus.parts.{part}", f"is not a part of the metric ({', '.join(parts)})")
        for key, entry in sets.items():
            where = f"versus.parts.{part}.{key}"
            if labels.get(f"{key}:chosen") != entry["chosen"]["heads"]:
                raise specs.Invalid(f"{where}.chosen.heads", f"are not the heads of condition {key}:chosen")
            draws = sum(len(label.rpartition(":")[2].split(",")) for label in labels
                        if label.startswith((f"{key}:random", f"{key}:exact")))  # randomI,J: two draws, one set
            found = 0 if entry["random"] is None else entry["random"]["draws"]
            if found != draws and entry["chosen"]["effect"] is not None:  # a part without units has no draws
                raise specs.Invalid(f"{where}.random.draws", f"says {found}, the result ran {draws} random sets for {key}")
            if entry["short_sets"] > draws:
                raise specs.Invalid(f"{where}.short_sets", f"{entry['short_sets']} of {draws} draws")



def heads_exist_in_the_model(result: dict) -> None:
    """Every condition's disabled heads are [layer, head] pairs (from 0) of the model the result records: a
    merge or a table must not meet a head the model does not have."""
    shape = specs.Shape(result["model"]["num_layers"], heads_per_layer(result))
    for index, condition in enumerate(result["conditions"]):
        where = f"conditions[{index}].heads"
        if "heads" not in condition:
            raise specs.Invalid(where, "missing (the [layer, head] pairs the condition disables)")
        specs.ListOf(specs.ListOf(specs.COUNT, 2)).check(condition["heads"], where, shape)
        for number, (layer, head) in enumerate(condition["heads"]):
            specs.LAYER.check(layer, f"{where}[{number}][0]", shape)
            specs.HEAD.check(head, f"{where}[{number}][1]", shape)
