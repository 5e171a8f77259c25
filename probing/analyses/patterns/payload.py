"""What a ``patterns`` result holds beyond the common blocks, and the checks its types cannot express.

Each head's pattern type (Kovaleva et al. 2019, Figure 1) with the shares it was read from, the rules, and the
accumulator's state. No torch: validation runs without a model framework (the accumulator takes its type names
from here).

>>> result = {"model": {"num_layers": 1, "num_heads": 2}, "config": {}, "types": [["vertical", "sideways"]]}
>>> types_fit_the_model(result)
Traceback (most recent call last):
probing.results.schema.specs.Invalid: types[0][1]: expected vertical or diagonal or ... found 'sideways'
"""

from __future__ import annotations

from probing.results.schema.blocks import STATE
from probing.results.schema.specs import STR, Field, Grid, ListOf, OneOf, Shape
from probing.results.schema.validation import heads_per_layer

TYPES = ("vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous")
"""The five types of the paper, in its order."""

PAYLOAD = {"types": Field(ListOf(ListOf(STR)), "[layer][head] pattern type"), "state": STATE}

SECTIONS = ()
"""No block of its own in docs/results.md."""


def types_fit_the_model(result: dict) -> None:
    """``types`` is a [layer][head] grid of the model's shape (one head per layer under rollout), each one of
    :data:`TYPES`: a merge rebuilds the accumulator from its shape."""
    shape = Shape(result["model"]["num_layers"], heads_per_layer(result))
    Grid(OneOf(TYPES)).check(result["types"], "types", shape)
