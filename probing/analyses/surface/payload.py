"""What a ``surface`` result holds beyond the common blocks, and the checks its types cannot express.

The ``surface`` block is also half of a ``heads`` result (the heads map labels each head by it), so its schema
and its check live here once and :mod:`probing.analyses.heads.payload` reuses both. No torch: validation runs
without a model framework.

A statistic is an entropy when it has a uniform-attention baseline (a key of ``uniform_entropy``), and a share of
attention otherwise; so a new statistic of the accumulator needs no edit here.

>>> block = {"num_heads": 1, "heads": {"self": [[1.5]]}, "layer_means": {"self": [1.5]}, "uniform_entropy": {},
...          "queries": {"real": 2, "first": 0, "separator": 0, "other": 2, "punctuation": 0}, "units": 1,
...          "definitions": {"self": "attention to the token itself"}}
>>> check_surface_block(block, "surface", num_layers=1, num_heads=1)
Traceback (most recent call last):
probing.results.schema.specs.Invalid: surface.heads.self[0][0]: 1.5 is a share of attention, expected between 0 and 1
"""

from __future__ import annotations

from probing.results.schema import specs
from probing.results.schema.blocks import STATE, TOKEN_NAMES
from probing.results.schema.validation import heads_per_layer

QUERY_GROUPS = ("real", "first", "separator", "other", "punctuation")
"""The kinds of query token a statistic is averaged over (probing.engine.token_roles.TokenRoles)."""

DECIMALS = 6
"""Decimals of the shares and entropies written (the accumulator rounds to them)."""

ROUNDING = 2 * 10**-DECIMALS
"""How far a layer's written mean may be from the mean of its written heads: both were rounded."""

ENTROPY_SLACK = 1e-3
"""How far (nats) a mean entropy may exceed its uniform baseline: half-precision rows sum to 1 only nearly."""

SURFACE = specs.Obj(
    {
        "num_heads": specs.Field(specs.COUNT, "heads per layer of the grids (rollout: 1)"),
        "heads": specs.Field(specs.MapOf(specs.Nullable(specs.Grid(specs.NUMBER)), "statistic"),
                             "per statistic, the [layer][head] mean over queries from 0: a share of attention (0 to 1), or "
                             "an entropy in nats; null where no query or key of its kind was seen"),
        "layer_means": specs.Field(specs.MapOf(specs.Nullable(specs.ListOf(specs.NUMBER)), "statistic"),
                                   "per statistic, each layer's mean over its heads (null with the statistic)"),
        "uniform_entropy": specs.Field(specs.MapOf(specs.Nullable(specs.NON_NEGATIVE), "statistic"),
                                       "per entropy statistic, the entropy of uniform attention over the same keys"),
        "queries": specs.Field(specs.Obj({group: specs.Field(specs.COUNT, f"{group} query tokens") for group in QUERY_GROUPS}),
                               "query tokens summed, by kind (real = separator + other)"),
        "units": specs.Field(specs.COUNT, "units read"),
        "definitions": specs.Field(specs.MapOf(specs.STR, "statistic"), "what each statistic measures, in words"),
    },
    "the surface statistics",
)

PAYLOAD = {
    "token_names": TOKEN_NAMES,
    "surface": specs.Field(SURFACE, "per-head shares and entropies, per-layer means, baselines, query counts (derived "
                              "from state)"),
    "state": STATE,
}

SECTIONS = (specs.Section("token_names", TOKEN_NAMES.spec), specs.Section("surface", SURFACE))
"""The blocks docs/results.md shows in tables of their own."""


def check_surface(result: dict) -> None:
    """A ``surface`` result's block and state agree with each other and with the model."""
    check_surface_block(result["surface"], "surface", num_layers=result["model"]["num_layers"],
                        num_heads=heads_per_layer(result))
    check_surface_state(result, prefix="")


