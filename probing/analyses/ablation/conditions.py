"""Conditions of ``probing ablate``: sets of heads disabled together (made uniform, probing.model.interventions);
the first condition of a run is always the intact model.

>>> [condition.label for condition in each_head(2, 2)]
['none', '1-1', '1-2', '2-1', '2-2']
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.naming import head_name, parse_head_names


@dataclass(frozen=True)
class Condition:
    """A set of heads disabled together; ``label`` names them (from 1), "none" is the intact model."""

    label: str
    heads: tuple[tuple[int, int], ...]


INTACT = Condition("none", ())


def each_head(num_layers: int, num_heads: int) -> list[Condition]:
    """The intact model, then one condition per head."""
    return [INTACT] + [Condition(head_name(layer, head), ((layer, head),))
                       for layer in range(num_layers) for head in range(num_heads)]


def each_layer(num_layers: int, num_heads: int) -> list[Condition]:
    """The intact model, then one condition per layer: all its heads at once."""
    return [INTACT] + [Condition(f"layer {layer + 1}", tuple((layer, head) for head in range(num_heads)))
                       for layer in range(num_layers)]


def chosen_heads(texts: list[str], num_layers: int, num_heads: int) -> list[Condition]:
    """The intact model, then one condition per ``--heads 3-5,7-1`` (counted from 1)."""
    conditions = [INTACT]
    for text in texts:
        heads = tuple(parse_head_names(text, num_layers=num_layers, num_heads=num_heads))
        conditions.append(Condition(",".join(head_name(*head) for head in sorted(heads)), tuple(sorted(heads))))
    return conditions
