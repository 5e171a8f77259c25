"""The one attention pass under every analysis.

A pass streams the units of an input through a loaded model, batch by batch,
and hands each batch's attention to a list of *accumulators*
(probing.engine.accumulator: the protocol, and what ``reads`` decides about
how much attention a pass holds at once), read as its options say
(probing.engine.options).

Because all of them run on this one loop, every analysis gets the same
batching (length-sorted, the attention-cell cap, the sink token, max
length), every input form, every attention reading, ``--shard I/N``,
``torchrun`` and checkpoint/resume, at no cost of its own.

>>> from probing.data.inputs import InputSource, sample_treebank_path
>>> from probing.engine.accumulator import Accumulator
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
import copy
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field

import torch

from probing.data.inputs import InputSource, Unit
from probing.engine.accumulator import Accumulator, BatchView
from probing.engine.batching import Batch
from probing.engine.feeding import ChunkPlan, InputWorkerStopped, prefetched, prepared_chunks, stopped_input_worker
from probing.engine.options import PassOptions
from probing.engine.progress import progress_bar
from probing.errors import ProbingError
from probing.model.loading import LoadedModel
from probing.results.pass_statistics import BatchStats, PassStats


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
            "options": plain_identity(options),
            "accumulators": plain_identity({f"{index}.{accumulator.analysis}": accumulator.identity()
                                    for index, accumulator in enumerate(self.accumulators)}),
        }


class PassHooks:
    """Where a pass is split across processes and saved; the default: one process, nothing saved.

    ``start`` returns how many units of the selected stream are already
    counted (0 unless resuming), whole chunks; ``skipped_batches`` then says
    how many batches of the next chunk were counted too (a save between two
    batches); ``owns`` says whether this process counts a batch;
    ``batch_done`` runs after each batch this process counted,
    ``chunk_done`` after each chunk of ``batch_size * CHUNK_BATCHES`` units;
    ``finish`` merges what the processes counted.
    """

    def start(self, run: Pass) -> int:
        return 0

    def skipped_batches(self) -> int:
        return 0

    def owns(self, number: int) -> bool:
        return True

    def batch_done(self, run: Pass) -> None:
        pass

    def chunk_done(self, run: Pass, chunk: list[Unit]) -> None:
        pass

    def finish(self, run: Pass) -> None:
        pass

    def resume_hint(self) -> str:
        """How to go on after the pass stopped before its end through no fault of the input (a worker killed):
        here nothing was saved, so the run starts again."""
        return "nothing of the run was saved (a checkpoint needs --output or --checkpoint): run it again"


def require_units(stats, source, options: PassOptions, length_option: str | None = None) -> None:
    """A pass that scored nothing is an error, not an empty result. ``length_option``: the option that set the
    pass's longest unit when another than ``--max-length`` did (coref's ``--window``), which the error names."""
    if stats.units_used:
        return
    if stats.units_in_part == 0:
        where = f"shard {options.shard[0]}/{options.shard[1]}" if options.shard else "the input"
        raise ProbingError(f"{where} holds no unit to score ({stats.units_total} in the file)", source=str(source.path))
    if length_option:
        raise ProbingError(
            f"all {stats.units_in_part} units are longer than {stats.max_length} tokens ({length_option} "
            f"{stats.max_length}); nothing was scored: give a larger {length_option}, or leave it out for the "
            "model's limit",
            source=str(source.path),
        )
    raise ProbingError(
        f"all {stats.units_in_part} units are longer than {stats.max_length} tokens (the model's limit, or "
        "--max-length); nothing was scored",
        source=str(source.path),
    )


def run_pass(
    loaded: LoadedModel,
    source: InputSource,
    accumulators: Sequence[Accumulator],
    options: PassOptions | None = None,
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
    options = options or PassOptions()
    hooks = hooks or PassHooks()
    reading = READINGS[options.attention]
    run = Pass(loaded, source, accumulators, options)
    run.stats.max_length = loaded.max_length(options.max_length)
    needs_attention = any(accumulator.needs_attention for accumulator in accumulators)
    done = hooks.start(run)
    skip = hooks.skipped_batches()  # the first chunk's batches counted before a resume (a save between batches)
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
                if skip:  # the same batch as before the resume (its chunk is made alike), already counted
                    skip -= 1
                elif hooks.owns(item.number):
                    _count(run, item, reading if needs_attention else None)
                    hooks.batch_done(run)
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
        stopped = error if isinstance(error, InputWorkerStopped) else stopped_input_worker(error=error)
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


def plain_identity(value):
    """JSON-like copy (tuples become lists), so identities compare equal after a round trip."""
    import json

    return json.loads(json.dumps(value, default=str))
