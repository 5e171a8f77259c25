"""Align a model's subword pieces to a treebank's words (docs/scoring.md section 1).

The words are given to the tokenizer already split (``is_split_into_words``),
so every piece belongs to exactly one word and ``word_ids()`` says which.
Special tokens ([CLS], ``<s>``, BOS, ...) are whatever the tokenizer adds
around the words (``word_ids()`` is None for them); they get word index -1:
pooling keeps them as their own pseudo-words and then drops them. No token
string and no sequence shape is assumed.

SentencePiece tokenizers write the space into the piece (``▁cat``), so they
read the *running text* instead: the words joined by the spaces the treebank
records (none after a word whose MISC says ``SpaceAfter=No``: Chinese,
punctuation, Arabic clitics), each piece given to the word its characters lie
in (a piece that is only a space goes with the word after it). Pre-split words
would lose every space for Gemma's tokenizer (it puts no marker on a word
tokenized alone) and gain one before every Chinese word for XLM-R's. A piece
whose characters lie in two words cannot be given to either: the running text
is cut at that word boundary and each side tokenized on its own, so no piece is
ever shared (merged) between words, and those words are counted
(``tokenized_apart``). Rules per family: docs/families.md.

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
>>> running_text(("Hello", ",", "world"), (False, True, True))
('Hello, world', ((0, 5), (5, 6), (7, 12)))
"""

from __future__ import annotations

