"""The input side of a pass: which units, cut into which chunks, made into batches here or in worker processes.

A pass reads its units in order, keeps those of its shard, skips the ones a
resumed run has counted, and cuts the rest into chunks of ``batch_size *
CHUNK_BATCHES`` units; each chunk is tokenised, aligned, length-sorted and
padded into batches (probing.engine.batching). :func:`prepared_chunks` makes
those chunks either in this process (``workers=0``) or in ``workers``
processes, as torch's DataLoader does: every worker reads the same stream
(reading is deterministic), makes the chunks whose position modulo
``workers`` is its number, and the DataLoader hands them back in position
order. The chunks, and so the batches, are identical whatever the number of
workers; so are the counts.

Each of two or more workers reads a treebank (not as segment pairs) lazily: it splits every
sentence's lines out of the file (checking the lines themselves: encoding,
BOM, CR) and numbers the sentences, but parses and checks only those of its
own chunks, and those in no chunk (past ``limit``, of other shards, counted
before a resume). So the workers share the parsing, the costliest part of
reading, instead of each doing all of it.

An error in a worker (a malformed line: ``file:line: what``) comes back as
the exception itself, at the position where the input would have raised it
in this process, and is raised here: the same one line, after exactly the
batches this process would have made before it. (A parse error comes from
the worker that owns its chunk; where a worker's reading stops first, at a
line or at a sentence in no chunk, it reads the input once more eagerly to
find the error this process would have stopped at, which may lie in a
sentence it had left to another worker.)

A worker that dies (killed by a signal: the system's out-of-memory killer
sends SIGKILL) stops the pass with :class:`InputWorkerStopped`, naming the
worker, its process and the signal, wherever in the main process torch
notices it (:func:`stopped_input_worker`): not an internal error, since
nothing in probing went wrong, and a checkpoint written before it lets
``--resume`` continue with identical counts. A system that refuses to start
the workers at all (a cap on processes) is one line naming ``--workers``.

>>> from probing.data.inputs import InputSource, sample_treebank_path
>>> from probing.testing import tiny_wordpiece_tokenizer
>>> plan = ChunkPlan(InputSource.treebank(str(sample_treebank_path()), limit=40), batch_size=8, max_length=64)
>>> [len(chunk.units) for chunk in prepared_chunks(plan, tiny_wordpiece_tokenizer(), workers=0)]
[40]
"""

from __future__ import annotations

import gc
import io
import itertools
import os
import pickle
import re
import signal
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import torch

from probing.compiling import load_compiler
from probing.data.inputs import InputSource, Unit
from probing.engine.batching import CHUNK_BATCHES, Batch, batches_of_chunk
from probing.errors import ProbingError
from probing.results.pass_statistics import BatchStats

WORKER_PREFETCH = 2
"""Chunks each worker makes ahead of the model (DataLoader's prefetch_factor)."""


@dataclass
class PreparedChunk:
    """One chunk made ready: its units (too-long ones too), its batches (numbered from 0 within the chunk), what
    batching saw in it alone, and its position in the pass's stream of chunks."""

    units: list[Unit]
    batches: list[Batch]
    stats: BatchStats
    position: int


@dataclass(frozen=True)
class ChunkPlan:
    """Everything that decides a pass's chunks: what every worker needs to make the same ones."""

    source: InputSource
    batch_size: int
    max_length: int
    shard: tuple[int, int] | None = None
    done: int = 0
    """Units of the selected stream already counted (a resumed run skips them)."""
    prepend: int | None = None
    preparers: tuple = ()
    """Accumulators whose ``prepare(batch)`` runs here, on the input side, into ``batch.prepared``."""

    def chunks(self, *, lazy: bool = False) -> Iterator[list[Unit]]:
        """The pass's chunks in order. ``lazy``: of :class:`PendingUnit` where the input is a treebank (those of
        other shards, and those a resumed run skips, are parsed here all the same, so every line is checked)."""
        selected = selected_units(self.source.units(lazy=lazy), self.shard)
        return chunked(_skipping(selected, self.done), self.batch_size * CHUNK_BATCHES)

    def first_error(self) -> Exception:
        """The error an eager read of the pass's chunks stops at (a worker's lazy read met one; this is the one
        the main process reading alone would have raised). Costs one more read, on the way to an error only."""
        try:
            for _ in self.chunks():
                pass
        except Exception as error:
            return error
        raise RuntimeError("a lazy read of the input failed where an eager read does not")  # a bug if reached

    def prepare(self, chunk: list[Unit], tokenizer, position: int) -> PreparedChunk:
        chunk = [unit.parsed() for unit in chunk]  # every sentence checked before any is tokenised, as when read
        stats = BatchStats()
        batches = list(batches_of_chunk(chunk, tokenizer, batch_size=self.batch_size, max_length=self.max_length,
                                        stats=stats, prepend=self.prepend))
        for batch in batches:
            for preparer in self.preparers:
                batch.prepared.update(preparer.prepare(batch))
        return PreparedChunk(chunk, batches, stats, position)


