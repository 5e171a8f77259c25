"""What a ``patterns`` result holds beyond the common blocks.

Each head's pattern type (Kovaleva et al. 2019, Figure 1) with the shares it was read from, the rules, and the
accumulator's state. No torch: validation runs without a model framework (the accumulator takes its type names
from here).

>>> TYPES.index("block")
3
"""

from __future__ import annotations

from probing.results.schema import STATE, STR, Field, ListOf

TYPES = ("vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous")
"""The five types of the paper, in its order."""

PAYLOAD = {"types": Field(ListOf(ListOf(STR)), "[layer][head] pattern type"), "state": STATE}

SECTIONS = ()
"""No block of its own in docs/results.md."""

