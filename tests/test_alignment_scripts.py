"""Alignment on every script of the PUD treebanks: Latin, Han, Arabic, Devanagari, Cyrillic.

SentencePiece tokenizers read running text (spaces only where the treebank has them); a piece that spans
two words is never shared: the text is cut there and both words are counted as tokenized apart. Offline,
with tiny tokenizers trained here on a few sentences of each script (an XLM-R-like Unigram with Metaspace,
a Gemma-like BPE that writes spaces as ``▁`` and marks no word start, and a byte-level BPE); with the real
multilingual-e5-small and gemma-3-270m tokenizers on the shared PUD files where they are present.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
from conftest import _unavailable

from probing.data.treebank import read_treebank
from probing.model.alignment import SPECIAL, align_words, alignment_method, reads_running_text, running_text

# (words, space after each word), one sentence per script, as a treebank gives them
SCRIPTS = {
    "latin": (("Der", "Hund", "sieht", "seinen", "Ball", "."), (True, True, True, True, False, True)),
    "han": (("我们", "的", "人", "来", "了", "。"), (False,) * 6),
    "arabic": (("كتبت", "ل", "أوباما", "رسالة", "."), (True, False, True, False, True)),
    "devanagari": (("राम", "ने", "किताब", "पढ़ी", "।"), (True, True, True, False, True)),
    "cyrillic": (("Мальчик", "читает", "свою", "книгу", "."), (True, True, True, False, True)),
}
CORPUS = [running_text(words, spaces)[0] for words, spaces in SCRIPTS.values()] * 30 + ["的人 的人 的人"] * 50


def _wrap(backend, specials: dict[str, str]):
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_object=backend, **specials)


@functools.lru_cache(maxsize=None)
def xlmr_like():
    """Unigram behind Metaspace (a ▁ before every chunk of text), ``<s> ... </s>``: XLM-R's scheme."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    backend = Tokenizer(models.Unigram())
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    backend.train_from_iterator(CORPUS, trainers.UnigramTrainer(vocab_size=180, special_tokens=specials,
                                                                unk_token="<unk>", show_progress=False))
    backend.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", backend.token_to_id("<s>")), ("</s>", backend.token_to_id("</s>"))])
    return _wrap(backend, {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"})


@functools.lru_cache(maxsize=None)
def gemma_like():
    """BPE over the whole text with spaces written as ▁ and no marker added before the first word, ``<bos> ...``:
    Gemma's scheme (its merges may cross word boundaries, as ``的人`` does here)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, processors, trainers

    backend = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    backend.normalizer = normalizers.Replace(" ", "\u2581")
    backend.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()])
    specials = ["<pad>", "<eos>", "<bos>", "<unk>"] + [f"<0x{byte:02X}>" for byte in range(256)]
    backend.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=600, special_tokens=specials, show_progress=False))
    backend.post_processor = processors.TemplateProcessing(
        single="<bos> $A", special_tokens=[("<bos>", backend.token_to_id("<bos>"))])
    return _wrap(backend, {"bos_token": "<bos>", "eos_token": "<eos>", "unk_token": "<unk>", "pad_token": "<pad>"})


@functools.lru_cache(maxsize=None)
def byte_level():
    """Byte-level BPE with the prefix space (GPT-2's scheme as probing loads it): pre-split words."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    backend.decoder = decoders.ByteLevel()
    backend.train_from_iterator(CORPUS, trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    return _wrap(backend, {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"})


def pieces_of_words(tokenizer, aligned, count: int) -> list[str]:
    """Each word's pieces joined, with the space marks taken out."""
    tokens = tokenizer.convert_ids_to_tokens(list(aligned.input_ids))
    joined = [""] * count
    for token, word in zip(tokens, aligned.word_of_token):
        if word != SPECIAL:
            joined[word] += token
    return [text.replace("\u2581", "").replace("\u0120", "") for text in joined]


@pytest.mark.parametrize("script", sorted(SCRIPTS))
@pytest.mark.parametrize("make", [xlmr_like, gemma_like], ids=["xlmr-like", "gemma-like"])
def test_sentencepiece_reads_running_text_and_never_shares_a_piece(make, script):
    tokenizer = make()
    words, spaces = SCRIPTS[script]
    assert reads_running_text(tokenizer) and alignment_method(tokenizer) == "running_text"
    aligned = align_words(tokenizer, [words], spaces=[spaces])[0]  # raises unless every word owns a piece, in order
    if make is gemma_like:  # byte fallback: pieces are bytes where the vocabulary lacks a character
        decoded = [tokenizer.decode([i for i, w in zip(aligned.input_ids, aligned.word_of_token) if w == word])
                   for word in range(len(words))]
        assert [text.strip() for text in decoded] == list(words)
    else:
        assert pieces_of_words(tokenizer, aligned, len(words)) == list(words)
    text, _ = running_text(words, spaces)
    if aligned.tokenized_apart == 0:  # the model reads exactly the running text
        assert list(aligned.input_ids) == tokenizer(text)["input_ids"]


def test_a_piece_across_two_words_is_cut_and_counted():
    tokenizer = gemma_like()
    words, spaces = ("的", "人"), (False, True)
    assert tokenizer.convert_ids_to_tokens(tokenizer("的人", add_special_tokens=False)["input_ids"]) == ["的人"]
    aligned = align_words(tokenizer, [words], spaces=[spaces])[0]
    assert aligned.tokenized_apart == 2
    assert aligned.word_of_token == (SPECIAL, 0, 1)
    assert tokenizer.convert_ids_to_tokens(list(aligned.input_ids)[1:]) == ["的", "人"]


def test_no_space_marks_where_the_text_has_none():
    xlmr, gemma = xlmr_like(), gemma_like()
    words, spaces = SCRIPTS["han"]
    # pre-split words would put a ▁ before every Chinese word; running text has one only at the start
    xlmr_tokens = xlmr.convert_ids_to_tokens(list(align_words(xlmr, [words], spaces=[spaces])[0].input_ids))
    assert sum(token.startswith("\u2581") for token in xlmr_tokens) <= 1 + align_words(
        xlmr, [words], spaces=[spaces])[0].tokenized_apart
    # Gemma's tokenizer marks no word on its own: the space of running text is what marks "Hund"
    latin = align_words(gemma, [SCRIPTS["latin"][0]], spaces=[SCRIPTS["latin"][1]])[0]
    tokens = gemma.convert_ids_to_tokens(list(latin.input_ids))
    firsts = {word: tokens[latin.word_of_token.index(word)] for word in range(len(SCRIPTS["latin"][0]))}
    assert not firsts[0].startswith("\u2581") and firsts[1].startswith("\u2581") and firsts[5] == "."


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_byte_level_gives_each_word_its_own_pieces(script):
    tokenizer = byte_level()
    words, spaces = SCRIPTS[script]
    assert not reads_running_text(tokenizer) and alignment_method(tokenizer) == "word_ids"
    aligned = align_words(tokenizer, [words], spaces=[spaces])[0]
    assert aligned.tokenized_apart == 0
    decoded = [tokenizer.decode([i for i, w in zip(aligned.input_ids, aligned.word_of_token) if w == word]).strip()
               for word in range(len(words))]
    assert decoded == list(words)


# ------------------------------------------------------------------ the real tokenizers on the PUD files

PUD_SCRIPTS = {"de_pud": "latin", "fr_pud": "latin", "fi_pud": "latin", "tr_pud": "latin", "zh_pud": "han",
               "ar_pud": "arabic", "hi_pud": "devanagari", "ru_pud": "cyrillic"}


@functools.lru_cache(maxsize=None)
def _real_tokenizer(folder: str):
    root = os.environ.get("PROBING_MODELS")
    if not root or not (Path(root) / folder / "tokenizer.json").is_file():
        _unavailable(f"checkpoint {folder}", "set PROBING_MODELS to a folder holding it")
    from probing.model.tokenizers import load_tokenizer

    return load_tokenizer(str(Path(root) / folder), {"revision": None, "trust_remote_code": False})


def _pud(name: str) -> Path:
    root = Path(os.environ.get("PROBING_TREEBANKS") or Path(__file__).resolve().parents[2] / "shared" / "treebanks")
    path = root / name / f"{name}-ud-test.conllu"
    if not path.is_file():
        _unavailable(f"treebank {name}", "set PROBING_TREEBANKS to the folder holding the PUD treebanks")
    return path


@pytest.mark.real_data
@pytest.mark.parametrize("folder", ["multilingual-e5-small", "gemma-3-270m"])
@pytest.mark.parametrize("name", sorted(PUD_SCRIPTS))
def test_real_tokenizers_on_every_pud_script(folder, name):
    tokenizer = _real_tokenizer(folder)
    sentences = [s for s, _ in zip(read_treebank(_pud(name)), range(40))]
    aligned = align_words(tokenizer, [s.words for s in sentences], spaces=[s.space_after for s in sentences])
    assert alignment_method(tokenizer) == "running_text"
    exact = 0
    for sentence, item in zip(sentences, aligned):
        words = [w for w in item.word_of_token if w != SPECIAL]
        assert sorted(set(words)) == list(range(len(sentence))) and words == sorted(words)
        if item.tokenized_apart == 0:
            text, _ = running_text(sentence.words, sentence.space_after)
            assert list(item.input_ids) == tokenizer(text)["input_ids"]
            exact += 1
    # Latin, Cyrillic and Devanagari text cuts a piece only at the odd punctuation; Han and Arabic clitics more
    assert exact >= (5 if PUD_SCRIPTS[name] in ("han", "arabic") else 20)
