"""The only place that knows the order of the stages.

treebank -> (shard, limit) -> alignment -> length-sorted batches -> attention
-> word attention -> predictions -> counts. Sentences are read in chunks, so
memory holds one chunk of sentences and one batch of attention at a time.

>>> from probing.testing import tiny_bert, sample_path
>>> run = run_probe(ScoreConfig(model=tiny_bert(), treebank=str(sample_path()), limit=4, bootstrap=0))
>>> run.counts.sentences
4
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import torch
from tqdm.auto import tqdm

from .alignment import AlignedSentence, align_words, maximum_length
from .config import ScoreConfig
from .datasets import resolve_treebank, sha256_of
from .extraction import LoadedModel, attention, default_model_path, load_model
from .pooling import pool_word_attention
from .scoring.counts import BootstrapSpec, ProbeCounts
from .scoring.pairs import collect_pairs
from .scoring.predictions import predict_heads
from .treebank import Sentence, read_treebank

CHUNK_BATCHES = 16
"""Sentences are length-sorted within chunks of this many batches."""

MAX_ATTENTION_CELLS = 1 << 16
"""Cap on batch x tokens^2 per batch, so that long sentences come in small batches
(the attention of one batch is this times layers x heads x 4 bytes: 18 MiB for 6 x 12
heads). Measured on CPU (benchmarks/RESULTS.md): smaller attention batches are no slower
(they stay in cache) and keep the peak memory low and flat however long the treebank."""


@dataclass
class Batch:
    """One padded model batch and the sentences it came from.

    input_ids, attention_mask, word_of_token: [batch, tok] (word_of_token is
    -1 for special and padding tokens); num_words: [batch].
    """

    sentences: list[Sentence]
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    word_of_token: torch.Tensor
    num_words: torch.Tensor


@dataclass
class RunStats:
    sentences_total: int = 0
    sentences_in_part: int = 0
    too_long: int = 0
    unk_substituted_words: int = 0
    seconds_model: float = 0.0
    seconds_total: float = 0.0


@dataclass
class ProbeRun:
    """What a finished run knows; ``results.build_result`` turns it into JSON."""

    config: ScoreConfig
    model: LoadedModel
    treebank_path: Path
    treebank_sha256: str
    max_length: int
    counts: ProbeCounts
    stats: RunStats = field(default_factory=RunStats)


def sample_treebank_path() -> Path:
    """The project's own sample treebank: packaged copy, else the source checkout's."""
    packaged = Path(__file__).parent / "_data" / "sample.conllu"
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parent.parent / "data" / "sample.conllu"


def prepare(config: ScoreConfig) -> tuple[ScoreConfig, Path, LoadedModel]:
    """Validate options, find the treebank and load the model, in that order,
    so that a typo fails in a second rather than after a model download."""
    config = config.validated()
    treebank_path = resolve_treebank(config.treebank) if config.treebank else sample_treebank_path()
    loaded = load_model(
        config.model or default_model_path(),
        revision=config.revision,
        device=config.device,
        dtype=config.dtype,
        random_init=config.random_init,
        seed=config.seed,
        trust_remote_code=config.trust_remote_code,
        attention=config.attention,
    )
    return config, treebank_path, loaded


def run_probe(
    config: ScoreConfig, *, progress: bool = False, loaded: LoadedModel | None = None, hooks: RunHooks | None = None
) -> ProbeRun:
    """Score every head of a model on a treebank (the whole of ``probing score``).

    ``hooks`` split the batches across processes and checkpoint the counts
    (default: those of :func:`using_hooks`, else one process, no checkpoint).
    """
    started = time.perf_counter()
    if loaded is None:
        config, treebank_path, loaded = prepare(config)
    else:
        config = config.validated()
        treebank_path = resolve_treebank(config.treebank) if config.treebank else sample_treebank_path()
    sentences_total = sum(1 for _ in read_treebank(treebank_path))  # validates the whole file first
    counts = ProbeCounts(
        config.relations,
        loaded.num_layers,
        loaded.num_heads,
        offsets=config.offsets,
        bootstrap=BootstrapSpec(config.bootstrap, config.seed) if config.bootstrap else None,
        causal=loaded.is_causal,
    )
    run = ProbeRun(
        config=config,
        model=loaded,
        treebank_path=treebank_path,
        treebank_sha256=sha256_of(treebank_path),
        max_length=maximum_length(loaded.tokenizer, loaded.model.config, config.max_length),
        counts=counts,
    )
    run.stats.sentences_total = sentences_total
    selected = select_sentences(read_treebank(treebank_path), config)
    expected = _expected_in_part(sentences_total, config)
    hooks = hooks or current_hooks()
    done = hooks.start(run)  # sentences of the selected stream a resumed run has already counted
    with tqdm(total=expected, initial=done, unit="sent", disable=not progress, desc="scoring", leave=False) as bar:
        number = 0
        # Chunks of the selected stream start at fixed multiples of the chunk size, so a
        # resumed run (which skips whole chunks) makes exactly the batches of an uninterrupted one.
        for chunk in _chunks(itertools.islice(selected, done, None), config.batch_size * CHUNK_BATCHES):
            batches = make_batches(
                chunk, loaded.tokenizer, run.max_length, config.batch_size, run.stats, prepend=loaded.prepend_token_id
            )
            for batch in batches:
                if hooks.owns(number):
                    count_batch(batch, loaded, counts, config, run.stats)
                number += 1
                bar.update(len(batch.sentences))
            hooks.chunk_done(run, chunk)
        bar.update(expected - bar.n)
    run.stats.seconds_total = time.perf_counter() - started
    hooks.finish(run)
    return run


def _chunks(sentences: Iterable[Sentence], size: int) -> Iterator[list[Sentence]]:
    chunk: list[Sentence] = []
    for sentence in sentences:
        chunk.append(sentence)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class RunHooks:
    """Where a run is split across processes and saved; the default: one process, nothing saved.

    ``run_probe`` calls ``start`` once (it returns how many sentences of the
    selected stream are already counted, 0 unless resuming), ``owns`` for
    every batch (whether this process counts it), ``chunk_done`` after each
    chunk of ``batch_size * CHUNK_BATCHES`` sentences, and ``finish`` at the
    end (e.g. to sum the counts of all processes). See probing.distributed
    and probing.checkpointing.
    """

    def start(self, run: ProbeRun) -> int:
        return 0

    def owns(self, number: int) -> bool:
        return True

    def chunk_done(self, run: ProbeRun, chunk: list[Sentence]) -> None:
        pass

    def finish(self, run: ProbeRun) -> None:
        pass


_HOOKS: contextvars.ContextVar[RunHooks | None] = contextvars.ContextVar("probing_run_hooks", default=None)


def current_hooks() -> RunHooks:
    """The hooks of the enclosing :func:`using_hooks` block, else the single-process default."""
    return _HOOKS.get() or RunHooks()


@contextlib.contextmanager
def using_hooks(hooks: RunHooks) -> Iterator[RunHooks]:
    """Every ``run_probe`` inside the block uses ``hooks`` (a command may run several probes,
    e.g. DEV and TEST of a held-out score, through code that does not pass hooks along)."""
    token = _HOOKS.set(hooks)
    try:
        yield hooks
    finally:
        _HOOKS.reset(token)


def select_sentences(sentences: Iterable[Sentence], config: ScoreConfig) -> Iterator[Sentence]:
    """The first ``limit`` sentences, and of those the ones of this shard.

    Shard membership depends on the sentence index alone, so shards are
    disjoint and together cover every sentence, whatever the batch size.
    """
    for sentence in sentences:
        if config.limit is not None and sentence.index >= config.limit:
            return
        if config.shard is None or sentence.index % config.shard[1] == config.shard[0]:
            yield sentence


def _expected_in_part(total: int, config: ScoreConfig) -> int:
    total = min(total, config.limit) if config.limit is not None else total
    if config.shard is None:
        return total
    index, count = config.shard
    return len(range(index, total, count))


def make_batches(
    sentences: Iterable[Sentence],
    tokenizer,
    max_length: int,
    batch_size: int,
    stats: RunStats,
    prepend: int | None = None,
) -> Iterator[Batch]:
    """Aligned, length-sorted, padded batches; over-long sentences are counted and skipped.

    ``prepend``: a token id put before every sentence as a special token (the
    attention sink of a causal stack, ``LoadedModel.prepend_token_id``)."""
    chunk: list[Sentence] = []
    for sentence in sentences:
        chunk.append(sentence)
        if len(chunk) == batch_size * CHUNK_BATCHES:
            yield from _batches_of_chunk(chunk, tokenizer, max_length, batch_size, stats, prepend)
            chunk = []
    if chunk:
        yield from _batches_of_chunk(chunk, tokenizer, max_length, batch_size, stats, prepend)


def _batches_of_chunk(chunk, tokenizer, max_length, batch_size, stats, prepend=None) -> Iterator[Batch]:
    aligned = align_words(tokenizer, [sentence.words for sentence in chunk], prepend=prepend)
    kept = []
    for sentence, item in zip(chunk, aligned):
        stats.sentences_in_part += 1
        if len(item) > max_length:
            stats.too_long += 1  # skipped, never truncated (spec section 1)
            continue
        stats.unk_substituted_words += item.unk_substituted
        kept.append((sentence, item))
    kept.sort(key=lambda pair: len(pair[1]))
    group: list[tuple[Sentence, AlignedSentence]] = []
    for pair in kept:
        longest = len(pair[1])
        if group and (len(group) == batch_size or (len(group) + 1) * longest**2 > MAX_ATTENTION_CELLS):
            yield _pad(group, tokenizer)
            group = []
        group.append(pair)
    if group:
        yield _pad(group, tokenizer)


def _pad(group: list[tuple[Sentence, AlignedSentence]], tokenizer) -> Batch:
    longest = max(len(item) for _, item in group)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    input_ids = torch.full((len(group), longest), pad_id, dtype=torch.long)  # [batch, tok]
    attention_mask = torch.zeros((len(group), longest), dtype=torch.long)  # [batch, tok]
    word_of_token = torch.full((len(group), longest), -1, dtype=torch.long)  # [batch, tok]
    for row, (_, item) in enumerate(group):
        length = len(item)
        input_ids[row, :length] = torch.tensor(item.input_ids)
        attention_mask[row, :length] = 1
        word_of_token[row, :length] = torch.tensor(item.word_of_token)
    num_words = torch.tensor([len(sentence) for sentence, _ in group])  # [batch]
    return Batch([sentence for sentence, _ in group], input_ids, attention_mask, word_of_token, num_words)


def count_batch(batch: Batch, loaded: LoadedModel, counts: ProbeCounts, config: ScoreConfig, stats: RunStats) -> None:
    """Attention -> word attention -> predictions -> counts, for one batch."""
    started = time.perf_counter()
    token_attention = attention(loaded, batch.input_ids, batch.attention_mask)  # [batch, layer, head, tok, tok]
    stats.seconds_model += time.perf_counter() - started
    word_attention = pool_word_attention(token_attention, batch.word_of_token, config.pool_from)
    del token_attention  # the largest tensor of the run; free it before the next batch
    predictions = predict_heads(word_attention, batch.num_words)  # [batch, direction, layer, head, word]
    pairs = collect_pairs(batch.sentences, config.relations)
    counts.update(
        predictions,
        pairs,
        sentence_indices=[sentence.index for sentence in batch.sentences],
        num_words=batch.num_words.tolist(),
    )