def prepared_chunks(plan: ChunkPlan, tokenizer, *, workers: int = 0) -> Iterator[PreparedChunk]:
    """The plan's chunks in order, made here (``workers`` 0) or in that many worker processes.

    With workers, ``plan.source.units_total`` is set here once the workers have read the input to its end, as
    reading it here would set it."""
    if workers == 0:
        for position, chunk in enumerate(plan.chunks()):
            yield plan.prepare(chunk, tokenizer, position)
        return
    yield from _from_workers(plan, tokenizer, workers)


def _from_workers(plan: ChunkPlan, tokenizer, workers: int) -> Iterator[PreparedChunk]:
    from torch.utils.data import DataLoader

    # A tokenizer that has used its own threads warns in every forked worker unless told not to use them; the
    # workers are the parallelism here.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    load_compiler()  # once here, not once in every worker: the workers' bootstrap weights are compiled draws
    loader = DataLoader(_WorkerChunks(plan, tokenizer), batch_size=None, num_workers=workers, collate_fn=_as_made,
                        prefetch_factor=WORKER_PREFETCH, worker_init_fn=_freeze_inherited)
    try:
        chunks = iter(loader)
    except OSError as error:  # fork refused: a cap on processes (ulimit -u, a container's pids.max), or memory
        processes = "a worker process" if workers == 1 else f"{workers} worker processes"
        raise ProbingError(f"the system refused to start {processes} ({error.strerror or error}); give fewer, or 0 "
                           "to read in this process", source="--workers") from None
    _RUNNING.append(chunks)
    try:
        expected = 0
        for packed in _watched(chunks):
            item = _unpacked(packed)
            if isinstance(item, _InputEnd):
                plan.source.units_total = item.units_total
                return
            if isinstance(item, _WorkerFailure):
                raise item.error
            if item.position != expected:  # DataLoader keeps the order of its workers' turns; a bug if not
                raise RuntimeError(f"chunk {item.position} came from the workers where chunk {expected} was due")
            expected += 1
            yield item
    finally:
        _RUNNING.remove(chunks)
        # Let go of the iterator now, so that it stops its workers now. Kept alive by a caught error's
        # traceback, it would stop them only when the garbage collector reached it, and there each worker that
        # had not finished waited out DataLoader's 5-second join before it was killed.
        del chunks


_RUNNING: list = []
"""The DataLoader iterators whose workers are making chunks now: where :func:`stopped_input_worker` looks."""


class InputWorkerStopped(ProbingError):
    """A ``--workers`` process died before the input's end (its message says which, and how)."""


def _watched(chunks) -> Iterator:
    """``chunks``, a worker's death noticed while waiting for one raised as :class:`InputWorkerStopped`."""
    while True:
        try:
            packed = next(chunks)
        except StopIteration:
            return
        except RuntimeError as error:
            stopped = stopped_input_worker(chunks, error)
            if stopped is None:
                raise
            raise stopped from None
        yield packed


