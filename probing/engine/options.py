"""How a pass reads its input (:class:`PassOptions`, whose fields are its options) and the rules of its options
every entry point shares: ``--shard I/N`` (:func:`check_shard`) and ``--workers N`` (:func:`check_workers`).
Torch-free, so that the command line lists and checks these options before anything imports torch."""

from __future__ import annotations

import os
from dataclasses import dataclass

from probing.engine.arguments import BadValue, RegistryChoices, option, positive_at_most, positive_int, whole_number
from probing.errors import ProbingError

DEFAULT_BATCH_SIZE = 32
MAX_BATCH_SIZE = 4096
"""The most units a batch may be asked to hold: the engine never makes a larger batch of units of 4 tokens or
more (probing.engine.batching.MAX_ATTENTION_CELLS, 4096 x 4 x 4), and a causal LM's batch of 4096 sentences
already holds gigabytes of next-token scores (pairs)."""

batch_size = positive_at_most(MAX_BATCH_SIZE, "units")
"""``--batch-size``: a positive number of units, at most :data:`MAX_BATCH_SIZE`."""


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


def worker_count(text: str) -> int:
    """``--workers``: 0 (read in this process) up to the cores this process may use.

    >>> worker_count("100000")
    Traceback (most recent call last):
    probing.engine.arguments.BadValue: must be 0 (read in this process) to ... got 100000
    """
    value = whole_number(text)
    try:
        check_workers(value)
    except ProbingError as error:  # the option is named by whoever reads it
        raise BadValue(error.message) from None
    return value


def shard(text: str) -> tuple[int, int]:
    """``"2/8"`` -> ``(2, 8)``: this part's index (from 0) and the number of parts."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise BadValue(f"expected I/N such as 0/4, got {text!r}") from None
    try:
        check_shard((index, count))
    except ProbingError as error:  # the option is named by whoever reads it
        raise BadValue(error.message) from None
    return index, count


@dataclass(frozen=True)
class PassOptions:
    """How a pass reads its input: batching, which part, which attention reading. Written into results."""

    batch_size: int = option(DEFAULT_BATCH_SIZE, type=batch_size, metavar="N", group="batching",
                             help=f"units per batch, at most {MAX_BATCH_SIZE}; long units come in smaller batches "
                                  f"(default: {DEFAULT_BATCH_SIZE})")
    max_length: int | None = option(type=positive_int, metavar="N", group="batching",
                                    help="longest unit in tokens, special tokens included; longer units are skipped "
                                         "and counted, never truncated (default: the model's limit)")
    shard: tuple[int, int] | None = option(type=shard, metavar="I/N", group="long runs",
                                           help="only units whose index modulo N is I; add the parts up with probing "
                                                "merge")
    attention: str = option("weights", choices=RegistryChoices("probing.engine.readings", "READINGS"),
                            metavar="READING", group="attention",
                            help="how attention is read: %(choices)s (default: weights)")
    pool_from: str = option("mean", choices=RegistryChoices("probing.engine.pooling", "FROM_POOLINGS"), metavar="MODE",
                            group="attention", help="attention from a split word: mean of its pieces' rows (the "
                                                    "paper), first piece (the reference code), or max (default: mean)")
    progress: bool = False
    description: str = "reading"
    prefetch: bool = True
    """Read, validate and batch ahead of the model in a background thread."""
    workers: int = option(0, type=worker_count, metavar="N", group="batching",
                          help="processes that read, tokenise and batch the input ahead of the model, for a GPU that "
                               "one thread cannot keep busy, at most one per core this process may use; the counts "
                               "are the same (default: 0, a thread of this process)")
    """Processes that read, validate and batch ahead of the model instead (probing.engine.feeding); 0: none."""

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ProbingError(f"must be a positive integer, got {self.batch_size}", source="--batch-size")
        from probing.engine.pooling import check_from_pooling

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
