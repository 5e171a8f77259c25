"""Units -> padded token batches: the one batcher every analysis uses.

Units are tokenised (words pre-split and aligned to their pieces; raw text as
it is), the attention-sink token of a causal stack is put in front, units
longer than the model's limit are counted and skipped (never truncated), and
the rest are sorted by length within chunks of ``batch_size *
CHUNK_BATCHES`` units and cut into batches of at most ``batch_size`` units
and :data:`MAX_ATTENTION_CELLS` attention cells. Chunks start at fixed
positions of the unit stream, so a resumed run (which skips whole chunks)
makes exactly the batches of an uninterrupted one.

The rule that groups by length (:func:`length_groups`) is also what the minimal pairs' rows are batched by
(probing.analyses.pairs.passes); the right padding of both is probing.model.padding's.

>>> from probing.data.inputs import Unit
>>> from probing.testing import tiny_wordpiece_tokenizer
>>> units = [Unit(0, ("the", "cat", "sat")), Unit(1, ("a", "dog"))]
>>> stats = BatchStats()
>>> [batch.num_words.tolist() for batch in batches_of_chunk(units, tiny_wordpiece_tokenizer(), batch_size=8, max_length=64, stats=stats)]
[[2, 3]]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
import torch

from probing.data.inputs import Unit
from probing.data.treebank import Sentence
from probing.data.windows import WindowRule
from probing.model.alignment import SPECIAL, AlignedSentence, align_word_pairs, align_words
from probing.model.padding import row_layout, row_mask
from probing.results.pass_statistics import BatchStats

CHUNK_BATCHES = 16
"""Units are length-sorted within chunks of this many batches."""

MAX_ATTENTION_CELLS = 1 << 16
"""Cap on batch x tokens^2 per batch, so that long units come in small batches (one batch's
attention is this times layers x heads x 4 bytes: 18 MiB for 6 x 12 heads). Measured on CPU
(benchmarks/RESULTS.md): smaller attention batches are no slower and keep the peak memory flat."""


@dataclass
class Batch:
    """One padded model batch and the units it came from.

    input_ids, attention_mask, word_of_token, segment: long [batch, tok];
    is_special: bool [batch, tok]; num_words: long [batch].
    ``word_of_token`` is the unit's word of each piece (-1 for special tokens,
    padding and raw-text units); ``segment`` is 0 for A, 1 for B, -1 for
    special tokens and padding. ``number`` counts batches from 0 in the pass.
    """

    units: list[Unit]
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    word_of_token: torch.Tensor
    is_special: torch.Tensor
    segment: torch.Tensor
    num_words: torch.Tensor
    number: int = 0
    prepared: dict = field(default_factory=dict)
    """What accumulators made from the units alone on the input side (``Accumulator.prepare``), by key."""

    @property
    def sentences(self) -> list[Sentence]:
        """The sentence of each unit (probe units hold exactly one)."""
        return [unit.sentence for unit in self.units]

    @property
    def indices(self) -> list[int]:
        """Each unit's index in the input: it seeds the bootstrap and decides shards."""
        return [unit.index for unit in self.units]

    @property
    def lengths(self) -> torch.Tensor:
        return self.attention_mask.sum(dim=1)

    def __len__(self) -> int:
        return len(self.units)


@dataclass(frozen=True)
class Encoded:
    """One unit's tokens: ids, word of each piece (-1: special), segment of each piece (-1: special)."""

    input_ids: tuple[int, ...]
    word_of_token: tuple[int, ...]
    segment: tuple[int, ...]
    special: tuple[bool, ...]
    unk_substituted: int = 0
    tokenized_apart: int = 0

    def __len__(self) -> int:
        return len(self.input_ids)


def encode_units(tokenizer, units: Sequence[Unit], *, prepend: int | None = None) -> list[Encoded]:
    """Tokenise units of any kind; ``prepend`` is a token id put first as one more special token."""
    encoded: list[Encoded | None] = [None] * len(units)
    single = [i for i, unit in enumerate(units) if unit.is_split and unit.second is None]
    paired = [i for i, unit in enumerate(units) if unit.is_split and unit.second is not None]
    if single:
        # Running text needs the treebank's spaces (SpaceAfter=No); a unit of bare words has them everywhere.
        spaces = [units[i].sentences[0].space_after if len(units[i].sentences) == 1 else None for i in single]
        aligned = align_words(tokenizer, [units[i].first for i in single], prepend=prepend,
                              spaces=[gap or (True,) * len(units[i].first) for i, gap in zip(single, spaces)])
        for i, item in zip(single, aligned):
            encoded[i] = _from_aligned(item, len(units[i].first))
    if paired:
        aligned = align_word_pairs(tokenizer, [(units[i].first, units[i].second) for i in paired], prepend=prepend)
        for i, item in zip(paired, aligned):
            encoded[i] = _from_aligned(item, len(units[i].first))
    for i, unit in enumerate(units):
        if not unit.is_split:
            encoded[i] = _encode_text(tokenizer, unit, prepend)
    return encoded  # type: ignore[return-value]