def stopped_input_worker(chunks=None, error: BaseException | None = None) -> InputWorkerStopped | None:
    """What became of the first worker process that is no longer running (of ``chunks``, else of every
    DataLoader making chunks now), or None when all are alive. Torch raises a bare RuntimeError when it notices
    a dead worker, from its SIGCHLD handler, so wherever the main process happens to be (in the model, say):
    the pass asks here whether that error was a worker's death.

    The message names the worker (from 1), its process id and its signal; SIGKILL is what the out-of-memory
    killer sends, so it says that memory probably ran out. Given torch's ``error`` for a killed worker, its
    process and signal are read from it where the process's own exit status is not to be had (seen once in
    a few hundred kills: torch had noticed the death, the process object had no exit status yet).

    >>> stopped = stopped_input_worker(error=RuntimeError("DataLoader worker (pid 41) is killed by signal: Killed. "))
    >>> stopped.message.split(",")[0]
    'input worker (process 41) was killed by SIGKILL'
    """
    running_now = [chunks] if chunks is not None else list(_RUNNING)
    for running in running_now:
        processes = getattr(running, "_workers", [])  # torch's own list of its worker processes
        for number, process in enumerate(processes, start=1):
            code = process.exitcode
            if code is None or code == 0:
                continue
            which = f"input worker {number} of {len(processes)} (process {process.pid})"
            if code > 0:
                return InputWorkerStopped(f"{which} stopped with exit status {code}", source="--workers")
            return _killed(which, -code)
    killed = re.fullmatch(r"DataLoader worker \(pid (\d+)\) is killed by signal: (.+?)\.?\s*", str(error or ""))
    if killed:  # torch's message gives the signal as strsignal's text ("Killed")
        number = next((value for value in signal.valid_signals() if signal.strsignal(value) == killed[2]), None)
        which = next((f"input worker {index} of {len(processes)} (process {killed[1]})"
                      for processes in (getattr(running, "_workers", []) for running in running_now)
                      for index, process in enumerate(processes, start=1) if str(process.pid) == killed[1]),
                     f"input worker (process {killed[1]})")
        return _killed(which, number, killed[2])
    return None


def _killed(which: str, number: int | None, text: str = "") -> InputWorkerStopped:
    """``which`` worker was killed by signal ``number`` (None: unknown, ``text`` its description)."""
    try:
        name = signal.Signals(number).name
    except (TypeError, ValueError):
        name = f"signal {number}" if number is not None else f"a signal ({text})"
    why = (", which is what the system's out-of-memory killer sends: memory probably ran out (fewer "
           "--workers or a smaller --batch-size need less)") if number == signal.SIGKILL else ""
    return InputWorkerStopped(f"{which} was killed by {name}{why}", source="--workers")


def _freeze_inherited(_worker_id: int) -> None:
    """In a new worker: every object it inherited from the main process (the model, torch, transformers) out of
    the garbage collector's reach. They outlive the worker anyway; scanned by every full collection that a
    chunk's many small objects set off, they cost the worker time, and the writes to their headers copy the
    pages the fork had shared."""
    gc.freeze()


class _WorkerChunks(torch.utils.data.IterableDataset):
    """In worker ``k`` of ``n``: the chunks at positions ``k``, ``k + n``, ...; then the end of the input (or the
    error that stopped reading it) at the worker's next turn."""

    def __init__(self, plan: ChunkPlan, tokenizer) -> None:
        self.plan, self.tokenizer = plan, tokenizer

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        mine, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        # Read lazily, each of several workers parses only the sentences of its own chunks (prepare parses them),
        # not the whole input; one worker parses them all, at less cost as it reads. A failure is raised in the
        # main process, in this worker's turn (the module docstring).
        lazy = workers > 1
        chunks = enumerate(self.plan.chunks(lazy=lazy))
        while True:
            try:
                position, chunk = next(chunks, (None, None))
            except Exception as error:
                # Reading stopped, at a line or at a sentence outside every chunk; read lazily, a sentence read
                # before it but left to another worker may hold an earlier error, which an eager read would have
                # stopped at first. Read eagerly, this is that error.
                yield _packed(_WorkerFailure(self.plan.first_error() if lazy else error))
                return
            if chunk is None:
                break
            if position % workers == mine:
                try:
                    prepared = self.plan.prepare(chunk, self.tokenizer, position)
                except Exception as error:
                    yield _packed(_WorkerFailure(error))
                    return
                yield _packed(prepared)
        yield _packed(_InputEnd(self.plan.source.units_total))