import json
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
    the tokenizer's unknown token; ``tokenized_apart`` the words of running
    text that shared a piece with a neighbour and were tokenized on their own.
    """

    input_ids: tuple[int, ...]
    word_of_token: tuple[int, ...]
    unk_substituted: int = 0
    tokenized_apart: int = 0

    def __len__(self) -> int:
        return len(self.input_ids)


def align_words(tokenizer, sentences: Sequence[Sequence[str]], *, prepend: int | None = None,
                spaces: Sequence[Sequence[bool]] | None = None) -> list[AlignedSentence]:
    """Tokenise sentences given as words and map every piece to its word.

    Words that the tokenizer turns into nothing (a lone zero-width space under
    BERT's normaliser, say) are replaced by the unknown token, so that every
    word owns at least one piece. ``prepend`` is a token id put before every
    sentence as one more special token: the attention-sink pseudo-word of a
    causal stack whose tokenizer adds no BOS (see docs/families.md).
    ``spaces[k][i]`` says whether the running text has a space after word i of
    sentence k (default: after every word); only tokenizers that read running
    text use it.
    """
    sentences = [list(words) for words in sentences]
    if reads_running_text(tokenizer):
        gaps = [tuple(gap) for gap in spaces] if spaces is not None else [(True,) * len(words) for words in sentences]
        encoded = _align_running_text(tokenizer, sentences, gaps)
    else:
        aligner = _align_fast if getattr(tokenizer, "is_fast", False) else _align_per_word
        encoded = ((*item, 0) for item in aligner(tokenizer, sentences))
    aligned = []
    for words, (input_ids, word_ids, replaced, apart) in zip(sentences, encoded):
        word_of_token = [SPECIAL if word is None else word for word in word_ids]
        check_alignment(word_of_token, len(words), tokenizer)
        if prepend is not None:
            input_ids, word_of_token = [prepend, *input_ids], [SPECIAL, *word_of_token]
        aligned.append(AlignedSentence(tuple(input_ids), tuple(word_of_token), replaced, apart))
    return aligned


def reads_running_text(tokenizer) -> bool:
    """Whether ``tokenizer`` writes spaces into its pieces the SentencePiece way (a Metaspace pre-tokenizer,
    or a normaliser that turns " " into "▁"), and so is given running text rather than pre-split words.

    Read from the tokenizer's own settings, once per tokenizer. WordPiece and byte-level BPE are not:
    WordPiece splits at spaces and marks no word start, and byte-level BPE is given each word with the
    space that marks its start (docs/families.md).

    >>> from probing.testing import tiny_wordpiece_tokenizer
    >>> reads_running_text(tiny_wordpiece_tokenizer())
    False
    """
    if not getattr(tokenizer, "is_fast", False):
        return False
    cached = getattr(tokenizer, "_probing_running_text", None)
    if cached is None:
        backend = tokenizer.backend_tokenizer
        settings = [json.loads(part.__getstate__()) for part in (backend.pre_tokenizer, backend.normalizer) if part]
        cached = any(_writes_spaces_into_pieces(setting) for setting in settings)
        tokenizer._probing_running_text = cached
    return cached


def _writes_spaces_into_pieces(setting) -> bool:
    """A Metaspace step, or a Replace of " " by "▁", anywhere in a (nested) tokenizers setting."""
    if isinstance(setting, list):
        return any(_writes_spaces_into_pieces(item) for item in setting)
    if not isinstance(setting, dict):
        return False
    if setting.get("type") == "Metaspace":
        return True
    if setting.get("type") == "Replace" and setting.get("pattern") == {"String": " "} and setting.get("content") == "\u2581":
        return True
    return any(_writes_spaces_into_pieces(value) for value in setting.values() if isinstance(value, (list, dict)))


def running_text(words: Sequence[str], spaces: Sequence[bool]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The sentence as running text and each word's (start, end) characters in it; ``spaces[i]``: a space after
    word i (none after the last)."""
    text, spans = [], []
    position = 0
    for index, word in enumerate(words):
        spans.append((position, position + len(word)))
        text.append(word)
        position += len(word)
        if spaces[index] and index + 1 < len(words):
            text.append(" ")
            position += 1
    return "".join(text), tuple(spans)


def _align_running_text(tokenizer, sentences: list[list[str]], spaces: list[tuple[bool, ...]]):
    """Yield (input_ids, word_ids, replaced, tokenized_apart) for running text, one batched call for the
    sentences whose pieces all fall inside words, a call per cut piece of text for the others."""
    texts = [running_text(words, gaps) for words, gaps in zip(sentences, spaces)]
    encoded = encodings(tokenizer, [text for text, _ in texts], split_into_words=False)
    for words, (text, spans), encoding in zip(sentences, texts, encoded):
        ids, offsets, special = encoding.ids, encoding.offsets, encoding.special_tokens_mask
        inner = [t for t, flag in enumerate(special) if not flag]
        first, last = (inner[0], inner[-1] + 1) if inner else (len(ids), len(ids))
        if any(special[first:last]):
            raise ProbingError(f"{type(tokenizer).__name__} put a special token among the words; cannot align",
                               source="--model")
        pieces = [(ids[t], offsets[t]) for t in range(first, last)]
        owners, apart = _owners_or_cut(tokenizer, text, spans, 0, len(words), pieces)
        owners, replaced = _unk_for_empty_words(tokenizer, words, owners)
        inner_ids = [piece for piece, _ in owners]
        word_ids = [None] * first + [word for _, word in owners] + [None] * (len(ids) - last)
        yield list(ids[:first]) + inner_ids + list(ids[last:]), word_ids, replaced, len(apart)


def _owners_or_cut(tokenizer, text, spans, begin: int, end: int, pieces) -> tuple[list[tuple[int, int]], set[int]]:
    """(piece id, word) for words ``begin..end-1`` read as ``pieces`` (id, (start, end) in ``text``); where a
    piece spans a word boundary, the text is cut there and each side tokenized again. Returns the pairs and
    the words that were tokenized apart from a neighbour."""
    owned, cuts = [], set()
    for piece, (start, stop) in pieces:
        words = [w for w in range(begin, end) if start < spans[w][1] and spans[w][0] < stop]
        if len(words) > 1:
            cuts.update(range(words[0] + 1, words[-1] + 1))  # cut before each word after the first
        elif words:
            owned.append((piece, words[0]))
        else:  # only a space (a lone ▁): it goes with the next word, as the marker does
            owned.append((piece, next((w for w in range(begin, end) if spans[w][1] > start), end - 1)))
    if not cuts:
        return owned, set()
    apart = {w for cut in cuts for w in (cut - 1, cut)}
    bounds = [begin, *sorted(cuts), end]
    owned = []
    for left, right in zip(bounds, bounds[1:]):
        # A side keeps the space before it, so the tokenizer marks a word start where the text has one.
        chunk_start = spans[left][0] - (1 if left > 0 and text[spans[left][0] - 1] == " " else 0)
        encoded = tokenizer(text[chunk_start:spans[right - 1][1]], add_special_tokens=False,
                            return_offsets_mapping=True, truncation=False)
        shifted = [(piece, (a + chunk_start, b + chunk_start))
                   for piece, (a, b) in zip(encoded["input_ids"], encoded["offset_mapping"])]
        part, part_apart = _owners_or_cut(tokenizer, text, spans, left, right, shifted)
        owned += part
        apart |= part_apart
    return owned, apart


def _unk_for_empty_words(tokenizer, words: list[str], owners: list[tuple[int, int]]):
    """Give every word without a piece the unknown token, in its place; count them."""
    have = {word for _, word in owners}
    empty = [w for w in range(len(words)) if w not in have]
    if not empty:
        return owners, 0
    _require_unk(tokenizer, words[empty[0]])
    filled = owners + [(tokenizer.unk_token_id, w) for w in empty]
    filled.sort(key=lambda pair: pair[1])  # stable: a word's own pieces keep their order
    return filled, len(empty)


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
    """``"running_text"`` for a SentencePiece tokenizer, ``"word_ids"`` for another fast tokenizer,
    ``"per_word"`` for the fallback (recorded in results)."""
    if reads_running_text(tokenizer):
        return "running_text"
    return "word_ids" if getattr(tokenizer, "is_fast", False) else "per_word"


def check_alignment(word_of_token: Sequence[int], num_words: int, tokenizer=None) -> None:
    """Every word owns >= 1 piece, pieces run in word order, every other token is special.

    >>> check_alignment([-1, 0, 0, 1, -1], 2)
    >>> check_alignment([-1, 0, 2, -1], 3)
    Traceback (most recent call last):
    probing.errors.ProbingError: --model: the alignment gives word 1 of 3 no piece (pieces name words [0, 2]);
    the tokenizer cannot be aligned
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
    for words, encoding in zip(sentences, encodings(tokenizer, sentences, split_into_words=True)):
        input_ids, word_ids = encoding.ids, encoding.word_ids
        empty = sorted(set(range(len(words))) - {w for w in word_ids if w is not None})
        if empty:
            input_ids, word_ids = _retokenise_with_unk(tokenizer, words, empty)
        yield input_ids, word_ids, len(empty)


def encodings(tokenizer, inputs: list, *, split_into_words: bool) -> list:
    """The Rust tokenizer's ``Encoding`` of each input (``.ids``, ``.word_ids``, ``.offsets``,
    ``.special_tokens_mask``), special tokens added, nothing truncated or padded.

    What ``tokenizer(inputs, truncation=False)`` computes, read straight from the backend: the call's
    conversion of every encoding into Python lists and dictionaries cost as much as the tokenising itself
    (benchmarks/RESULTS.md, "The input side in worker processes"). The tokenizer is first set up as that call
    sets it up (no truncation, no padding: a tokenizer.json may carry either, and a truncated sentence would
    lose words; its own rule for special-token strings in the text), so the pieces are the same.

    >>> from probing.testing import tiny_wordpiece_tokenizer
    >>> [e.word_ids for e in encodings(tiny_wordpiece_tokenizer(), [["the", "cat"]], split_into_words=True)]
    [[None, 0, 1, None]]
    """
    from transformers.tokenization_utils_base import PaddingStrategy, TruncationStrategy

    tokenizer.set_truncation_and_padding(padding_strategy=PaddingStrategy.DO_NOT_PAD,
                                         truncation_strategy=TruncationStrategy.DO_NOT_TRUNCATE, max_length=None,
                                         stride=0, pad_to_multiple_of=None, padding_side=None)
    backend = tokenizer.backend_tokenizer
    if backend.encode_special_tokens != tokenizer.split_special_tokens:
        backend.encode_special_tokens = tokenizer.split_special_tokens
    return backend.encode_batch(inputs, add_special_tokens=True, is_pretokenized=split_into_words)


def _retokenise_with_unk(tokenizer, words: list[str], empty: list[int]) -> tuple[list[int], list[int | None]]:
    _require_unk(tokenizer, words[empty[0]])
    replaced = [tokenizer.unk_token if i in empty else word for i, word in enumerate(words)]
    encoding = encodings(tokenizer, [replaced], split_into_words=True)[0]
    return encoding.ids, encoding.word_ids


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
