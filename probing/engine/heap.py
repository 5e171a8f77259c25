"""Memory that stays flat over a long treebank: glibc's mmap threshold held fixed, at 4 MiB.

glibc serves an allocation above its *mmap threshold* with its own ``mmap``,
returned to the system when freed, and the rest from its heap. The threshold
is dynamic: each time such a block is freed, glibc raises it to the block's
size (up to 32 MiB), so after a few batches even a batch's largest tensors
come from the heap. Those are the attention tensors of the longest batches
(scores and probabilities of one layer, [batch, head, query, key] in float32:
4 MiB at 32 sentences of 52 tokens under 12 heads), and their sizes change
with every batch's length, so the heap's freed pieces no longer fit the next
batch's, stay kept, and the heap grows: glibc's own counts (``mallinfo2``),
read at the end of each chunk, show the bytes in use flat and the free bytes
it keeps growing with the number of batches, and so does the peak (the
benchmark's row for glibc's own rule).

Holding the threshold fixed turns the raising off. Where it is held decides
what goes on ``mmap``: each of those blocks costs page faults and zeroing
every time it is made, and at glibc's starting value (128 KiB) that is every
tensor of a batch, 45% more time on every run. At 4 MiB only the large,
variably sized attention tensors of long batches are mapped, the heap keeps
the rest, and the peak stays flat (``python benchmarks/run.py --memory
--settings`` measures peak and time for each threshold; benchmarks/RESULTS.md
has the table the value was chosen from).

A user's ``MALLOC_MMAP_THRESHOLD_`` (glibc's own variable) wins, and
``PROBING_MALLOC=glibc`` leaves glibc's own rule in place (the benchmark's
row for it); off glibc (macOS, musl) nothing is changed.

>>> held = hold_mmap_threshold()   # True on Linux with glibc; decided once per process
>>> hold_mmap_threshold() is held
True
"""

from __future__ import annotations

import ctypes
import os
import sys

M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter number for the mmap threshold (malloc.h)."""

THRESHOLD_BYTES = 4 * 1024 * 1024
"""Blocks above this are mapped and unmapped each time: the large attention tensors of long batches, whose
changing sizes fragment the heap. Lower costs time (128 KiB: 45% on every run); higher lets the heap grow."""

_held: list[bool] = []
"""Whether the threshold was held, once decided for this process."""


def hold_mmap_threshold() -> bool:
    """Fix glibc's mmap threshold for this process (once; later calls return the first answer).

    Returns whether it is now held: False off Linux, where glibc's ``mallopt`` is missing or refuses, when
    ``MALLOC_MMAP_THRESHOLD_`` is set (the user has chosen; glibc has applied it already), and under
    ``PROBING_MALLOC=glibc``."""
    if not _held:
        _held.append(_hold())
    return _held[0]


def _hold() -> bool:
    if not sys.platform.startswith("linux") or "MALLOC_MMAP_THRESHOLD_" in os.environ or \
            os.environ.get("PROBING_MALLOC") == "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # no C library symbols in this process, or one without mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, THRESHOLD_BYTES) == 1  # glibc returns 1 on success; musl's stub returns 0