class _ArraysPickler(pickle.Pickler):
    """Pickles a tensor as the numpy array it views: its bytes travel in the pickle itself."""

    def reducer_override(self, obj):
        if isinstance(obj, torch.Tensor) and obj.device.type == "cpu" and not obj.requires_grad:
            try:
                return torch.from_numpy, (obj.numpy(),)
            except TypeError:  # a dtype numpy lacks (bfloat16): torch's own reduction
                return NotImplemented
        return NotImplemented


def _packed(item) -> bytes:
    """``item`` as one bytes object for the trip to the main process.

    Handed over as they are, a chunk's tensors would each go through torch's shared-memory handover (a file
    descriptor and a mapping per tensor, hundreds per chunk), which cost the main process more than the worker
    saved it (benchmarks/RESULTS.md, "After the workers' handover"); as bytes in one pickle they
    cost one copy.

    >>> pickle.loads(_packed({"ids": torch.tensor([1, 2])}))["ids"].tolist()
    [1, 2]
    """
    buffer = io.BytesIO()
    _ArraysPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(item)
    return buffer.getvalue()


def _unpacked(packed: bytes):
    """The item :func:`_packed` made, the garbage collector held off meanwhile: a chunk is some hundred thousand
    small objects (its words, tags, tuples), and every collection their creation sets off would walk all the
    objects the main process holds (the model's too), which took five times as long as the unpickling."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(packed)
    finally:
        if enabled:
            gc.enable()


@dataclass
class _WorkerFailure:
    error: Exception


@dataclass
class _InputEnd:
    units_total: int | None


def _as_made(item):
    """DataLoader's collate step: the worker's item as it is (a chunk is not a batch of samples)."""
    return item


def selected_units(units: Iterable[Unit], shard: tuple[int, int] | None) -> Iterator[Unit]:
    """The units of this shard: membership depends on the unit's index alone, so shards are
    disjoint and together cover the input, whatever the batch size. (Other shards' units are parsed, if pending:
    a pass checks every line.)"""
    for unit in units:
        if shard is None or unit.index % shard[1] == shard[0]:
            yield unit
        else:
            unit.parsed()


def _skipping(units: Iterable[Unit], done: int) -> Iterator[Unit]:
    """``units`` after the first ``done`` (a resumed run has counted them), those parsed all the same."""
    units = iter(units)
    for unit in itertools.islice(units, done):
        unit.parsed()
    yield from units


def chunked(units: Iterable[Unit], size: int) -> Iterator[list[Unit]]:
    """Consecutive lists of ``size`` units (the last one shorter)."""
    chunk: list[Unit] = []
    for unit in units:
        chunk.append(unit)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def prefetched(items: Iterator, depth: int) -> Iterator:
    """``items`` produced by a background thread, at most ``depth`` chunk ends ahead of the consumer.

    The producer's exceptions (a malformed line late in a treebank) are raised in the consumer, in
    order, after every item made before them; the consumer leaving early stops the producer.
    """
    import queue
    import threading

    slots = threading.BoundedSemaphore(depth)
    handoff: queue.Queue = queue.Queue()
    stop = threading.Event()
    end = object()

    def produce() -> None:
        try:
            for item in items:
                if not isinstance(item, Batch):
                    while not slots.acquire(timeout=0.1):
                        if stop.is_set():
                            return
                handoff.put(item)
                if stop.is_set():
                    return
            handoff.put(end)
        except BaseException as error:  # handed to the consumer, raised there
            handoff.put(_Failure(error))

    thread = threading.Thread(target=produce, name="probing-batches", daemon=True)
    thread.start()
    try:
        while True:
            item = handoff.get()
            if item is end:
                return
            if isinstance(item, _Failure):
                raise item.error
            yield item
            if not isinstance(item, Batch):
                slots.release()
    finally:
        stop.set()
        thread.join()


@dataclass
class _Failure:
    error: BaseException
