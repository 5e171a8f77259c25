"""What a ``noop`` result holds beyond the common blocks, and the checks its types cannot express.

Per relation, the shares of attention to special tokens and punctuation from its dependents (or heads) and
from the other words, per head and per layer with intervals, and its chosen head's differences. No torch.

>>> entry = {"words": {"dependents": 2, "non_dependents": 1, "heads": 2, "non_heads": 2}, "layers": {}}
>>> groups_add_up({"noop": {"words": 4, "relations": {"det": entry}}, "model": {"num_layers": 1}})
Traceback (most recent call last):
probing.results.schema.specs.Invalid: noop.relations.det.words: dependents (2) and non_dependents (1) do not add up to the words (4)
"""

from __future__ import annotations

from probing.results.schema.blocks import STATE
from probing.results.schema.specs import COUNT, INT, SHARE, SIGNED_SHARE, STR, Field, Grid, Interval, Invalid, ListOf, MapOf, Nullable, Obj

SHARE_GRIDS = Obj({"special": Field(Nullable(Grid(SHARE)), "to special tokens, null without such words"),
                   "punctuation": Field(Nullable(Grid(SHARE)), "to punctuation words")})

SHARE_INTERVAL = Obj({"share": Field(SHARE, "mean share"),
                      "interval": Field(Interval(), "percentile bootstrap interval, or null")})
DIFFERENCE = Obj({"value": Field(SIGNED_SHARE, "difference of two shares"),
                  "interval": Field(Interval(-1.0, 1.0), "paired bootstrap interval, or null")})

RELATION = Obj(
    {
        "words": Field(MapOf(COUNT, "group"), "words of each group: dependents, non_dependents, heads, non_heads"),
        "heads": Field(MapOf(SHARE_GRIDS, "group"), "[layer][head] mean shares from 0, per group of words and target"),
        "layers": Field(MapOf(MapOf(Nullable(ListOf(SHARE_INTERVAL)), "target"), "group"),
                        "per group and target, each layer's mean over heads {share, interval} (null: no such words)"),
        "chosen": Field(Nullable(Obj({"layer": Field(COUNT, "from 0"), "head": Field(COUNT, "from 0"),
                                      "direction": Field(STR, "dep_to_head or head_to_dep"),
                                      "selection": Field(STR, "chosen on dev, or in-sample best"),
                                      "attending": Field(STR, "the group whose attention the direction reads: "
                                                              "dependents (dep_to_head) or heads (head_to_dep)"),
                                      "difference": Field(MapOf(DIFFERENCE, "target"),
                                                          "the others minus the attending words per target "
                                                          "{value, interval}"),
                                      "difference_dependents": Field(MapOf(DIFFERENCE, "target"),
                                                                     "non-dependents minus dependents per target",
                                                                     required=False)})),
                        "the relation's chosen head with {share, interval} per group and target; null when the "
                        "probe had none or merged parts chose differently"),
    }
)

NOOP = Obj(
    {
        "num_heads": Field(COUNT, "heads per layer"),
        "targets": Field(ListOf(STR), "special, punctuation"),
        "words": Field(COUNT, "words whose attention was measured"),
        "sentences": Field(COUNT, "sentences measured"),
        "replicates": Field(COUNT, "Poisson bootstrap replicates over sentences (0: no intervals)"),
        "seed": Field(INT, "seed of the per-sentence bootstrap weights"),
        "level": Field(SHARE, "coverage of every interval"),
        "relations": Field(MapOf(RELATION, "relation"), "per relation"),
    }
)

PAYLOAD = {
    "noop": Field(NOOP, "shares of attention to special tokens and punctuation from each relation's dependents and "
                        "from other words (derived from state)"),
    "state": STATE,
}

SECTIONS = ()
"""No block of its own in docs/results.md."""


def groups_add_up(result: dict) -> None:
    """Each relation's groups of words add up to the words measured, and its layer lists have the model's layers."""
    block = result["noop"]
    for name, entry in block["relations"].items():
        for group, rest in (("dependents", "non_dependents"), ("heads", "non_heads")):
            found, other = entry["words"].get(group, 0), entry["words"].get(rest, 0)
            if found + other != block["words"]:
                raise Invalid(f"noop.relations.{name}.words", f"{group} ({found}) and {rest} ({other}) do not add "
                                                              f"up to the words ({block['words']})")
        for group, targets in entry["layers"].items():
            for target, layers in targets.items():
                if layers is not None and len(layers) != result["model"]["num_layers"]:
                    raise Invalid(f"noop.relations.{name}.layers.{group}.{target}",
                                  f"has {len(layers)} layers, the model {result['model']['num_layers']}")
