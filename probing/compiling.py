"""The one place numba is set up: loops over small matrices compiled for CPUs.

Some of probing's work is many tiny matrices (a head's word attention, a
sentence's tree), where a tensor library spends more time launching its
small operations than doing them. Those loops are written plainly and
compiled with :func:`compiled` (numba's ``njit``: cached beside the module
that defines them, compiled a few seconds once; ``nogil``, so the thread that
reads the input keeps running meanwhile). Without numba they stay plain
Python: correct, far too slow for real use; :data:`COMPILED` says which, and
callers pick their tensor code instead where it is False.

A kernel is a plain function under ``@compiled`` in its own module (a
function typed at a prompt has no file to cache beside, so none is shown
here); numba is a dependency, so on an installed probing:

>>> COMPILED
True
"""

from __future__ import annotations

try:
    import numba

    compiled = numba.njit(cache=True, nogil=True)
    COMPILED = True
except ImportError:  # pragma: no cover - numba is a dependency; callers fall back to their tensor code

    def compiled(function):
        return function

    COMPILED = False


def load_compiler() -> None:
    """Load what numba's CPU target loads at the first compiled call of a process (its registries of numpy
    functions, which import scipy's BLAS): about a third of a second. A process about to fork workers calls this
    first, so that every worker inherits it instead of paying it again (probing.engine.feeding).

    >>> load_compiler()
    """
    if COMPILED:
        from numba.core.registry import cpu_target

        cpu_target.target_context.refresh()
