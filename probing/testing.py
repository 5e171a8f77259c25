"""Tiny models and tokenizers built offline, for tests, doctests and examples.

Nothing here touches the network: tokenizers are trained on the spot with the
``tokenizers`` package on the sample treebank's words, and models are drawn
at random from a small config and saved to a temporary folder, so every code
path that loads "a checkpoint" can be exercised exactly as with a real one.

>>> path = tiny_bert()
>>> sorted(p.name for p in Path(path).iterdir())[:2]
['config.json', 'model.safetensors']
"""

from __future__ import annotations

import contextlib
import functools
import tempfile
from collections.abc import Iterator
from pathlib import Path

import torch

from .pipeline import sample_treebank_path
from .treebank import read_treebank

_TMP = Path(tempfile.mkdtemp(prefix="probing-tiny-"))


def sample_path() -> Path:
    """The project's sample treebank."""
    return sample_treebank_path()


def training_words() -> list[str]:
    """Every word of the sample treebank: the corpus tiny tokenizers learn from."""
    return [word for sentence in read_treebank(sample_path()) for word in sentence.words]


@functools.lru_cache(maxsize=None)
def tiny_wordpiece_tokenizer(vocab_size: int = 300):
    """A BERT-style fast tokenizer with a small WordPiece vocabulary (words split often)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    backend = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials)
    backend.train_from_iterator([" ".join(training_words())], trainer=trainer)
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
        model_max_length=128,
    )


@functools.lru_cache(maxsize=None)
def tiny_bert(num_layers: int = 2, num_heads: int = 4, seed: int = 0) -> str:
    """Save a random BERT (with its tiny tokenizer) to a folder and return the folder."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

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
    folder = _TMP / f"bert-{num_layers}x{num_heads}-seed{seed}"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


# --------------------------------------------------------------------------------------------
# Heads with planted positional patterns (previous token, [SEP], uniform, ...).

PLANTED_HEADS = "probing_planted_heads"
"""The name :func:`planted_head_attention` registers its attention function under."""

HEAD_PATTERNS = ("previous", "next", "self", "first", "last", "uniform")


@contextlib.contextmanager
def planted_head_attention(model, patterns: dict[int, str]) -> Iterator[None]:
    """Within the block, head ``h`` of every layer attends by the rule ``patterns[h]``.

    Rules, over each row's real keys (padding never gets weight): ``previous``
    (token i -> i-1; the first token -> itself), ``next`` (i -> i+1; the last
    real token -> itself), ``self``, ``first`` (the first token, [CLS] in BERT),
    ``last`` (the last real token, the final [SEP] in BERT) and ``uniform``.
    Other heads keep eager softmax attention, so the model still runs as
    trained and gradients flow through every head.

    >>> import torch
    >>> from transformers import AutoModel
    >>> model = AutoModel.from_pretrained(tiny_bert(), attn_implementation="eager")
    >>> ids, mask = torch.tensor([[2, 10, 11, 3, 0]]), torch.tensor([[1, 1, 1, 1, 0]])
    >>> with planted_head_attention(model, {0: "previous", 1: "last"}):
    ...     maps = model(input_ids=ids, attention_mask=mask, output_attentions=True).attentions
    >>> maps[0][0, 0, :4].argmax(-1).tolist(), maps[1][0, 1, :4].argmax(-1).tolist()
    ([0, 0, 1, 2], [3, 3, 3, 3])
    """
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

    unknown = sorted(set(patterns.values()) - set(HEAD_PATTERNS))
    if unknown:
        raise ValueError(f"unknown head patterns {unknown}; known: {', '.join(HEAD_PATTERNS)}")

    def attend(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        scaling = query.shape[-1] ** -0.5 if scaling is None else scaling
        scores = torch.matmul(query, key.transpose(2, 3)) * scaling  # [batch, head, query, key]
        visible = torch.ones_like(scores, dtype=torch.bool)
        if attention_mask is not None:
            mask = attention_mask[..., : key.shape[-2]]
            visible = visible & (mask if mask.dtype == torch.bool else mask == 0)
            scores = scores.masked_fill(~visible, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1)
        planted = torch.stack([_planted_rows(visible[:, 0], patterns.get(h)) for h in range(weights.shape[1])], dim=1)
        chosen = torch.tensor([h in patterns for h in range(weights.shape[1])], device=weights.device).view(1, -1, 1, 1)
        weights = torch.where(chosen, planted.to(weights.dtype), weights)  # no in-place edit: softmax needs its output
        if value.shape[1] != weights.shape[1]:  # grouped-query attention shares each key/value head
            value = value.repeat_interleave(weights.shape[1] // value.shape[1], dim=1)
        return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights

    AttentionInterface.register(PLANTED_HEADS, attend)
    AttentionMaskInterface.register(PLANTED_HEADS, ALL_MASK_ATTENTION_FUNCTIONS["eager"])  # padding masks as eager
    before = model.config._attn_implementation
    model.set_attn_implementation(PLANTED_HEADS)
    try:
        yield
    finally:
        model.set_attn_implementation(before)


def _planted_rows(visible: torch.Tensor, rule: str | None) -> torch.Tensor:
    """[batch, query, key] weights of one planted rule; visible: bool [batch, query, key]."""
    if rule is None or rule == "uniform":
        return visible.float() / visible.sum(dim=-1, keepdim=True).clamp_min(1)
    batch, queries, keys = visible.shape
    position = torch.arange(queries, device=visible.device).view(1, -1).expand(batch, -1)  # [batch, query]
    last = (visible.sum(dim=-1) - 1).clamp_min(0)  # [batch, query]: the last real key (right padding)
    target = {
        "previous": (position - 1).clamp_min(0),
        "next": position + 1,
        "self": position,
        "first": torch.zeros_like(position),
        "last": last,
    }[rule]
    return torch.nn.functional.one_hot(torch.minimum(target, last), keys).float()