def _from_aligned(item: AlignedSentence, words_in_first: int) -> Encoded:
    segment = tuple(SPECIAL if w == SPECIAL else int(w >= words_in_first) for w in item.word_of_token)
    special = tuple(w == SPECIAL for w in item.word_of_token)
    return Encoded(item.input_ids, item.word_of_token, segment, special, item.unk_substituted, item.tokenized_apart)


def _encode_text(tokenizer, unit: Unit, prepend: int | None) -> Encoded:
    encoded = tokenizer(
        unit.first, unit.second, add_special_tokens=True, return_special_tokens_mask=True, truncation=False
    )
    ids = list(encoded["input_ids"])
    special = [bool(flag) for flag in encoded["special_tokens_mask"]]
    if hasattr(encoded, "sequence_ids") and getattr(tokenizer, "is_fast", False):
        sequences = encoded.sequence_ids()
    else:
        sequences = [0] * len(ids)
    segment = [SPECIAL if flag or s is None else s for flag, s in zip(special, sequences)]
    if prepend is not None:
        ids, special, segment = [prepend, *ids], [True, *special], [SPECIAL, *segment]
    return Encoded(tuple(ids), (SPECIAL,) * len(ids), tuple(segment), tuple(special))


def length_groups(lengths: Sequence[int], batch_size: int, max_cells: int | None = None) -> Iterator[list[int]]:
    """Positions of ``lengths`` shortest first (equal lengths keep their order), cut into groups of at most
    ``batch_size`` and, with ``max_cells``, of at most that many cells of group size x longest**2 (a group's
    attention) unless the group is one: the batches a pass makes of a chunk.

    >>> list(length_groups([5, 2, 9, 2], batch_size=2)), list(length_groups([5, 2, 9, 2], 4, max_cells=100))
    ([[1, 3], [0, 2]], [[1, 3, 0], [2]])
    """
    group: list[int] = []
    for position in sorted(range(len(lengths)), key=lengths.__getitem__):  # sorted: stable
        longest = lengths[position]
        if group and (len(group) == batch_size or (max_cells is not None and (len(group) + 1) * longest**2 > max_cells)):
            yield group
            group = []
        group.append(position)
    if group:
        yield group


def batches_of_chunk(
    chunk: Sequence[Unit],
    tokenizer,
    *,
    batch_size: int,
    max_length: int,
    stats: BatchStats,
    prepend: int | None = None,
    first_number: int = 0,
) -> Iterator[Batch]:
    """The batches of one chunk of units: too-long units counted and dropped, the rest length-sorted."""
    kept: list[tuple[Unit, Encoded]] = []
    for unit, item in zip(chunk, encode_units(tokenizer, chunk, prepend=prepend)):
        stats.units_in_part += 1
        if len(item) > max_length:
            stats.too_long += 1  # skipped, never truncated
            continue
        stats.unk_substituted_words += item.unk_substituted
        stats.tokenized_apart_words += item.tokenized_apart
        kept.append((unit, item))
    lengths = [len(item) for _, item in kept]
    for number, group in enumerate(length_groups(lengths, batch_size, MAX_ATTENTION_CELLS), start=first_number):
        yield _pad([kept[position] for position in group], tokenizer, number)


def _pad(group: list[tuple[Unit, Encoded]], tokenizer, number: int) -> Batch:
    """The group's encodings side by side, padded to the longest: each column written with one numpy scatter
    of the group's tokens, not a copy per sentence."""
    lengths = np.fromiter((len(item) for _, item in group), dtype=np.int64, count=len(group))  # [batch]
    shape, rows, columns = row_layout(lengths)

    def padded(field: str, fill, dtype) -> torch.Tensor:  # [batch, tok]
        values = np.full(shape, fill, dtype=dtype)
        values[rows, columns] = np.fromiter(chain.from_iterable(getattr(item, field) for _, item in group),
                                            dtype=dtype, count=rows.size)
        return torch.from_numpy(values)

    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    attention_mask = row_mask(shape, lengths)
    num_words = torch.tensor([len(unit.words) for unit, _ in group])  # [batch]
    return Batch([unit for unit, _ in group], padded("input_ids", pad_id, np.int64), attention_mask,
                 padded("word_of_token", SPECIAL, np.int64), padded("special", False, np.bool_),
                 padded("segment", SPECIAL, np.int64), num_words, number)


def window_rule(tokenizer, length: int, *, prepend: int | None = None) -> WindowRule:
    """Coreference windows of ``length`` tokens measured with ``tokenizer`` as the pass encodes a unit, special
    tokens included (``prepend``: the sink token, if the model has one)."""

    def measure(words: Sequence[str]) -> int:
        return len(encode_units(tokenizer, [Unit(0, tuple(words))], prepend=prepend)[0])

    return WindowRule(length, measure)
