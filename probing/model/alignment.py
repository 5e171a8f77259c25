"""Align a model's subword pieces to a treebank's words (docs/scoring.md section 1).

The words are given to the tokenizer already split (``is_split_into_words``),
so every piece belongs to exactly one word and ``word_ids()`` says which.
Special tokens ([CLS], ``<s>``, BOS, ...) are whatever the tokenizer adds
around the words (``word_ids()`` is None for them); they get word index -1:
pooling keeps them as their own pseudo-words and then drops them. No token
string and no sequence shape is assumed.

A tokenizer with no fast (Rust) version has no ``word_ids()``; then each word
is tokenised on its own (``add_special_tokens=False``) and the model's special
tokens are added with ``build_inputs_with_special_tokens``, their positions
read from ``get_special_tokens_mask``. Either way the alignment is checked
(every word owns at least one piece, pieces run in word order), and a
tokenizer that cannot be aligned is an error, never a guess.

>>> from probing.testing import tiny_wordpiece_tokenizer
>>> tokenizer = tiny_wordpiece_tokenizer()
>>> aligned = align_words(tokenizer, [("the", "cat", "sat")])[0]
>>> aligned.word_of_token[0], aligned.word_of_token[-1]   # [CLS] ... [SEP]
(-1, -1)
>>> align_words(tokenizer, [("the",)], prepend=tokenizer.pad_token_id)[0].word_of_token
(-1, -1, 0, -1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from probing.errors import ProbingError

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


def align_words(tokenizer, sentences: Sequence[Sequence[str]], *, prepend: int | None = None) -> list[AlignedSentence]:
    """Tokenise pre-split sentences and map every piece to its word.

    Words that the tokenizer turns into nothing (a lone zero-width space under
    BERT's normaliser, say) are replaced by the unknown token, so that every
    word owns at least one piece. ``prepend`` is a token id put before every
    sentence as one more special token: the attention-sink pseudo-word of a
    causal stack whose tokenizer adds no BOS (see docs/families.md).
    """
    sentences = [list(words) for words in sentences]
    aligner = _align_fast if getattr(tokenizer, "is_fast", False) else _align_per_word
    aligned = []
    for words, (input_ids, word_ids, replaced) in zip(sentences, aligner(tokenizer, sentences)):
        word_of_token = [SPECIAL if word is None else word for word in word_ids]
        check_alignment(word_of_token, len(words), tokenizer)
        if prepend is not None:
            input_ids, word_of_token = [prepend, *input_ids], [SPECIAL, *word_of_token]
        aligned.append(AlignedSentence(tuple(input_ids), tuple(word_of_token), replaced))
    return aligned


def align_word_pairs(
    tokenizer, pairs: Sequence[tuple[Sequence[str], Sequence[str]]], *, prepend: int | None = None
) -> list[AlignedSentence]:
    """Like :func:`align_words` for segment pairs: words of B are numbered after A's.

    >>> from probing.testing import tiny_wordpiece_tokenizer
    >>> aligned = align_word_pairs(tiny_wordpiece_tokenizer(), [(("the", "cat"), ("sat",))])[0]
    >>> aligned.word_of_token   # [CLS] the cat [SEP] sa ##t [SEP]
    (-1, 0, 1, -1, 2, 2, -1)
    """
    aligned = []
    for first, second in pairs:
        first, second = list(first), list(second)
        if getattr(tokenizer, "is_fast", False):
            encoded = tokenizer(first, second, is_split_into_words=True, add_special_tokens=True, truncation=False)
            input_ids, word_ids, sequences = encoded["input_ids"], encoded.word_ids(), encoded.sequence_ids()
            word_of_token = [
                SPECIAL if word is None else word + (len(first) if sequence == 1 else 0)
                for word, sequence in zip(word_ids, sequences)
            ]
        else:
            pieces_a = [tokenizer(word, add_special_tokens=False)["input_ids"] for word in first]
            pieces_b = [tokenizer(word, add_special_tokens=False)["input_ids"] for word in second]
            words = [w for w, ids in enumerate(pieces_a + pieces_b) for _ in ids]
            try:
                input_ids = list(tokenizer.build_inputs_with_special_tokens(sum(pieces_a, []), sum(pieces_b, [])))
                mask = tokenizer.get_special_tokens_mask(sum(pieces_a, []), sum(pieces_b, []))
            except (NotImplementedError, ValueError, AttributeError, TypeError) as error:
                raise ProbingError(
                    f"{type(tokenizer).__name__} has no fast version and cannot build segment pairs ({error})",
                    source="--model",
                ) from None
            iterator = iter(words)
            word_of_token = [SPECIAL if special else next(iterator) for special in mask]
        check_alignment(word_of_token, len(first) + len(second), tokenizer)
        if prepend is not None:
            input_ids, word_of_token = [prepend, *input_ids], [SPECIAL, *word_of_token]
        aligned.append(AlignedSentence(tuple(input_ids), tuple(word_of_token), 0))
    return aligned


def alignment_method(tokenizer) -> str:
    """``"word_ids"`` for a fast tokenizer, ``"per_word"`` for the fallback (recorded in results)."""
    return "word_ids" if getattr(tokenizer, "is_fast", False) else "per_word"


def check_alignment(word_of_token: Sequence[int], num_words: int, tokenizer=None) -> None:
    """Every word owns >= 1 piece, pieces run in word order, every other token is special.

    >>> check_alignment([-1, 0, 0, 1, -1], 2)
    >>> check_alignment([-1, 0, 2, -1], 3)
    Traceback (most recent call last):
    probing.errors.ProbingError: --model: the alignment gives word 1 of 3 no piece (pieces name words [0, 2]); the tokenizer cannot be aligned
    """
    words = [word for word in word_of_token if word != SPECIAL]
    name = type(tokenizer).__name__ if tokenizer is not None else "the tokenizer"
    if any(later < earlier for earlier, later in zip(words, words[1:])):
        raise ProbingError(f"{name} put pieces out of word order ({words}); cannot align them", source="--model")
    missing = sorted(set(range(num_words)) - set(words))
    if missing or any(not 0 <= word < num_words for word in words):
        first = missing[0] if missing else max(words)
        raise ProbingError(
            f"the alignment gives word {first} of {num_words} no piece (pieces name words {sorted(set(words))}); "
            f"{name} cannot be aligned",
            source="--model",
        )


def _align_fast(tokenizer, sentences: list[list[str]]):
    """Yield (input_ids, word_ids, replaced) from one batched call with ``word_ids()``."""
    encoded = _encode_split(tokenizer, sentences)
    for row, words in enumerate(sentences):
        input_ids, word_ids = encoded["input_ids"][row], encoded.word_ids(row)
        empty = sorted(set(range(len(words))) - {w for w in word_ids if w is not None})
        if empty:
            input_ids, word_ids = _retokenise_with_unk(tokenizer, words, empty)
        yield input_ids, word_ids, len(empty)


def _encode_split(tokenizer, sentences: list[list[str]]):
    # truncation=False: a tokenizer.json may carry a truncation setting, and a
    # truncated sentence would lose words (too-long sentences are skipped later).
    return tokenizer(sentences, is_split_into_words=True, add_special_tokens=True, truncation=False)


def _retokenise_with_unk(tokenizer, words: list[str], empty: list[int]) -> tuple[list[int], list[int | None]]:
    _require_unk(tokenizer, words[empty[0]])
    replaced = [tokenizer.unk_token if i in empty else word for i, word in enumerate(words)]
    encoded = _encode_split(tokenizer, [replaced])
    return encoded["input_ids"][0], encoded.word_ids(0)


def _require_unk(tokenizer, word: str) -> None:
    if tokenizer.unk_token is None:
        raise ProbingError(
            f"word {word!r} gives no piece and the tokenizer has no unknown token to stand in for it",
            source="--treebank",
        )


def _align_per_word(tokenizer, sentences: list[list[str]]):
    """The fallback for tokenizers without ``word_ids()``: one word at a time, then the
    model's special tokens around the whole sentence, their positions from the tokenizer."""
    for words in sentences:
        pieces = [tokenizer(word, add_special_tokens=False)["input_ids"] for word in words]
        replaced = sum(1 for ids in pieces if not ids)
        if replaced:
            _require_unk(tokenizer, next(word for word, ids in zip(words, pieces) if not ids))
            pieces = [ids or [tokenizer.unk_token_id] for ids in pieces]
        flat = [piece for ids in pieces for piece in ids]
        word_of_piece = [word for word, ids in enumerate(pieces) for _ in ids]
        input_ids, is_special = _with_special_tokens(tokenizer, flat)
        iterator = iter(word_of_piece)
        yield input_ids, [None if special else next(iterator) for special in is_special], replaced


def _with_special_tokens(tokenizer, ids: list[int]) -> tuple[list[int], list[bool]]:
    try:
        built = list(tokenizer.build_inputs_with_special_tokens(ids))
        mask = list(tokenizer.get_special_tokens_mask(ids, already_has_special_tokens=False))
    except (NotImplementedError, ValueError, AttributeError) as error:
        raise ProbingError(
            f"{type(tokenizer).__name__} has no fast version and cannot say where its special tokens go ({error}); "
            "use a checkpoint that ships tokenizer.json",
            source="--model",
        ) from None
    kept = [token for token, special in zip(built, mask) if not special]
    if len(mask) != len(built) or kept != ids:
        raise ProbingError(
            f"{type(tokenizer).__name__} has no fast version and its special-tokens mask does not match the "
            "input it builds; use a checkpoint that ships tokenizer.json",
            source="--model",
        )
    return built, [bool(special) for special in mask]
