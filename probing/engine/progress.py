"""What a run shows while it works: the one home of progress, for every command that runs a pass.

On a terminal a pass shows tqdm's bar, redrawn in place and erased when it ends.
Off a terminal (nohup, Slurm, CI: stderr is a file or a pipe) a redrawn bar
would be lost or fill the log with carriage returns, so a run writes plain
lines to stderr instead: one when a stage starts (``loading MODEL ...``, and
each pass by its description: ``selecting on DEV``, ``reporting on TEST``;
writing says ``wrote FILE``), one every :data:`PROGRESS_EVERY_SECONDS`
(units done, rate, time left) and one when a pass ends. A 450 s held-out run
under nohup says what it is doing from its first seconds.

``--no-progress`` (or ``--quiet``, its older name) shows neither; ``--progress``
shows it (the default): a bar on a terminal, lines off one.

>>> import io
>>> log = io.StringIO()
>>> with ProgressLines(total=10, description="reading", every=0.0, stream=log) as shown:
...     shown.update(4)
>>> print(log.getvalue(), end="")
reading: 10 units
reading: 4/10 units, ...
reading: 4 units in ...
"""

from __future__ import annotations

import os
import sys
import time

from tqdm.auto import tqdm

from probing.errors import ProbingError

PROGRESS_EVERY_SECONDS = 30.0
"""Seconds between two progress lines off a terminal; the environment variable :data:`PROGRESS_EVERY_VARIABLE`
sets another (a log that is read live may want 5, a long Slurm job 300)."""

PROGRESS_EVERY_VARIABLE = "PROBING_PROGRESS_EVERY"


def progress_every() -> float:
    """Seconds between progress lines: ``$PROBING_PROGRESS_EVERY`` if set, else :data:`PROGRESS_EVERY_SECONDS`.

    >>> os.environ[PROGRESS_EVERY_VARIABLE] = "soon"
    >>> progress_every()
    Traceback (most recent call last):
    probing.errors.ProbingError: PROBING_PROGRESS_EVERY: must be a number of seconds (0 or more), got 'soon'
    >>> del os.environ[PROGRESS_EVERY_VARIABLE]; progress_every()
    30.0
    """
    given = os.environ.get(PROGRESS_EVERY_VARIABLE)
    if not given:
        return PROGRESS_EVERY_SECONDS
    try:
        value = float(given)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value < float("inf"):
        raise ProbingError(f"must be a number of seconds (0 or more), got {given!r}", source=PROGRESS_EVERY_VARIABLE)
    return value


def format_interval(seconds: float) -> str:
    """``MM:SS`` (``H:MM:SS`` past an hour), as the bar on a terminal writes times.

    >>> format_interval(190), format_interval(3725)
    ('03:10', '1:02:05')
    """
    return tqdm.format_interval(seconds)


def on_terminal(stream=None) -> bool:
    """Whether ``stream`` (stderr) is a terminal, where a bar redrawn in place can be seen."""
    stream = stream or sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)())


def stage(text: str, *, enabled: bool, stream=None) -> None:
    """One line saying a stage has started, off a terminal (on one, the bar or the waiting line says it).

    >>> import io
    >>> log = io.StringIO(); stage("loading tiny ...", enabled=True, stream=log); log.getvalue()
    'loading tiny ...\\n'
    """
    stream = stream or sys.stderr
    if enabled and not on_terminal(stream):
        print(text, file=stream, flush=True)


def timing(text: str, *, enabled: bool, stream=None) -> None:
    """One line saying what a stage took, on a terminal too (a bar is erased when it ends, and leaves no time
    behind); nothing under ``--no-progress`` (``--quiet``), like every other line of progress.

    >>> import io
    >>> log = io.StringIO(); timing("search: 0.1 s", enabled=False, stream=log); log.getvalue()
    ''
    """
    if enabled:
        print(text, file=stream or sys.stderr, flush=True)


def progress_bar(*, total: int | None, initial: int = 0, description: str, enabled: bool, stream=None):
    """What a pass updates with each chunk it has counted: tqdm's bar on a terminal, :class:`ProgressLines` off
    one, a bar that shows nothing when ``enabled`` is false. ``total`` is None until the input has been read
    through once."""
    stream = stream or sys.stderr
    if enabled and not on_terminal(stream):
        return ProgressLines(total=total, initial=initial, description=description, every=progress_every(),
                             stream=stream)
    return tqdm(total=total, initial=initial, unit=" units", disable=not enabled, desc=description, leave=False,
                file=stream)


class ProgressLines:
    """A pass's progress as lines for a log: the start, every ``every`` seconds, the end.

    The rate counts only the units of this run (a resumed run's earlier units are in ``done`` but not in the
    rate), so the time left is what is left of this sitting.
    """

    def __init__(self, *, total: int | None, initial: int = 0, description: str, every: float, stream=None,
                 clock=time.monotonic):
        self.total = total
        self.done = initial
        self.initial = initial
        self.description = description
        self.every = every
        self.stream = stream or sys.stderr
        self.clock = clock
        self.started = self.last = clock()

    def __enter__(self) -> "ProgressLines":
        of = f"{self.total:,} units" if self.total else "units"
        resumed = f" ({self.initial:,} done before)" if self.initial else ""
        self._line(f"{of}{resumed}")
        return self

    def __exit__(self, kind, error, trace) -> None:
        if kind is None:
            self._line(f"{self.done - self.initial:,} units in {format_interval(self.clock() - self.started)}")

    def update(self, units: int) -> None:
        self.done += units
        now = self.clock()
        if now - self.last >= self.every:
            self.last = now
            self._line(self.summary(now))

    def summary(self, now: float) -> str:
        """``done/total units, rate, time left``.

        >>> lines = ProgressLines(total=1000, initial=0, description="reading", every=30, clock=lambda: 0.0)
        >>> lines.done = 240; lines.summary(now=60.0)
        '240/1,000 units, 4.0 units/s, about 03:10 left'
        """
        seconds = max(now - self.started, 1e-9)
        rate = (self.done - self.initial) / seconds
        text = f"{self.done:,}/{self.total:,} units" if self.total else f"{self.done:,} units"
        text += f", {rate:.1f} units/s"
        if self.total and rate > 0:
            text += f", about {format_interval(max(self.total - self.done, 0) / rate)} left"
        return text

    def _line(self, text: str) -> None:
        print(f"{self.description}: {text}", file=self.stream, flush=True)