def check_surface_block(block: dict, path: str, *, num_layers: int, num_heads: int) -> None:
    """Bounds and cross-field rules of one ``surface`` block, each refusal naming the field."""
    if block["num_heads"] != num_heads:
        raise specs.Invalid(f"{path}.num_heads", f"is {block['num_heads']}, the grids hold {num_heads} heads per layer")
    statistics = set(block["heads"])
    for name in ("layer_means", "definitions"):
        if set(block[name]) != statistics:
            raise specs.Invalid(f"{path}.{name}", f"names {sorted(block[name])}, heads names {sorted(statistics)}")
    if not set(block["uniform_entropy"]) <= statistics:
        raise specs.Invalid(f"{path}.uniform_entropy", f"names {sorted(set(block['uniform_entropy']) - statistics)}, "
                                                 "which heads lacks")
    for name, grid in block["heads"].items():
        _check_statistic(block, path, name, grid, num_layers)
    _check_queries(block, path)


def _check_statistic(block: dict, path: str, name: str, grid: list | None, num_layers: int) -> None:
    means = block["layer_means"][name]
    if (grid is None) != (means is None):
        raise specs.Invalid(f"{path}.layer_means.{name}", f"is {'null' if means is None else 'a list'}, but "
                                                    f"heads.{name} is {'null' if grid is None else 'measured'}")
    if grid is None:
        return
    if len(means) != num_layers:
        raise specs.Invalid(f"{path}.layer_means.{name}", f"has {len(means)} layers, the model {num_layers}")
    baseline = block["uniform_entropy"].get(name)
    for layer, row in enumerate(grid):
        for head, value in enumerate(row):
            where = f"{path}.heads.{name}[{layer}][{head}]"
            if name not in block["uniform_entropy"] and not 0 <= value <= 1:
                raise specs.Invalid(where, f"{value} is a share of attention, expected between 0 and 1")
            if name in block["uniform_entropy"] and not 0 <= value <= (baseline or 0) + ENTROPY_SLACK:
                raise specs.Invalid(where, f"{value} nats, expected between 0 and the uniform entropy "
                                     f"uniform_entropy.{name} ({baseline})")
        if abs(sum(row) / len(row) - means[layer]) > ROUNDING:
            raise specs.Invalid(f"{path}.layer_means.{name}[{layer}]",
                                f"{means[layer]} is not the mean of heads.{name}[{layer}] ({sum(row) / len(row):.6f})")


def _check_queries(block: dict, path: str) -> None:
    queries = block["queries"]
    if queries["separator"] + queries["other"] != queries["real"]:
        raise specs.Invalid(f"{path}.queries", f"separator ({queries['separator']}) and other ({queries['other']}) do not "
                                         f"add up to real ({queries['real']})")
    for group in ("first", "punctuation"):
        if queries[group] > queries["other"]:
            raise specs.Invalid(f"{path}.queries.{group}", f"{queries[group]} of {queries['other']} other queries")
    if block["units"] > queries["real"]:
        raise specs.Invalid(f"{path}.units", f"{block['units']} units of {queries['real']} real queries")


def check_surface_state(result: dict, *, prefix: str) -> None:
    """The state holds every statistic's [layer, head] sum, and the query counts the block reports.

    ``prefix`` is where the surface state sits in the result's state ("" for surface, "surface." for heads).
    """
    block, state = result["surface"], result["state"]
    layers = result["model"]["num_layers"]
    for name in block["heads"]:
        _state_shape(state, f"{prefix}sum.{name}", [layers, block["num_heads"]])
    for group in QUERY_GROUPS:
        key = f"{prefix}queries.{group}"
        _state_shape(state, key, [])
        if int(specs.decoded(state[key], f"state.{key}")) != block["queries"][group]:
            raise specs.Invalid(f"state.{key}", f"disagrees with surface.queries.{group} ({block['queries'][group]})")


def _state_shape(state: dict, key: str, shape: list[int]) -> None:
    if key not in state:
        raise specs.Invalid(f"state.{key}", "missing")
    if state[key]["shape"] != shape:
        raise specs.Invalid(f"state.{key}.shape", f"is {state[key]['shape']}, expected {shape}")
