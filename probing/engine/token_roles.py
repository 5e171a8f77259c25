"""What each token and word of a batch is, for the analyses that split attention by it: special tokens,
separators, punctuation, real tokens, and word rows that keep the special tokens' columns.

Surface statistics, the heads map, gradients, the no-op test and the sentence views all read attention by
these roles; they live here, below every analysis, so that no analysis imports another's.

>>> import torch
>>> roles = TokenRoles.from_masks(torch.ones(1, 3), torch.tensor([[1, 0, 1]]), torch.zeros(1, 3))
>>> roles.first.tolist(), roles.separator.tolist(), roles.other.tolist()
([[1.0, 0.0, 0.0]], [[0.0, 0.0, 1.0]], [[1.0, 1.0, 0.0]])
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from probing.data.treebank import Sentence
from probing.engine.pooling import pool_with_special_keys

if TYPE_CHECKING:
    from probing.engine.accumulator import BatchView


@dataclass(frozen=True)
class TokenRoles:
    """Float masks [batch, tok] of what each token is; padding is 0 in every mask.

    ``first``: a special token that starts the unit ([CLS], ``<s>``);
    ``separator``: every other special token ([SEP], ``</s>``; T5's closing ``</s>``);
    ``other``: every real token that is not a separator (the first special token included).
    """

    real: torch.Tensor
    first: torch.Tensor
    separator: torch.Tensor
    punctuation: torch.Tensor

    @property
    def other(self) -> torch.Tensor:
        return self.real - self.separator

    def to(self, device) -> "TokenRoles":
        return TokenRoles(self.real.to(device), self.first.to(device), self.separator.to(device), self.punctuation.to(device))

    @classmethod
    def from_masks(cls, real, special, punctuation) -> "TokenRoles":
        """Roles from 0/1 masks [batch, tok] of real, special and punctuation tokens."""
        real = real.float()
        special = special.float() * real
        first = torch.zeros_like(special)
        first[:, 0] = special[:, 0]  # units are padded on the right: column 0 starts every unit
        return cls(real=real, first=first, separator=special - first, punctuation=punctuation.float() * real)

    @classmethod
    def of_view(cls, view: BatchView) -> "TokenRoles":
        batch = view.batch
        return cls.from_masks(batch.attention_mask, batch.is_special, punctuation_tokens(view.loaded, batch))


def token_names(loaded) -> dict:
    """How tables name the first special token and the separators ([CLS]/[SEP], <s>/</s>)."""
    tokenizer = loaded.tokenizer
    first = loaded.prepended_token or tokenizer.cls_token or tokenizer.bos_token or "first special"
    separator = tokenizer.sep_token or tokenizer.eos_token or "separator"
    return {"first_special": str(first), "separator": str(separator)}


PUNCTUATION = frozenset({".", ","})
"""The tokens whose share of attention Clark et al. report (their Figure 2)."""


def punctuation_tokens(loaded, batch) -> torch.Tensor:
    """bool [batch, tok]: tokens that decode to ``.`` or ``,`` (special tokens never); each id is
    decoded once per model and remembered."""
    known: dict[int, bool] = loaded.extra.setdefault("punctuation_ids", {})
    ids = batch.input_ids
    for token in set(ids.unique().tolist()) - known.keys():
        known[token] = loaded.tokenizer.decode([token]).strip() in PUNCTUATION
    marks = torch.tensor([token for token, is_mark in known.items() if is_mark], dtype=ids.dtype)
    return torch.isin(ids, marks) & ~batch.is_special & batch.attention_mask.bool()


def normalised_rows(attention: torch.Tensor) -> torch.Tensor:
    """Rows divided by their sum (rows of zeros stay zero): shares of a reading whose rows do not sum to 1."""
    return attention / attention.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(attention.dtype).tiny)



def is_punctuation(form: str, upos: str = "_") -> bool:
    """Whether a treebank word is punctuation: UPOS ``PUNCT``, or a form of punctuation characters only.

    >>> is_punctuation(".", "PUNCT"), is_punctuation("--"), is_punctuation("U.S.", "PROPN")
    (True, True, False)
    """
    return upos == "PUNCT" or (bool(form) and all(unicodedata.category(char).startswith("P") for char in form))


def pooled_rows(view: BatchView, rows: Sequence[int] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Word rows that keep the special tokens' columns, as shares: ``(words [n, layer, head, word, word],
    specials [n, layer, head, word, special])`` for the batch's ``rows`` (default: all); under a reading
    whose rows do not sum to 1, token rows are divided by their sum first."""
    batch = view.batch
    picked = slice(None) if rows is None else torch.as_tensor(list(rows), dtype=torch.long)
    attention = view.attention[picked]
    if view.reading != "weights":
        attention = normalised_rows(attention.float())
    is_special = (batch.is_special & batch.attention_mask.bool())[picked]
    return pool_with_special_keys(attention, batch.word_of_token[picked].to(attention.device),
                                  is_special.to(attention.device), view.pool_from)


def punctuation_words(sentences: Sequence[Sentence], width: int) -> torch.Tensor:
    """float [batch, word]: 1 where the word is punctuation (:func:`is_punctuation`)."""
    mask = torch.zeros((len(sentences), width))
    for row, sentence in enumerate(sentences):
        for i, (form, upos) in enumerate(zip(sentence.words, sentence.upos)):
            mask[row, i] = float(is_punctuation(form, upos))
    return mask
