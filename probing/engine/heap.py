"""Memory that stays flat over a long treebank: glibc's mmap threshold held fixed.

glibc serves a large allocation (a batch's attention, a tensor of a few
hundred KiB and up) with its own ``mmap``, returned to the system when freed,
unless the allocation is larger than the *mmap threshold*. That threshold
is dynamic: each time such a block is freed, glibc raises it to the block's
size (up to 32 MiB), so after a few batches the same tensors come from the
heap instead, whose freed pieces are kept and fragment as sentence lengths
vary. Peak memory then grows with the number of batches: measured on
``probing score`` with all-MiniLM-L6-v2, en_ewt dev four times over peaked
1.027 times higher than en_ewt dev once. Holding the threshold at glibc's
own starting value (128 KiB) turns the dynamic rule off, and the peak stays
flat (``python benchmarks/run.py``, section 3, prints the ratio).

A user's ``MALLOC_MMAP_THRESHOLD_`` (glibc's own variable) wins; off glibc
(macOS, musl) nothing is changed.

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

THRESHOLD_BYTES = 128 * 1024
"""glibc's default starting threshold; fixing it (rather than its value) is what keeps the heap flat."""

_held: list[bool] = []
"""Whether the threshold was held, once decided for this process."""


def hold_mmap_threshold() -> bool:
    """Fix glibc's mmap threshold for this process (once; later calls return the first answer).

    Returns whether it is now held: False off Linux, where glibc's ``mallopt`` is missing or refuses, and
    when ``MALLOC_MMAP_THRESHOLD_`` is set (the user has chosen; glibc has applied it already)."""
    if not _held:
        _held.append(_hold())
    return _held[0]


def _hold() -> bool:
    if not sys.platform.startswith("linux") or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # no C library symbols in this process, or one without mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, THRESHOLD_BYTES) == 1  # glibc returns 1 on success; musl's stub returns 0
