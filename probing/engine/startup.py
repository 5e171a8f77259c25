"""The start of a run: the model loads while its inputs are read through, so a bad line costs no model time.

Loading a checkpoint takes seconds (tens of seconds for a large one), and
reading a treebank through takes about as long as its lines. Both happen at
once: the model loads in a background thread while the calling thread
validates every input (:meth:`~probing.data.inputs.InputSource.validate`).
A malformed line anywhere in a file, the last one included, is raised at
once, as its one-line file:line error, without waiting for the model; the
loader, a daemon thread, is left to finish on its own (a process that goes
on, a notebook or a test run, starts its next load only once that one has
ended: loads never overlap, since loading sets process-wide state such as
transformers' log verbosity). Reading the inputs through also gives the
progress bar its total.

While it waits, a terminal shows ``loading MODEL ...`` on stderr; the line
is cleared once the model is ready (or the run fails), like the progress bar
after it. Off a terminal, where a line cannot be erased, the log says
``loaded MODEL in 00:02`` once it has (probing.engine.progress), so that an
input's or the model's error stays the only line.

>>> from probing.data.inputs import InputSource, sample_treebank_path
>>> source = InputSource.treebank(str(sample_treebank_path()))
>>> load_while_validating(lambda: "a model", [source], name="tiny"), source.units_total
('a model', 75)
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from probing.data.inputs import InputSource
from probing.engine.heap import hold_mmap_threshold
from probing.engine.progress import format_interval, on_terminal, progress_every, stage

Loaded = TypeVar("Loaded")

_ONE_LOAD_AT_A_TIME = threading.Lock()
"""Held by the thread that loads; a load abandoned after a bad input line keeps it until it ends."""


def load_while_validating(load: Callable[[], Loaded], sources: Sequence[InputSource], *, name: str,
                          announce: bool = False) -> Loaded:
    """``load()`` in a background thread while every source is validated here; its result.

    An input's error is raised as soon as it is found; the loader's once every input has been read.
    ``announce`` shows ``loading NAME ...`` on stderr while waiting on a terminal, erased once loaded (see
    :func:`waiting`); off one (probing.engine.progress) the log says ``loaded NAME in 00:02`` once it has, and
    every ``$PROBING_PROGRESS_EVERY`` seconds of a long load that it is still loading.
    """
    hold_mmap_threshold()  # before the first batch's tensors: see probing.engine.heap
    outcome: dict[str, object] = {}

    def run_load() -> None:
        try:
            with _ONE_LOAD_AT_A_TIME:
                outcome["loaded"] = load()
        except BaseException as error:  # raised in the caller, below
            outcome["error"] = error

    with waiting(f"loading {name} ...", enabled=announce and on_terminal()):
        loader = threading.Thread(target=run_load, name="probing-load", daemon=True)
        started = time.monotonic()
        loader.start()
        for source in sources:
            source.validate()
        # Off a terminal a line cannot be erased: the log says the model has loaded (and, every
        # PROBING_PROGRESS_EVERY seconds of a long load, that it is still loading), so that a bad input or a
        # model that does not load stays the only line on stderr.
        log = announce and not on_terminal()
        while loader.is_alive():
            loader.join(timeout=max(progress_every(), 1.0) if log else None)
            if loader.is_alive():
                stage(f"loading {name} ... ({format_interval(time.monotonic() - started)} so far)", enabled=log)
    if "error" in outcome:
        raise outcome["error"]
    stage(f"loaded {name} in {format_interval(time.monotonic() - started)}", enabled=log)
    return outcome["loaded"]


def model_name(name_or_path: str | None) -> str:
    """What the loading line calls a model before it is loaded: its folder's name or hub id, the packaged
    default by its name (never the folder it was installed to).

    >>> model_name(None), model_name("bert-base-cased")
    ('all-MiniLM-L6-v2', 'bert-base-cased')
    """
    from probing.model.loading import DEFAULT_MODEL_NAME, display_name

    return DEFAULT_MODEL_NAME if name_or_path is None else display_name(str(name_or_path))


@contextlib.contextmanager
def waiting(text: str, *, enabled: bool, stream=None) -> Iterator[None]:
    """``text`` on stderr while the block runs, erased after it (a terminal's carriage return and
    clear-to-end-of-line), so that what follows, a table or a one-line error, stands alone.

    >>> import io
    >>> shown = io.StringIO()
    >>> with waiting("loading M ...", enabled=True, stream=shown):
    ...     pass
    >>> shown.getvalue()
    'loading M ...\\r\\x1b[K'
    """
    if not enabled:
        yield
        return
    stream = stream or sys.stderr
    stream.write(text)
    stream.flush()
    try:
        yield
    finally:
        stream.write("\r\x1b[K")
        stream.flush()
