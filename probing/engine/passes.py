"""The one attention pass under every analysis.

A pass streams the units of an input through a loaded model, batch by batch,
and hands each batch's attention to a list of *accumulators*: the probe's
counts, the surface statistics, head divergences, pattern shares, tree
counts, coreference counts, ... Each accumulator implements one protocol:

- ``update(view)``: add one batch (``view`` is a :class:`BatchView`: the
  batch, its token attention under the chosen reading, and the word
  attention and head predictions computed once for all accumulators);
- ``merge(other)``: add another part's accumulator (shards, processes,
  resumed runs);
- ``state()`` / ``load_state(state)``: every number it holds, as tensors,
  for checkpoints;
- ``result()``: the analysis's payload in a result file.

What an accumulator reads decides how much of the model's attention a pass
holds at once (``reads``): ``"attention"``, the token attention of every
layer (``view.attention``); ``"predictions"``, only each head's predicted
heads (``view.predictions``), which the pass makes one layer at a time as the
layer's attention exists; ``"layers"``, one layer's token attention at a time
(``update_layer``, then ``update_batch`` once per batch). When no accumulator
of a pass reads ``"attention"``, the pass holds one layer's token attention,
never the model's: for a 2,048-token unit through a 30-layer, 9-head model,
151 MB instead of 4.5 GB in float32.

Because all of them run on this one loop, every analysis gets the same
batching (length-sorted, the attention-cell cap, the sink token, max
length), every input form, every attention reading, ``--shard I/N``,
``torchrun`` and checkpoint/resume, at no cost of its own.

>>> from probing.data.inputs import InputSource, sample_treebank_path
>>> from probing.model.loading import load_model
>>> from probing.testing import tiny_bert
>>> class Rows(Accumulator):
...     analysis = "rows"
...     def __init__(self):
...         super().__init__()
...         self.state_tensors = {"rows": torch.zeros((), dtype=torch.long)}
...     def update(self, view):
...         self.state_tensors["rows"] += int(view.batch.attention_mask.sum())
>>> rows = Rows()
>>> stats = run_pass(load_model(tiny_bert()), InputSource.treebank(str(sample_treebank_path()), limit=5), [rows])
>>> stats.units_used, int(rows.state_tensors["rows"]) > 5
(5, True)
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property

import torch

from probing.data.inputs import InputSource, Unit
from probing.engine.batching import Batch
from probing.engine.counts import Counts
from probing.engine.feeding import ChunkPlan, InputWorkerStopped, prepared_chunks, stopped_input_worker
from probing.engine.pooling import WordPooling, check_from_pooling
from probing.engine.predictions import HeadPrediction
from probing.engine.progress import progress_bar
from probing.errors import ProbingError
from probing.model.loading import LoadedModel
from probing.results.pass_statistics import BatchStats, PassStats


class Accumulator(Counts):
    """What an analysis adds up over a pass (see the module docstring for the protocol).

    ``merge``, ``state`` and ``load_state`` are :class:`probing.engine.counts.Counts`': by default over the
    tensors of ``self.state_tensors`` (a dict of tensors that add up), with ``identity`` as the options two parts
    must share; an accumulator that keeps its counts in count objects names them in ``count_parts``. ``fresh`` works
    for accumulators that keep every number in ``state_tensors`` and everything else in options that never
    change.
    ``needs_attention`` False means the accumulator runs the model itself
    (ablation, gradients): the pass then skips its own forward pass.
    """

    analysis = ""
    needs_attention = True
    reads = "attention"
    """``"attention"`` (every layer's token attention), ``"predictions"`` or ``"layers"`` (module docstring)."""

    def __init__(self) -> None:
        self.state_tensors: dict[str, torch.Tensor] = {}

    def prepare(self, batch: Batch) -> dict:
        """What this accumulator can make from a batch's units alone, before the model runs: made on the input
        side (the batching thread, or a ``--workers`` process) and found in ``batch.prepared`` under the
        returned keys (a key names what was made, so accumulators that need the same share it). Default:
        nothing."""
        return {}

    def update(self, view: "BatchView") -> None:
        """Add one batch (every layer of ``view``). An accumulator that reads ``"layers"`` gets it as
        ``update_layer`` for each layer, then ``update_batch``."""
        if self.reads != "layers":
            raise NotImplementedError
        for layer in range(view.attention.shape[1]):
            self.update_layer(view.layer(layer), layer)
        self.update_batch(view)

    def update_layer(self, view: "BatchView", layer: int) -> None:
        """Add one layer of one batch: ``view.attention`` [batch, 1, head, query, key] is layer ``layer``."""
        raise NotImplementedError

    def update_batch(self, view: "BatchView") -> None:
        """After every layer of a batch: what is counted once per batch (``view.attention`` may be None)."""

    def identity(self) -> dict:
        """The options that decide this accumulator's numbers (checkpoints refuse others)."""
        return {"analysis": self.analysis}

    # -- counts (probing.engine.counts): every number in ``state_tensors``, options in ``identity`` ---------------

    @property
    def counts_name(self) -> str:
        return f"{self.analysis} counts"

    def count_values(self) -> dict:
        return self.state_tensors

    def set_count(self, name: str, value) -> None:
        self.state_tensors[name] = value

    def count_options(self) -> dict:
        return self.identity()

    def fresh(self) -> "Accumulator":
        """An empty accumulator with the same options."""
        empty = copy.copy(self)
        empty.state_tensors = {name: torch.zeros_like(tensor) for name, tensor in self.state_tensors.items()}
        return empty

    def result(self) -> dict:
        """The analysis's payload; the default is its encoded state, from which merges rebuild it."""
        return {"state": self.encoded_state()}

    def encoded_state(self) -> dict:
        from probing.results.schema.arrays import encode_array

        return {name: encode_array(tensor.numpy()) for name, tensor in self.state().items()}

    @classmethod
    def from_result(cls, result: dict) -> "Accumulator":
        """The accumulator a (validated) result file was made from, for ``probing merge``."""
        from probing.results.schema.arrays import decode_array

        accumulator = cls.for_result(result)
        return accumulator.load_state({name: torch.from_numpy(decode_array(encoded).copy())
                                       for name, encoded in result["state"].items()})

    @classmethod
    def for_result(cls, result: dict) -> "Accumulator":
        """An empty accumulator with the options a result file records."""
        raise NotImplementedError(f"{cls.__name__} cannot be rebuilt from a result file")


class BatchView:
    """One batch as the accumulators see it; derived tensors are computed once, on first use.

    ``attention``: float32 [batch, layer, head, query, key] under the pass's
    reading (None when no accumulator needs it); ``word_attention``: [batch,
    layer, head, word, word]; ``predictions``: long [batch, direction, layer,
    head, word].
    """

    def __init__(self, batch: Batch, attention: torch.Tensor | None, loaded: LoadedModel, pool_from: str = "mean",
                 reading: str = "weights", shared: dict | None = None):
        self.batch, self.attention, self.loaded, self.pool_from = batch, attention, loaded, pool_from
        self.reading = reading
        self._shared = {} if shared is None else shared  # what the batch's layer views share: pooling, masks

    def layer(self, index: int) -> "BatchView":
        """The view of one layer: attention [batch, 1, head, query, key]."""
        return self.of_layer(self.attention[:, index : index + 1])

    def of_layer(self, attention: torch.Tensor) -> "BatchView":
        """A view of the same batch holding one layer's ``attention`` [batch, 1, head, query, key]; its
        pooling maps and prediction masks are made once for all the batch's layers."""
        return BatchView(self.batch, attention, self.loaded, self.pool_from, self.reading, self._shared)

    @cached_property
    def word_attention(self) -> torch.Tensor:
        if "pooling" not in self._shared:
            self._shared["pooling"] = WordPooling(self.batch.word_of_token, self.pool_from)
        return self._shared["pooling"](self.attention)

    @cached_property
    def predictions(self) -> torch.Tensor:
        if "prediction" not in self._shared:
            self._shared["prediction"] = HeadPrediction(self.batch.num_words)
        return self._shared["prediction"](self.word_attention)


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


@dataclass
class Pass:
    """A pass in progress: what the hooks (processes, checkpoints) need to see of it."""

    loaded: LoadedModel
    source: InputSource
    accumulators: Sequence[Accumulator]
    options: PassOptions
    stats: PassStats = field(default_factory=PassStats)
    batching: BatchStats = field(default_factory=BatchStats)
    """What batching has seen so far (it may run ahead of the model)."""
    batching_counted: BatchStats = field(default_factory=BatchStats)
    """What batching had seen at the end of the last chunk the model finished (checkpoints save this)."""

    def identity(self) -> dict:
        """Everything that decides this pass's numbers (the device only moves floats at near-ties)."""
        from probing.results.io import model_identity
        from probing.version import __version__

        options = {key: value for key, value in asdict(self.options).items()
                   if key not in ("progress", "description", "prefetch", "workers")}
        return {
            "tool": __version__,
            "model": model_identity(self.loaded),
            "input": {"sha256": self.source.sha256, "kind": self.source.kind, "pairs": self.source.pairs,
                      "limit": self.source.limit, "half": getattr(self.source, "half", None)},
            "options": _plain(options),
            "accumulators": _plain({f"{index}.{accumulator.analysis}": accumulator.identity()
                                    for index, accumulator in enumerate(self.accumulators)}),
        }


class PassHooks:
    """Where a pass is split across processes and saved; the default: one process, nothing saved.

    ``start`` returns how many units of the selected stream are already
    counted (0 unless resuming); ``owns`` says whether this process counts a
    batch; ``chunk_done`` runs after each chunk of ``batch_size *
    CHUNK_BATCHES`` units; ``finish`` merges what the processes counted.
    """

    def start(self, run: Pass) -> int:
        return 0

    def owns(self, number: int) -> bool:
        return True

    def chunk_done(self, run: Pass, chunk: list[Unit]) -> None:
        pass

    def finish(self, run: Pass) -> None:
        pass

    def resume_hint(self) -> str:
        """How to go on after the pass stopped before its end through no fault of the input (a worker killed):
        here nothing was saved, so the run starts again."""
        return "nothing of the run was saved (a checkpoint needs --output or --checkpoint): run it again"


_HOOKS: contextvars.ContextVar[PassHooks | None] = contextvars.ContextVar("probing_pass_hooks", default=None)


def current_hooks() -> PassHooks:
    """The hooks of the enclosing :func:`using_hooks` block, else the single-process default."""
    return _HOOKS.get() or PassHooks()


@contextlib.contextmanager
def using_hooks(hooks: PassHooks) -> Iterator[PassHooks]:
    """Every pass inside the block uses ``hooks`` (a command may make several passes)."""
    token = _HOOKS.set(hooks)
    try:
        yield hooks
    finally:
        _HOOKS.reset(token)


def require_units(stats, source, options: PassOptions) -> None:
    """A pass that scored nothing is an error, not an empty result."""
    if stats.units_used:
        return
    if stats.units_in_part == 0:
        where = f"shard {options.shard[0]}/{options.shard[1]}" if options.shard else "the input"
        raise ProbingError(f"{where} holds no unit to score ({stats.units_total} in the file)", source=str(source.path))
    raise ProbingError(
        f"all {stats.units_in_part} units are longer than {stats.max_length} tokens (the model's limit, or "
        "--max-length); nothing was scored",
        source=str(source.path),
    )


def run_pass(
    loaded: LoadedModel,
    source: InputSource,
    accumulators: Sequence[Accumulator],
    options: PassOptions = PassOptions(),
    *,
    hooks: PassHooks | None = None,
) -> PassStats:
    """Stream ``source`` through ``loaded`` into ``accumulators``; return what the pass saw.

    Units are read, validated and batched as the model consumes them; a
    malformed line anywhere in the input stops the pass with its file:line
    error before any result exists.
    """
    from probing.engine.readings import READINGS

    started = time.perf_counter()
    hooks = hooks or current_hooks()
    reading = READINGS[options.attention]
    run = Pass(loaded, source, accumulators, options)
    run.stats.max_length = loaded.max_length(options.max_length)
    needs_attention = any(accumulator.needs_attention for accumulator in accumulators)
    done = hooks.start(run)
    in_thread = options.prefetch and not options.workers  # workers make their chunks ahead by themselves
    tokenizer = loaded.producer_tokenizer if in_thread else loaded.tokenizer
    work = _prepared(run, done, tokenizer)
    if in_thread:
        work = prefetched(work, depth=PREFETCH_CHUNKS)
    with _stopped_workers_explained(hooks), reading.attached(loaded), _attention_held(loaded, accumulators), \
            _tokenising_on_one_core(loaded, in_thread), _progress(options, source, done) as bar:
        shown = 0  # units of the current chunk the progress has shown: a chunk of a slow model can take minutes
        for item in _timed_waits(work, run.stats):
            if isinstance(item, Batch):
                if hooks.owns(item.number):
                    _count(run, item, reading if needs_attention else None)
                bar.update(len(item))
                shown += len(item)
            else:  # the end of a chunk: its units are all counted (those skipped as too long too)
                run.batching_counted = item.batching
                bar.update(len(item.units) - shown)
                shown = 0
                hooks.chunk_done(run, item.units)
    run.stats.units_total = source.units_total or 0
    run.stats.add(run.batching)
    run.stats.seconds_total += time.perf_counter() - started
    hooks.finish(run)
    return run.stats


@contextlib.contextmanager
def _stopped_workers_explained(hooks: PassHooks) -> Iterator[None]:
    """A ``--workers`` process that died ends the pass in one line saying which one, how (the signal: SIGKILL is
    the out-of-memory killer's) and how to go on (``hooks.resume_hint``), instead of torch's bare RuntimeError,
    which its SIGCHLD handler raises wherever the main process is, the model's forward pass included."""
    try:
        yield
    except (InputWorkerStopped, RuntimeError) as error:
        stopped = error if isinstance(error, InputWorkerStopped) else stopped_input_worker()
        if stopped is None:
            raise
        raise ProbingError(f"{stopped.message}; {hooks.resume_hint()}", source=stopped.source) from None


def _timed_waits(items: Iterator, stats: PassStats) -> Iterator:
    """``items``, adding the time spent waiting for each to ``stats.seconds_waiting_for_input``.

    >>> stats = PassStats()
    >>> list(_timed_waits(iter([1, 2]), stats)), stats.seconds_waiting_for_input >= 0
    ([1, 2], True)
    """
    while True:
        started = time.perf_counter()
        item = next(items, _END)
        stats.seconds_waiting_for_input += time.perf_counter() - started
        if item is _END:
            return
        yield item


_END = object()


def _attention_held(loaded: LoadedModel, accumulators: Sequence[Accumulator]):
    """The attention implementation the pass reads with, switched once for the whole pass where every
    accumulator reads the pass's attention; an accumulator that does not (gradients, ablation) runs the model
    itself and must find it as it was loaded, so there each batch's read switches around itself."""
    from probing.model.extraction import fused_throughout

    if accumulators and all(accumulator.needs_attention for accumulator in accumulators):
        return fused_throughout(loaded)
    return contextlib.nullcontext()


@contextlib.contextmanager
def _tokenising_on_one_core(loaded: LoadedModel, in_thread: bool) -> Iterator[None]:
    """While a batching thread feeds a model on the CPU, the fast tokenizer encodes on that one thread.

    Left to itself it spreads each batch over a thread per core (``TOKENIZERS_PARALLELISM``), onto the cores the
    model's own threads are using, whose matrix products then wait for them. With a GPU the cores are free and the
    tokenizer keeps its threads; a value the user set is kept either way.

    >>> import os
    >>> from probing.model.loading import load_model
    >>> from probing.testing import tiny_bert
    >>> os.environ.pop("TOKENIZERS_PARALLELISM", None) and None
    >>> with _tokenising_on_one_core(load_model(tiny_bert()), in_thread=True):
    ...     inside = os.environ["TOKENIZERS_PARALLELISM"]
    >>> inside, os.environ.get("TOKENIZERS_PARALLELISM")
    ('false', None)
    """
    if not in_thread or loaded.device != "cpu" or "TOKENIZERS_PARALLELISM" in os.environ:
        yield
        return
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    try:
        yield
    finally:
        os.environ.pop("TOKENIZERS_PARALLELISM", None)


PREFETCH_CHUNKS = 2
"""Chunks read, tokenised and batched ahead of the model (each is batch_size x CHUNK_BATCHES units)."""


@dataclass(frozen=True)
class ChunkEnd:
    """The end of a chunk: its units, and what batching had seen up to it (checkpoints save that)."""

    units: list[Unit]
    batching: BatchStats


def _prepared(run: Pass, done: int, tokenizer) -> Iterator[Batch | ChunkEnd]:
    """The pass's batches, numbered in order, each chunk's followed by its :class:`ChunkEnd`. Reading,
    validation, alignment and padding all happen here (or in the workers this starts), so that this can run
    ahead of the model in a thread."""
    plan = ChunkPlan(run.source, run.options.batch_size, run.stats.max_length, shard=run.options.shard, done=done,
                     prepend=run.loaded.prepend_token_id, preparers=tuple(run.accumulators))
    number = 0
    for chunk in prepared_chunks(plan, tokenizer, workers=run.options.workers):
        run.batching.add(chunk.stats)
        for batch in chunk.batches:
            batch.number, number = number, number + 1  # the pass's numbering: torchrun deals batches by it
            yield pinned(batch) if run.loaded.device.startswith("cuda") else batch
        yield ChunkEnd(chunk.units, copy.copy(run.batching))


def pinned(batch: Batch) -> Batch:
    """The batch's tensors in page-locked memory, so that their copy to a GPU runs without waiting."""
    for name in ("input_ids", "attention_mask", "word_of_token", "num_words"):
        setattr(batch, name, getattr(batch, name).pin_memory())
    return batch


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


def _count(run: Pass, batch: Batch, reading) -> None:
    """Forward pass (when needed), then every accumulator's update on the same view.

    Layer by layer where no accumulator reads every layer's token attention:
    each layer's attention goes to the ``"layers"`` accumulators and becomes
    that layer's predictions, then is dropped.
    """
    view = BatchView(batch, None, run.loaded, run.options.pool_from, run.options.attention)
    readers = [accumulator for accumulator in run.accumulators if accumulator.needs_attention]
    by_layer = [accumulator for accumulator in readers if accumulator.reads == "layers"]
    if reading is not None and all(accumulator.reads != "attention" for accumulator in readers):
        predictions: list[torch.Tensor] = []  # long [batch, direction, 1, head, word] per layer
        wants_predictions = any(accumulator.reads == "predictions" for accumulator in readers)
        started, counting = time.perf_counter(), [0.0]

        def consume(layer: int, values: torch.Tensor) -> None:  # values [batch, head, query, key]
            begun = time.perf_counter()
            layer_view = view.of_layer(values.unsqueeze(1))
            for accumulator in by_layer:
                accumulator.update_layer(layer_view, layer)
            if wants_predictions:
                # under a device map, layers run on several devices; the batch's predictions meet on the first
                predictions.append(layer_view.predictions.to(run.loaded.device))
            counting[0] += time.perf_counter() - begun

        reading.each_layer(run.loaded, batch, consume)
        run.stats.seconds_model += time.perf_counter() - started - counting[0]
        if wants_predictions:
            view.__dict__["predictions"] = torch.cat(predictions, dim=2)  # the cached property, made by layer
        for accumulator in run.accumulators:
            accumulator.update_batch(view) if accumulator in by_layer else accumulator.update(view)
    else:
        if reading is not None:
            started = time.perf_counter()
            view.attention = reading.read(run.loaded, batch)  # [batch, layer, head, query, key]
            run.stats.seconds_model += time.perf_counter() - started
        for accumulator in run.accumulators:
            accumulator.update(view)
    run.stats.units_used += len(batch)
    run.stats.words += int(batch.num_words.sum())
    run.stats.batches += 1


def _progress(options: PassOptions, source: InputSource, done: int):
    """The pass's progress (probing.engine.progress: a bar on a terminal, lines off one); with a total (and so
    the time left) once the input has been read through (InputSource.validate, or an earlier pass)."""
    return progress_bar(total=source.planned_units(options.shard), initial=done, description=options.description,
                        enabled=options.progress)


def _plain(value):
    """JSON-like copy (tuples become lists), so identities compare equal after a round trip."""
    import json

    return json.loads(json.dumps(value, default=str))
