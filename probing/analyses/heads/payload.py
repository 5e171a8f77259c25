"""What a ``heads`` result holds beyond the common blocks, and the checks its types cannot express.

A heads result carries the surface statistics it labels heads by (their schema and check are
:mod:`probing.analyses.surface.payload`'s, the state under ``surface.``) beside its own block: the divergence of
every pair of heads, their MDS map and each head's behaviour. No torch.

>>> check_divergence({"mean": [[0.0, 0.2], [0.3, 0.0]], "rows": 4}, heads=2)
Traceback (most recent call last):
probing.results.schema.specs.Invalid: heads.divergence.mean[0][1]: 0.2, but mean[1][0] is 0.3: the divergence is symmetric
"""

from __future__ import annotations

import math

from probing.analyses.heads.behaviour import LABELS
from probing.analyses.surface.payload import SURFACE, check_surface_block, check_surface_state
from probing.results.schema import specs
from probing.results.schema.blocks import STATE, TOKEN_NAMES
from probing.results.schema.validation import heads_per_layer

LARGEST_DIVERGENCE = math.log(2) + 1e-6
"""The Jensen-Shannon divergence is at most ln 2 nats (the written means are rounded to 7 decimals)."""

DIVERGENCE = specs.Obj({
    "mean": specs.Field(specs.ListOf(specs.ListOf(specs.NON_NEGATIVE)), "[head][head] mean divergence in nats, heads numbered layer * "
                                                "num_heads + head; symmetric, zero diagonal, at most ln 2"),
    "rows": specs.Field(specs.COUNT, "query rows averaged over (every real query: surface.queries.real)"),
    "units": specs.Field(specs.STR, "nats"),
    "smoothing": specs.Field(specs.STR, "what was added to each row before the divergence"),
    "head_order": specs.Field(specs.STR, "how heads are numbered"),
})

BEHAVIOUR_RULES = specs.Obj({
    "shares": specs.Field(specs.MapOf(specs.Obj({"statistic": specs.Field(specs.STR, "a surface statistic"),
                                                 "above": specs.Field(specs.SHARE, "the share it must exceed")}), "label"),
                          "the share rules, by label"),
    "broad": specs.Field(specs.Obj({"entropy_at_least_times_uniform": specs.Field(specs.NON_NEGATIVE, "share of the uniform entropy")}),
                         "the rule for broad attention"),
    "tie_break": specs.Field(specs.STR, "which rule wins when several hold"),
})

PROBE_MARK = specs.Obj({
    "relation": specs.Field(specs.STR, "a relation of the probe result"),
    "layer": specs.Field(specs.LAYER, "from 0"),
    "head": specs.Field(specs.HEAD, "from 0"),
    "accuracy": specs.Field(specs.SHARE, "the head's accuracy in the probe result"),
})

HEADS = specs.Obj(
    {
        "divergence": specs.Field(DIVERGENCE, "the Jensen-Shannon divergence of every pair of heads"),
        "mds": specs.Field(specs.ListOf(specs.ListOf(specs.NUMBER, 2)), "each head's [x, y] in the MDS map, in head_order"),
        "mds_of": specs.Field(specs.STR, "what the map embeds"),
        "behaviour": specs.Field(specs.Grid(specs.OneOf(LABELS)), "[layer][head] behaviour label"),
        "behaviour_rules": specs.Field(BEHAVIOUR_RULES, "the thresholds the labels were given by"),
        "probe": specs.Field(specs.Nullable(specs.STR), "the probe result named by --probe, or null", required=False),
        "probe_marks": specs.Field(specs.ListOf(PROBE_MARK), "each relation's best head in that probe result", required=False),
    },
    "the heads map",
)

PAYLOAD = {
    "token_names": TOKEN_NAMES,
    "surface": specs.Field(SURFACE, "the surface statistics the behaviours are read from (derived from state)"),
    "heads": specs.Field(HEADS, "divergences, MDS map, behaviours (derived from state)"),
    "state": STATE,
}

SECTIONS = (specs.Section("token_names", TOKEN_NAMES.spec), specs.Section("surface", SURFACE), specs.Section("heads", HEADS))
"""The blocks docs/results.md shows in tables of their own."""


def check_heads(result: dict) -> None:
    """The map covers the model's heads, the divergences are a divergence's, and the state matches both blocks."""
    layers = result["model"]["num_layers"]
    per_layer = heads_per_layer(result)
    check_surface_block(result["surface"], "surface", num_layers=layers, num_heads=per_layer)
    check_surface_state(result, prefix="surface.")
    block, heads = result["heads"], layers * per_layer
    check_divergence(block["divergence"], heads=heads)
    if len(block["mds"]) != heads:
        raise specs.Invalid("heads.mds", f"places {len(block['mds'])} heads, the model has {heads}")
    real = result["surface"]["queries"]["real"]
    if block["divergence"]["rows"] != real:
        raise specs.Invalid("heads.divergence.rows", f"is {block['divergence']['rows']}, but surface.queries.real is {real}")
    for key, shape in (("divergence", [heads, heads]), ("rows", [])):
        if key not in result["state"]:
            raise specs.Invalid(f"state.{key}", "missing")
        if result["state"][key]["shape"] != shape:
            raise specs.Invalid(f"state.{key}.shape", f"is {result['state'][key]['shape']}, expected {shape}")


def check_divergence(divergence: dict, *, heads: int) -> None:
    """A ``heads`` x ``heads`` matrix, symmetric, zero on the diagonal, within [0, ln 2]."""
    mean = divergence["mean"]
    if len(mean) != heads or any(len(row) != heads for row in mean):
        raise specs.Invalid("heads.divergence.mean", f"is not a {heads} x {heads} matrix (one row and column per head)")
    for first, row in enumerate(mean):
        if row[first] != 0:
            raise specs.Invalid(f"heads.divergence.mean[{first}][{first}]", f"{row[first]}: a head's divergence from "
                                                                       "itself is 0")
        for second, value in enumerate(row[first + 1:], start=first + 1):
            where = f"heads.divergence.mean[{first}][{second}]"
            if value > LARGEST_DIVERGENCE:
                raise specs.Invalid(where, f"{value} nats, more than ln 2 ({math.log(2):.6f})")
            if value != mean[second][first]:
                raise specs.Invalid(where, f"{value}, but mean[{second}][{first}] is {mean[second][first]}: the "
                                     "divergence is symmetric")
