"""Token rows side by side, padded on the right: the one layout of every batch a model reads.

The engine's batches (probing.engine.batching) and the minimal pairs' rows (probing.model.pair_rows) are both
laid out by it, so a row's tokens sit where they sit whatever else is in its batch.

>>> ids, mask = padded_rows([[1, 5], [1]])
>>> ids.tolist(), mask.tolist()
([[1, 5], [1, 0]], [[1, 1], [1, 0]])
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np
import torch


def row_layout(lengths: np.ndarray) -> tuple[tuple[int, int], np.ndarray, np.ndarray]:
    """Where rows of ``lengths`` [row] tokens lie, side by side and padded on the right: the padded shape, then
    each token's row and column (tokens in row order).

    >>> shape, rows, columns = row_layout(np.array([2, 1]))
    >>> shape, rows.tolist(), columns.tolist()
    ((2, 2), [0, 0, 1], [0, 1, 0])
    """
    rows = np.repeat(np.arange(len(lengths)), lengths)  # [token of the group]: its row
    columns = np.arange(rows.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)  # [token]: its position
    return (len(lengths), int(lengths.max())), rows, columns


def row_mask(shape: tuple[int, int], lengths: np.ndarray) -> torch.Tensor:
    """long [row, token] attention mask: 1 on a row's real tokens, 0 on its padding."""
    return torch.from_numpy((np.arange(shape[1])[None, :] < lengths[:, None]).astype(np.int64))


def padded_rows(rows: Sequence[Sequence[int]], pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """ids and attention mask, long [row, token], of token rows side by side, right-padded with ``pad_id``, as a
    batch's are (one numpy scatter of every row's tokens)."""
    lengths = np.fromiter((len(row) for row in rows), dtype=np.int64, count=len(rows))  # [row]
    shape, at_row, at_column = row_layout(lengths)
    ids = np.full(shape, pad_id, dtype=np.int64)
    ids[at_row, at_column] = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=at_row.size)
    return torch.from_numpy(ids), row_mask(shape, lengths)
