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
from probing.results.schema.blocks import STATE, TOKEN_NAMES
from probing.results.schema.specs import (
    COUNT,
    HEAD,
    LAYER,
    NON_NEGATIVE,
    NUMBER,
    SHARE,
    STR,
    Field,
    Grid,
    Invalid,
    ListOf,
    MapOf,
    Nullable,
    Obj,
    OneOf,
    Section,
)
from probing.results.schema.validation import heads_per_layer

LARGEST_DIVERGENCE = math.log(2) + 1e-6
"""The Jensen-Shannon divergence is at most ln 2 nats (the written means are rounded to 7 decimals)."""

DIVERGENCE = Obj({
    "mean": Field(ListOf(ListOf(NON_NEGATIVE)), "[head][head] mean divergence in nats, heads numbered layer * "
                                                "num_heads + head; symmetric, zero diagonal, at most ln 2"),
    "rows": Field(COUNT, "query rows averaged over (every real query: surface.queries.real)"),
    "units": Field(STR, "nats"),
    "smoothing": Field(STR, "what was added to each row before the divergence"),
    "head_order": Field(STR, "how heads are numbered"),
})

BEHAVIOUR_RULES = Obj({
    "shares": Field(MapOf(Obj({"statistic": Field(STR, "a surface statistic"),
                               "above": Field(SHARE, "the share it must exceed")}), "label"),
                    "the share rules, by label"),
    "broad": Field(Obj({"entropy_at_least_times_uniform": Field(NON_NEGATIVE, "share of the uniform entropy")}),
                   "the rule for broad attention"),
    "tie_break": Field(STR, "which rule wins when several hold"),
})

PROBE_MARK = Obj({
    "relation": Field(STR, "a relation of the probe result"),
    "layer": Field(LAYER, "from 0"),
    "head": Field(HEAD, "from 0"),
    "accuracy": Field(SHARE, "the head's accuracy in the probe result"),
})

HEADS = Obj(
    {
        "divergence": Field(DIVERGENCE, "the Jensen-Shannon divergence of every pair of heads"),
        "mds": Field(ListOf(ListOf(NUMBER, 2)), "each head's [x, y] in the MDS map, in head_order"),
        "mds_of": Field(STR, "what the map embeds"),
        "behaviour": Field(Grid(OneOf(LABELS)), "[layer][head] behaviour label"),
        "behaviour_rules": Field(BEHAVIOUR_RULES, "the thresholds the labels were given by"),
        "probe": Field(Nullable(STR), "the probe result named by --probe, or null", required=False),
        "probe_marks": Field(ListOf(PROBE_MARK), "each relation's best head in that probe result", required=False),
    },
    "the heads map",
)

PAYLOAD = {
    "token_names": TOKEN_NAMES,
    "surface": Field(SURFACE, "the surface statistics the behaviours are read from (derived from state)"),
    "heads": Field(HEADS, "divergences, MDS map, behaviours (derived from state)"),
    "state": STATE,
}

SECTIONS = (Section("token_names", TOKEN_NAMES.spec), Section("surface", SURFACE), Section("heads", HEADS))
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
        raise Invalid("heads.mds", f"places {len(block['mds'])} heads, the model has {heads}")
    real = result["surface"]["queries"]["real"]
    if block["divergence"]["rows"] != real:
        raise Invalid("heads.divergence.rows", f"is {block['divergence']['rows']}, but surface.queries.real is {real}")
    for key, shape in (("divergence", [heads, heads]), ("rows", [])):
        if key not in result["state"]:
            raise Invalid(f"state.{key}", "missing")
        if result["state"][key]["shape"] != shape:
            raise Invalid(f"state.{key}.shape", f"is {result['state'][key]['shape']}, expected {shape}")


def check_divergence(divergence: dict, *, heads: int) -> None:
    """A ``heads`` x ``heads`` matrix, symmetric, zero on the diagonal, within [0, ln 2]."""
    mean = divergence["mean"]
    if len(mean) != heads or any(len(row) != heads for row in mean):
        raise Invalid("heads.divergence.mean", f"is not a {heads} x {heads} matrix (one row and column per head)")
    for first, row in enumerate(mean):
        if row[first] != 0:
            raise Invalid(f"heads.divergence.mean[{first}][{first}]", f"{row[first]}: a head's divergence from "
                                                                       "itself is 0")
        for second, value in enumerate(row[first + 1:], start=first + 1):
            where = f"heads.divergence.mean[{first}][{second}]"
            if value > LARGEST_DIVERGENCE:
                raise Invalid(where, f"{value} nats, more than ln 2 ({math.log(2):.6f})")
            if value != mean[second][first]:
                raise Invalid(where, f"{value}, but mean[{second}][{first}] is {mean[second][first]}: the "
                                     "divergence is symmetric")
