"""Tiny models and tokenizers built offline, for tests, doctests and examples.

Nothing here touches the network: the tokenizer is trained on the spot with
the ``tokenizers`` package on the sample treebank's words, and the model is
drawn at random from a small config and saved to a temporary folder (removed
when the process ends), so every code path that loads "a checkpoint" can be
exercised exactly as with a real one. Only what the documentation's examples
need lives here; the test suite's own builders (every model family, planted
attention) are in tests/helpers.py.

>>> path = tiny_bert()
>>> sorted(p.name for p in Path(path).iterdir())[:2]
['config.json', 'model.safetensors']
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from probing.atomic import write_text_atomic
from probing.data.inputs import sample_treebank_path
from probing.data.treebank import read_treebank


@functools.lru_cache(maxsize=None)
def scratch_folder() -> Path:
    """One temporary folder per process for tiny checkpoints, removed when the process ends."""
    folder = Path(tempfile.mkdtemp(prefix="probing-tiny-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def sample_path() -> Path:
    """The project's sample treebank."""
    return sample_treebank_path()


@functools.lru_cache(maxsize=None)
def sample_split(dev_sentences: int = 40, test_sentences: int | None = None,
                 folder: Path | None = None) -> tuple[str, str]:
    """The sample treebank cut in two files, its first ``dev_sentences`` sentences as a dev split and the
    next ``test_sentences`` (by default the rest) as a test split, for held-out examples; their paths
    (``dev.conllu``, ``test.conllu`` in ``folder``, by default a scratch folder of this process).

    >>> dev, test = sample_split()
    >>> len(list(read_treebank(dev))), len(list(read_treebank(test)))
    (40, 35)
    >>> [len(list(read_treebank(path))) for path in sample_split(10, 10)]
    [10, 10]
    """
    blocks = [block for block in sample_path().read_text(encoding="utf-8").split("\n\n") if block.strip()]
    if folder is None:
        folder = scratch_folder() / f"sample-split-{dev_sentences}"
        folder.mkdir(exist_ok=True)
    test_end = None if test_sentences is None else dev_sentences + test_sentences
    paths = folder / "dev.conllu", folder / "test.conllu"
    for path, part in zip(paths, (blocks[:dev_sentences], blocks[dev_sentences:test_end])):
        write_text_atomic("\n\n".join(part) + "\n\n", path)
    return str(paths[0]), str(paths[1])


def training_words() -> list[str]:
    """Every word of the sample treebank: the corpus tiny tokenizers learn from."""
    return [word for sentence in read_treebank(sample_path()) for word in sentence.words]


@functools.lru_cache(maxsize=None)
def tiny_wordpiece_tokenizer(vocab_size: int = 300):
    """A BERT-style fast tokenizer with a small WordPiece vocabulary (words split often)."""
    return wordpiece_tokenizer(training_words(), vocab_size)


def wordpiece_tokenizer(words, vocab_size: int, *, lowercase: bool = True, max_length: int = 128):
    """A BERT-style fast tokenizer whose WordPiece vocabulary is learnt from ``words`` (an iterable of
    strings): what a model pre-trained from scratch on those words reads with.

    >>> tokenizer = wordpiece_tokenizer(["the", "cat", "sat", "on", "the", "mat"] * 5, 60)
    >>> tokenizer(["the", "cat"], is_split_into_words=True).input_ids[0] == tokenizer.cls_token_id
    True
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    backend = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False)
    backend.train_from_iterator([" ".join(words)], trainer=trainer)
    cls_id, sep_id = backend.token_to_id("[CLS]"), backend.token_to_id("[SEP]")
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=max_length,
    )


@functools.lru_cache(maxsize=None)
def tiny_bert(num_layers: int = 2, num_heads: int = 4, seed: int = 0) -> str:
    """Save a random BERT (with its tiny tokenizer) to a folder and return the folder."""
    import torch
    from transformers import BertConfig, BertForMaskedLM
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()

    tokenizer = tiny_wordpiece_tokenizer()
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=16 * num_heads,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        intermediate_size=32 * num_heads,
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = BertForMaskedLM(config)
    folder = scratch_folder() / f"bert-{num_layers}x{num_heads}-seed{seed}"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def planted_language_result(treebank: str, *, chosen: tuple[int, int, str], correct: dict[tuple[int, int], int],
                            total: int, relation: str = "dobj", offsets_correct: tuple[int, ...] = (0, 0, 1, 2, 0, 0),
                            num_layers: int = 2, num_heads: int = 2) -> dict:
    """A held-out probe result of one language with planted counts, for the transfer matrix's doctests and tests.

    ``chosen`` is the (layer, head, direction) its choice half chose, ``correct[(layer, head)]`` the correct
    count of that head in ``dep_to_head`` on its report half of ``total`` pairs (every other count 0), and
    ``offsets_correct`` the counts of offsets -3..+3 (without 0). No bootstrap: intervals are None.
    """
    heads = {direction: [[0] * num_heads for _ in range(num_layers)] for direction in ("dep_to_head", "head_to_dep")}
    for (layer, head), count in correct.items():
        heads["dep_to_head"][layer][head] = count
    from probing.analyses.probe.counts import OFFSETS  # here: importing probing.testing loads no torch

    offsets = list(OFFSETS)
    best = max(range(len(offsets)), key=lambda i: (offsets_correct[i], -i))
    layer, head, direction = chosen
    dev = {"pairs": total, "head": {"layer": layer, "head": head, "direction": direction, "accuracy": 1.0, "ties": 1},
           "baseline": {"offset": offsets[best], "accuracy": 1.0, "ties": 1}}
    reported = {"head": {"layer": layer, "head": head, "direction": direction,
                         "accuracy": heads[direction][layer][head] / total, "interval": None},
                "baseline": {"offset": offsets[best], "accuracy": offsets_correct[best] / total, "interval": None},
                "difference": None}
    return {
        "analysis": "probe",
        "model": {"name_or_path": "planted", "fingerprint": "f", "random_init": False, "num_layers": num_layers,
                  "num_heads": num_heads},
        "config": {"offsets": offsets, "pooling": {"to": "sum", "from": "mean"}, "attention": "weights"},
        "treebank": {"path": f"{treebank}:odd"},
        "relations": {relation: {"total": total, "heads": heads,
                                 "baselines": {str(o): c for o, c in zip(offsets, offsets_correct)}}},
        "bootstrap": None,
        "heldout": {"relations": {relation: {"pairs": total, "dev": dev, "heldout": reported}}},
    }
