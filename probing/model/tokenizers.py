"""Tokenizers that read pre-split words as running text.

Byte-level BPE tokenizers (GPT-2, RoBERTa, Llama 3) mark the start of a word
with a leading space, which words split by a treebank lack. Those tokenizers,
and only they, get ``add_prefix_space=True`` (or, when their class ignores
the option, a normaliser that prepends the space); every other tokenizer is
used as it comes. A tokenizer's warning about inputs longer than the model
allows is silenced: passes measure every unit and skip those over the limit.
Minimal pairs read running text, not pre-split words: they take the
checkpoint's tokenizer as it comes (:func:`plain_tokenizer`), loaded here too.

>>> from probing.testing import tiny_wordpiece_tokenizer
>>> tokenizer = tiny_wordpiece_tokenizer()
>>> byte_level_states(tokenizer), prefix_space_rule(tokenizer), lacks_prefix_space(tokenizer)
([], None, False)
"""

from __future__ import annotations

import json


def load_tokenizer(name_or_path: str, common: dict, *, plain: bool = False):
    """A tokenizer whose pre-split words are tokenised as in running text; ``common``: the options of every read
    of the checkpoint (``revision``, ``trust_remote_code``).

    Byte-level BPE marks a word start with a leading space, which pre-split
    words lack: such tokenizers (and only those) are reloaded with
    ``add_prefix_space=True``; a tokenizer class that ignores the option gets
    a normaliser that prepends the space to each word instead. ``plain``: the
    tokenizer as it comes, for text that is not pre-split.
    """
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name_or_path, **common)
    if not plain and lacks_prefix_space(tokenizer):
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, add_prefix_space=True, **common)
        if lacks_prefix_space(tokenizer):
            prepend_space_to_words(tokenizer)
    quiet_about_long_inputs(tokenizer)
    return tokenizer


def plain_tokenizer(loaded):
    """The checkpoint of ``loaded`` (a probing.model.loading.LoadedModel) tokenizer as it reads plain text, read
    with the options the model was loaded with (its revision; its own code only where that was trusted): the
    loaded one may have been given a space before every pre-split word, which would change a sentence's first
    token.
    """
    return load_tokenizer(loaded.name_or_path, {"revision": loaded.revision,
                                                "trust_remote_code": loaded.trust_remote_code}, plain=True)


LONG_INPUT_WARNING = "sequence-length-is-longer-than-the-specified-maximum"
"""The key under which a transformers tokenizer records that it has warned about a long input."""


def quiet_about_long_inputs(tokenizer) -> None:
    """Keep a tokenizer from warning that an input is longer than the model allows.

    Its warning ("Token indices sequence length is longer than the specified
    maximum ... will result in indexing errors") is given the first time it
    encodes such an input, and says nothing true here: passes measure every
    unit and skip (and count) those over the limit, so no long input reaches
    the model. The tokenizer keeps a flag per warning it has given; setting
    this one marks it as given.
    """
    flags = getattr(tokenizer, "deprecation_warnings", None)
    if isinstance(flags, dict):
        flags[LONG_INPUT_WARNING] = True


def byte_level_states(tokenizer) -> list[dict]:
    """The ByteLevel steps of a fast tokenizer's pre-tokenizer (empty for other tokenizers)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    pre_tokenizer = getattr(backend, "pre_tokenizer", None)
    if pre_tokenizer is None:
        return []
    found, pending = [], [json.loads(pre_tokenizer.__getstate__())]
    while pending:
        state = pending.pop()
        if state.get("type") == "ByteLevel":
            found.append(state)
        pending.extend(state.get("pretokenizers", []))
    return found


def prefix_space_rule(tokenizer) -> str | None:
    """How a byte-level BPE tokenizer gets a space before each word: ``"add_prefix_space"``
    (its own option) or ``"normalizer"`` (:func:`prepend_space_to_words`); None for other tokenizers."""
    states = byte_level_states(tokenizer)
    if not states:
        return None
    if _prepends_space(tokenizer):
        return "normalizer"
    return "add_prefix_space" if any(state.get("add_prefix_space") for state in states) else None


def _prepends_space(tokenizer) -> bool:
    normalizer = getattr(tokenizer.backend_tokenizer, "normalizer", None)
    return normalizer is not None and '"Prepend"' in normalizer.__getstate__().decode("utf-8", "replace")


def lacks_prefix_space(tokenizer) -> bool:
    """Whether a byte-level BPE tokenizer would read a pre-split word without the space before it."""
    states = byte_level_states(tokenizer)
    return bool(states) and not any(state.get("add_prefix_space") for state in states) and not _prepends_space(tokenizer)


def prepend_space_to_words(tokenizer) -> None:
    """Give a byte-level tokenizer that ignores ``add_prefix_space`` a normaliser that
    prepends a space to each (pre-split) word, so ``cat`` becomes ``Ġcat`` as in running text."""
    from tokenizers import normalizers

    backend = tokenizer.backend_tokenizer
    space = normalizers.Prepend(" ")
    backend.normalizer = space if backend.normalizer is None else normalizers.Sequence([backend.normalizer, space])
