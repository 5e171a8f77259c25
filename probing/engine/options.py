"""How a pass reads its input (:class:`PassOptions`) and the rules of its options every entry point shares:
``--shard I/N`` (:func:`check_shard`) and ``--workers N`` (:func:`check_workers`)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from probing.engine.pooling import check_from_pooling
from probing.errors import ProbingError


def check_shard(shard: tuple[int, int] | None) -> None:
    """The one rule of ``--shard I/N``: N parts (N >= 1), this part's index I from 0 and below N (None: the
    whole run). The command line, the probe's configuration and the pass all check a shard here.

    >>> check_shard((4, 4))
    Traceback (most recent call last):
    probing.errors.ProbingError: --shard: must be I/N with 0 <= I < N, got 4/4
    """
    from probing.results.schema.bounds import MAX_INTEGER

    if shard is None:
        return
    index, count = shard
    if not (count >= 1 and 0 <= index < count):
        raise ProbingError(f"must be I/N with 0 <= I < N, got {index}/{count}", source="--shard")
    if count > MAX_INTEGER:  # a result records N
        raise ProbingError(f"must have N at most {MAX_INTEGER} (the largest number a result holds), got {count}",
                           source="--shard")


def usable_cores() -> int:
    """The CPU cores this process may run on: its affinity where the system keeps one (a Slurm job's or a
    container's share of the machine), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS and Windows keep no affinity
        return os.cpu_count() or 1


def check_workers(workers: int) -> None:
    """The one rule of ``--workers N``: 0 (the input is read in this process) up to one process per usable core.
    Each worker is a whole process busy reading and tokenising: more of them than cores only wait for each
    other, and a count such as 100000 would ask the system for that many processes before any work.

    >>> check_workers(-1)
    Traceback (most recent call last):
    probing.errors.ProbingError: --workers: must be 0 (read in this process) to ... got -1
    """
    cores = usable_cores()
    if not 0 <= workers <= cores:
        raise ProbingError(f"must be 0 (read in this process) to {cores} (a process per core this process may use), "
                           f"got {workers}", source="--workers")


@dataclass(frozen=True)
class PassOptions:
    """How a pass reads its input: batching, which part, which attention reading. Written into results."""

    batch_size: int = 32
    max_length: int | None = None
    shard: tuple[int, int] | None = None
    attention: str = "weights"
    pool_from: str = "mean"
    progress: bool = False
    description: str = "reading"
    prefetch: bool = True
    """Read, validate and batch ahead of the model in a background thread."""
    workers: int = 0
    """Processes that read, validate and batch ahead of the model instead (probing.engine.feeding); 0: none."""

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ProbingError(f"must be a positive integer, got {self.batch_size}", source="--batch-size")
        check_from_pooling(self.pool_from)
        check_workers(self.workers)
        if self.pool_from == "max" and self.attention == "norms":
            raise ProbingError("max pooling renormalises each word's row, which norm-based attention must not be "
                               "(its rows do not sum to 1 by design); use --pool-from mean or first", source="--pool-from")
        check_shard(self.shard)

    def config(self) -> dict:
        """The part of a result's ``config`` block these options decide."""
        return {
            "attention": self.attention,
            "batch_size": self.batch_size,
            "shard": None if self.shard is None else {"index": self.shard[0], "count": self.shard[1]},
            "pooling": {"to": "sum", "from": self.pool_from},
        }
