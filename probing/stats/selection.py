"""Choosing a relation's head and offset from counts (held-out selection).

The paper picks the best of every layer, head and direction on the same
sentences it reports on, which flatters the winner. Held-out selection makes
the choice on one treebank split (dev) and reports it on another (test).

Rules, fixed so that anyone gets the same choice from the same counts:

- head: most correct predictions; ties go to the lower layer, then the lower
  head, then ``dep_to_head`` before ``head_to_dep`` (layers and heads from 0);
- offset: most correct predictions; ties go to the offset listed first.

Pure numpy over count arrays (no torch), so it also runs on result files.

>>> heads = np.array([[[3, 9], [9, 1]], [[0, 9], [2, 2]]])  # [direction, layer, head]
>>> select_head(heads, total=10)
HeadChoice(direction='dep_to_head', layer=0, head=1, correct=9, ties=3)
>>> select_offset([4, 7, 7, 1], offsets=[-2, -1, 1, 2], total=10)
OffsetChoice(offset=-1, index=1, correct=7, ties=2)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from probing.naming import DIRECTIONS


@dataclass(frozen=True)
class HeadChoice:
    """A chosen head; ``ties`` counts every (layer, head, direction) with the same score, itself included."""

    direction: str
    layer: int
    head: int
    correct: int
    ties: int

    @property
    def direction_index(self) -> int:
        return DIRECTIONS.index(self.direction)


@dataclass(frozen=True)
class OffsetChoice:
    """A chosen positional baseline; ``index`` is its position in the offset list."""

    offset: int
    index: int
    correct: int
    ties: int


def ranked_heads(scores, k: int | None = None) -> list[tuple[int, int, int]]:
    """(direction, layer, head) of the ``k`` best heads of ``scores`` [direction, layer, head] (all, best first,
    when ``k`` is None), each head once in its better direction, by the tie rule every choice of a head follows:
    more is better; ties go to the lower layer, then the lower head, then the direction listed first
    (dep_to_head before head_to_dep, a decoder's causal one last).

    >>> ranked_heads(np.array([[[1, 5], [5, 0]], [[5, 0], [2, 7]]]), 3)  # [1, 1] is best; three heads tie at 5
    [(1, 1, 1), (1, 0, 0), (0, 0, 1)]
    """
    ordered = np.moveaxis(np.asarray(scores), 0, -1)        # [layer, head, direction]
    best, direction = ordered.max(axis=-1), ordered.argmax(axis=-1)  # argmax: the first direction wins a tie
    order = np.argsort(-best.ravel(), kind="stable")[:k]    # stable: C order breaks ties (layer, then head)
    num_heads = best.shape[1]
    return [(int(direction.flat[i]), int(i // num_heads), int(i % num_heads)) for i in order]


def best_cell(scores) -> tuple[int, int, int]:
    """(direction, layer, head) of the largest score in ``scores`` [direction, layer, head]: the first of
    :func:`ranked_heads`.

    >>> best_cell(np.array([[[1, 5]], [[5, 0]]]))   # head 0-1 dep_to_head and 0-0 head_to_dep tie at 5
    (1, 0, 0)
    """
    return ranked_heads(scores, 1)[0]


def select_head(heads, total: int) -> HeadChoice | None:
    """The best head of one relation; ``heads`` holds correct counts [direction, layer, head].

    None when the relation has no pair (nothing to choose on).
    """
    if total == 0:
        return None
    counts = np.asarray(heads)
    direction, layer, head = best_cell(counts)
    best = int(counts[direction, layer, head])
    return HeadChoice(DIRECTIONS[direction], layer, head, best, int(np.sum(counts == best)))


def select_offset(baselines, offsets, total: int) -> OffsetChoice | None:
    """The best offset of one relation; ``baselines`` holds correct counts [offset]. None without pairs."""
    if total == 0:
        return None
    counts = np.asarray(baselines)
    index = int(np.argmax(counts))  # first maximum: ties go to the offset listed first
    best = int(counts[index])
    return OffsetChoice(int(offsets[index]), index, best, int(np.sum(counts == best)))


def relation_arrays(entry: dict, offsets) -> tuple[int, np.ndarray, np.ndarray]:
    """``(total, heads [direction, layer, head], baselines [offset])`` of one entry of a
    result's ``relations`` object."""
    heads = np.stack([np.asarray(entry["heads"][direction]) for direction in DIRECTIONS])
    baselines = np.asarray([entry["baselines"][str(offset)] for offset in offsets])
    return int(entry["total"]), heads, baselines


def choose(entry: dict, offsets) -> tuple[HeadChoice | None, OffsetChoice | None]:
    """Head and offset chosen from one relation entry of a result file."""
    total, heads, baselines = relation_arrays(entry, offsets)
    return select_head(heads, total), select_offset(baselines, offsets, total)
