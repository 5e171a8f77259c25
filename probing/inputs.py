"""Inputs of the attention analyses: a treebank's words or a plain-text file,
as single sentences or as BERT-style segment pairs, in padded token batches.

The probe needs words and trees; the analyses of Clark et al. (section 3, 6)
and Kovaleva et al. only need token attention over some text. A plain-text
file holds one sentence per line; a blank line ends a document. With
``pairs=True`` consecutive sentences of a document become ``A``/``B``
segments (``[CLS] A [SEP] B [SEP]`` for BERT, the model's own tokens
otherwise), as in BERT's pre-training.

>>> import io
>>> units = list(units_from_text(io.StringIO("One.\\nTwo.\\n\\nThree.\\n"), pairs=True))
>>> [(u.first, u.second) for u in units]
[('One.', 'Two.'), ('Three.', None)]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import torch

from .errors import ProbingError
from .treebank import read_treebank

TREEBANK_SUFFIXES = (".conllu", ".conllx", ".conll")
PUNCTUATION = frozenset({".", ","})
"""The tokens whose share of attention Clark et al. report (their Figure 2)."""


@dataclass(frozen=True)
class TextUnit:
    """One model input: a sentence, or two as segments A and B.

    A segment is a tuple of words (from a treebank) or a raw string (plain text).
    """

    first: tuple[str, ...] | str
    second: tuple[str, ...] | str | None = None
    index: int = 0


@dataclass
class TokenBatch:
    """A padded batch of token ids with what the analyses need to know of each token.

    input_ids, attention_mask: long [batch, tok]; is_special: bool [batch, tok]
    (the tokenizer's own special tokens, found from its special-tokens mask);
    is_punctuation: bool [batch, tok] (a token that decodes to ``.`` or ``,``);
    segment: long [batch, tok], 0 for A, 1 for B, -1 for special and padding.
    """

    units: list[TextUnit]
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    is_special: torch.Tensor
    is_punctuation: torch.Tensor
    segment: torch.Tensor
    tokens: list[list[str]] = field(default_factory=list)

    @property
    def lengths(self) -> torch.Tensor:
        return self.attention_mask.sum(dim=1)


@dataclass
class InputStats:
    units: int = 0
    too_long: int = 0


def read_units(path: str | Path, *, pairs: bool = False, limit: int | None = None) -> Iterator[TextUnit]:
    """Units from a treebank (by suffix) or a plain-text file, at most ``limit``."""
    path = Path(path)
    if not path.is_file():
        raise ProbingError(f"input file not found: {path}")
    if path.suffix.lower() in TREEBANK_SUFFIXES:
        units = units_from_treebank(path, pairs=pairs)
        yield from _take(units, limit)
        return
    with path.open(encoding="utf-8") as stream:
        count = 0
        for unit in _take(units_from_text(stream, pairs=pairs), limit):
            count += 1
            yield unit
    if count == 0:
        raise ProbingError("the text file holds no sentence", source=str(path))


def units_from_treebank(path: Path, *, pairs: bool = False) -> Iterator[TextUnit]:
    """Treebank sentences as word tuples; with pairs, consecutive sentences pair up."""
    return _pair_up(([sentence.words for sentence in read_treebank(path)],), pairs)


def units_from_text(stream: IO[str], *, pairs: bool = False) -> Iterator[TextUnit]:
    """One sentence per line; a blank line ends a document (pairs never cross it)."""
    documents: list[list[str]] = [[]]
    for line in stream:
        text = line.strip()
        if text:
            documents[-1].append(text)
        elif documents[-1]:
            documents.append([])
    return _pair_up(tuple(document for document in documents if document), pairs)


def _pair_up(documents: tuple[list, ...], pairs: bool) -> Iterator[TextUnit]:
    index = 0
    for document in documents:
        step = 2 if pairs else 1
        for start in range(0, len(document), step):
            second = document[start + 1] if pairs and start + 1 < len(document) else None
            yield TextUnit(first=document[start], second=second, index=index)
            index += 1


def _take(units: Iterable[TextUnit], limit: int | None) -> Iterator[TextUnit]:
    for unit in units:
        if limit is not None and unit.index >= limit:
            return
        yield unit


def token_batches(
    tokenizer,
    units: Iterable[TextUnit],
    *,
    batch_size: int = 32,
    max_length: int = 512,
    stats: InputStats | None = None,
    chunk_batches: int = 16,
) -> Iterator[TokenBatch]:
    """Length-sorted padded batches; units longer than ``max_length`` are counted and skipped."""
    stats = stats if stats is not None else InputStats()
    chunk: list[TextUnit] = []
    for unit in units:
        chunk.append(unit)
        if len(chunk) == batch_size * chunk_batches:
            yield from _batches_of_chunk(tokenizer, chunk, batch_size, max_length, stats)
            chunk = []
    if chunk:
        yield from _batches_of_chunk(tokenizer, chunk, batch_size, max_length, stats)


def _batches_of_chunk(tokenizer, chunk, batch_size, max_length, stats) -> Iterator[TokenBatch]:
    encoded = [_encode(tokenizer, unit) for unit in chunk]
    kept = []
    for unit, item in zip(chunk, encoded):
        stats.units += 1
        if len(item["input_ids"]) > max_length:
            stats.too_long += 1
            continue
        kept.append((unit, item))
    kept.sort(key=lambda pair: len(pair[1]["input_ids"]))
    for start in range(0, len(kept), batch_size):
        yield _pad(tokenizer, kept[start : start + batch_size])


def _encode(tokenizer, unit: TextUnit) -> dict:
    split = not isinstance(unit.first, str)
    first = list(unit.first) if split else unit.first
    second = None if unit.second is None else (list(unit.second) if split else unit.second)
    encoded = tokenizer(
        first, second, is_split_into_words=split, add_special_tokens=True, return_special_tokens_mask=True
    )
    sequence_ids = encoded.sequence_ids(0) if hasattr(encoded, "sequence_ids") else [0] * len(encoded["input_ids"])
    return {
        "input_ids": encoded["input_ids"],
        "special": [bool(flag) for flag in encoded["special_tokens_mask"]],
        "segment": [-1 if s is None else s for s in sequence_ids],
    }


def _pad(tokenizer, group) -> TokenBatch:
    longest = max(len(item["input_ids"]) for _, item in group)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    shape = (len(group), longest)
    input_ids = torch.full(shape, pad_id, dtype=torch.long)  # [batch, tok]
    attention_mask = torch.zeros(shape, dtype=torch.long)  # [batch, tok]
    is_special = torch.zeros(shape, dtype=torch.bool)  # [batch, tok]
    segment = torch.full(shape, -1, dtype=torch.long)  # [batch, tok]
    tokens = []
    for row, (_, item) in enumerate(group):
        length = len(item["input_ids"])
        input_ids[row, :length] = torch.tensor(item["input_ids"])
        attention_mask[row, :length] = 1
        is_special[row, :length] = torch.tensor(item["special"])
        segment[row, :length] = torch.tensor(item["segment"])
        segment[row, :length][is_special[row, :length]] = -1
        tokens.append(tokenizer.convert_ids_to_tokens(item["input_ids"]))
    decoded = [[tokenizer.decode([i]).strip() for i in row[: int(m.sum())]] for row, m in zip(input_ids.tolist(), attention_mask)]
    is_punctuation = torch.zeros(shape, dtype=torch.bool)  # [batch, tok]
    for row, strings in enumerate(decoded):
        for column, text in enumerate(strings):
            is_punctuation[row, column] = text in PUNCTUATION and not bool(is_special[row, column])
    return TokenBatch([unit for unit, _ in group], input_ids, attention_mask, is_special, is_punctuation, segment, tokens)
