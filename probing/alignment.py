"""Align a model's subword pieces to a treebank's words (spec/scoring.md section 1).

The words are given to the tokenizer already split (``is_split_into_words``),
so every piece belongs to exactly one word and ``word_ids()`` says which.
Special tokens ([CLS], ``<s>``, BOS, ...) get word index -1: pooling keeps them
as their own pseudo-words and then drops them.

>>> from probing.testing import tiny_wordpiece_tokenizer
>>> tokenizer = tiny_wordpiece_tokenizer()
>>> aligned = align_words(tokenizer, [("the", "cat", "sat")])[0]
>>> aligned.word_of_token[0], aligned.word_of_token[-1]   # [CLS] ... [SEP]
(-1, -1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import ProbingError

SPECIAL = -1
"""Word index of a special token."""


@dataclass(frozen=True)
class AlignedSentence:
    """A sentence's model input and the word each piece belongs to.

    ``word_of_token[t]`` is the 0-based word of piece t, or ``SPECIAL``.
    ``unk_substituted`` counts words that gave no piece and were replaced by
    the tokenizer's unknown token.
    """

    input_ids: tuple[int, ...]
    word_of_token: tuple[int, ...]
    unk_substituted: int = 0

    def __len__(self) -> int:
        return len(self.input_ids)


def align_words(tokenizer, sentences: Sequence[Sequence[str]]) -> list[AlignedSentence]:
    """Tokenise pre-split sentences and map every piece to its word.

    Words that the tokenizer turns into nothing (a lone zero-width space under
    BERT's normaliser, say) are replaced by the unknown token and the sentence
    is tokenised again, so that every word owns at least one piece.
    """
    if not getattr(tokenizer, "is_fast", False):
        raise ProbingError(
            f"tokenizer {type(tokenizer).__name__} has no fast (Rust) version, so its pieces cannot be "
            "mapped to words with word_ids(); use a checkpoint that ships tokenizer.json",
            source="--model",
        )
    sentences = [list(words) for words in sentences]
    encoded = tokenizer(sentences, is_split_into_words=True, add_special_tokens=True)
    aligned = []
    for row, words in enumerate(sentences):
        input_ids, word_ids = encoded["input_ids"][row], encoded.word_ids(row)
        empty = sorted(set(range(len(words))) - {w for w in word_ids if w is not None})
        if empty:
            input_ids, word_ids = _retokenise_with_unk(tokenizer, words, empty)
        aligned.append(
            AlignedSentence(
                input_ids=tuple(input_ids),
                word_of_token=tuple(SPECIAL if w is None else w for w in word_ids),
                unk_substituted=len(empty),
            )
        )
    return aligned


def _retokenise_with_unk(tokenizer, words: list[str], empty: list[int]) -> tuple[list[int], list[int | None]]:
    if tokenizer.unk_token is None:
        raise ProbingError(
            f"word {words[empty[0]]!r} gives no piece and the tokenizer has no unknown token to stand in for it",
            source="--treebank",
        )
    replaced = [tokenizer.unk_token if i in empty else word for i, word in enumerate(words)]
    encoded = tokenizer([replaced], is_split_into_words=True, add_special_tokens=True)
    word_ids = encoded.word_ids(0)
    if set(range(len(words))) - {w for w in word_ids if w is not None}:
        raise ProbingError(
            f"the tokenizer gives no piece for {words[empty[0]]!r} even after replacing it with "
            f"{tokenizer.unk_token!r}",
            source="--treebank",
        )
    return encoded["input_ids"][0], word_ids


def maximum_length(tokenizer, config, requested: int | None) -> int:
    """The longest input (special tokens included) that a sentence may have.

    ``--max-length`` when given; else the tokenizer's ``model_max_length`` if it
    is a real limit (tokenizers without one report a huge sentinel); else what
    the model's position embeddings allow (RoBERTa-style models reserve
    ``pad_token_id + 1`` positions).
    """
    if requested is not None:
        if requested < 2:
            raise ProbingError(f"must be at least 2, got {requested}", source="--max-length")
        return requested
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < 1_000_000:
        return limit
    positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if positions is None:
        raise ProbingError("the model states no maximum length; pass one", source="--max-length")
    if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert", "mpnet"):
        positions -= (getattr(config, "pad_token_id", 1) or 1) + 1
    return positions
