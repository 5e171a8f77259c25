"""The input of an analysis as a stream of token batches, and the provenance of its result.

An input is a treebank (its words), a plain-text file, or a treebank name such
as ``en_ewt:dev``. :class:`AnalysisInput` reads it lazily, counts what it
read and skipped, and can be read again (the report makes several passes).

>>> from probing.testing import sample_path
>>> source = AnalysisInput.open(str(sample_path()), limit=3)
>>> source.kind, len(list(source.units())), source.sentences_read
('treebank', 3, 3)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import torch
from tqdm.auto import tqdm

from ..alignment import maximum_length
from ..datasets import resolve_treebank, sha256_of
from ..errors import ProbingError
from ..extraction import LoadedModel, attention
from ..inputs import TREEBANK_SUFFIXES, InputStats, TextUnit, TokenBatch, read_units, token_batches
from ..results import SCHEMA_VERSION, environment_block, model_block, now_iso, tool_block

_PACKAGES = ("torch", "transformers", "tokenizers", "numpy", "scikit-learn", "matplotlib")


@dataclass
class AnalysisInput:
    """A file of units to analyse; ``units()`` may be called more than once."""

    path: Path
    pairs: bool = False
    limit: int | None = None
    stats: InputStats = field(default_factory=InputStats)
    sentences_read: int = 0

    @classmethod
    def open(cls, text: str, *, pairs: bool = False, limit: int | None = None) -> "AnalysisInput":
        """A file path, or a treebank name such as ``en_ewt:dev`` (probing.datasets)."""
        if limit is not None and limit < 1:
            raise ProbingError(f"must be a positive integer, got {limit}", source="--limit")
        return cls(path=resolve_treebank(text), pairs=pairs, limit=limit)  # a file passes through

    @property
    def kind(self) -> str:
        return "treebank" if self.path.suffix.lower() in TREEBANK_SUFFIXES else "text"

    def units(self) -> Iterator[TextUnit]:
        """The units, counting the sentences they hold (a pair holds two)."""
        self.sentences_read = 0
        for unit in read_units(self.path, pairs=self.pairs, limit=self.limit):
            self.sentences_read += 1 + (unit.second is not None)
            yield unit

    def batches(self, tokenizer, *, batch_size: int, max_length: int) -> Iterator[TokenBatch]:
        """Length-sorted padded batches; counts restart at every pass."""
        self.stats = InputStats()
        return token_batches(tokenizer, self.units(), batch_size=batch_size, max_length=max_length, stats=self.stats)

    def describe(self) -> dict:
        """The ``input`` object of a result file."""
        return {
            "path": str(self.path),
            "sha256": sha256_of(self.path),
            "kind": self.kind,
            "pairs": self.pairs,
            "limit": self.limit,
            "units_read": self.stats.units,
            "units_used": self.stats.units - self.stats.too_long,
            "sentences_read": self.sentences_read,
            "skipped": {"too_long": self.stats.too_long},
        }


def attention_batches(
    loaded: LoadedModel,
    source: AnalysisInput,
    *,
    batch_size: int = 32,
    max_length: int | None = None,
    progress: bool = False,
) -> Iterator[tuple[TokenBatch, torch.Tensor]]:
    """Each batch with its token attention, float32 [batch, layer, head, query, key]."""
    limit = maximum_length(loaded.tokenizer, loaded.model.config, max_length)
    batches = source.batches(loaded.tokenizer, batch_size=batch_size, max_length=limit)
    for batch in tqdm(batches, unit="batch", disable=not progress, leave=False):
        yield batch, attention(loaded, batch.input_ids, batch.attention_mask)
    if source.stats.units == source.stats.too_long:
        raise ProbingError("no unit fits the model's maximum length; nothing was analysed", source=str(source.path))


def provenance(analysis: str, loaded: LoadedModel, source: AnalysisInput, config: dict) -> dict:
    """The fields every analysis result starts with: what ran, on what, with which options."""
    return {
        "schema_version": SCHEMA_VERSION,
        "analysis": analysis,
        "tool": tool_block(),
        "model": model_block(loaded),
        "input": source.describe(),
        "config": config,
        "environment": environment_block(_PACKAGES),
        "created": now_iso(),
    }


def special_token_names(loaded: LoadedModel) -> dict:
    """How plots name the first special token and the separators ([CLS]/[SEP], <s>/</s>)."""
    tokenizer = loaded.tokenizer
    first = tokenizer.cls_token or tokenizer.bos_token or "first special"
    separator = tokenizer.sep_token or tokenizer.eos_token or "separator"
    return {"first_special": str(first), "separator": str(separator)}
