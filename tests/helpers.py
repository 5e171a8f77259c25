"""Test-only builders: a tiny checkpoint of every model family, hand-made treebanks, planted attention.

Nothing here touches the network: tokenizers are trained on the spot on the
sample treebank's words, models are drawn at random from small configs and
saved to the process's scratch folder (probing.testing.scratch_folder).
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from probing.data.treebank import read_treebank
from probing.model.interventions import attention_override
from probing.testing import scratch_folder, tiny_bert, tiny_wordpiece_tokenizer, training_words

__all__ = ["tiny_bert", "tiny_wordpiece_tokenizer"]

# --------------------------------------------------------------------------------------------
# One tiny checkpoint per model family, each with the tokenizer class real checkpoints ship.

SPLIT_TREEBANK = """\
# sent_id = split-1
# text = The quarterbacks unexpectedly resigned yesterday.
1	The	the	DET	DT	_	2	det	_	_
2	quarterbacks	quarterback	NOUN	NNS	_	4	nsubj	_	_
3	unexpectedly	unexpectedly	ADV	RB	_	4	advmod	_	_
4	resigned	resign	VERB	VBD	_	0	root	_	_
5	yesterday	yesterday	NOUN	NN	_	4	obl:tmod	_	SpaceAfter=No
6	.	.	PUNCT	.	_	4	punct	_	_

# sent_id = split-2
# text = Researchers examined the committee's recommendations carefully.
1	Researchers	researcher	NOUN	NNS	_	2	nsubj	_	_
2	examined	examine	VERB	VBD	_	0	root	_	_
3	the	the	DET	DT	_	4	det	_	_
4	committee	committee	NOUN	NN	_	6	nmod:poss	_	SpaceAfter=No
5	's	's	PART	POS	_	4	case	_	_
6	recommendations	recommendation	NOUN	NNS	_	2	obj	_	_
7	carefully	carefully	ADV	RB	_	2	advmod	_	SpaceAfter=No
8	.	.	PUNCT	.	_	2	punct	_	_

# sent_id = split-3
# text = Volunteers distributed blankets to displaced families.
1	Volunteers	volunteer	NOUN	NNS	_	2	nsubj	_	_
2	distributed	distribute	VERB	VBD	_	0	root	_	_
3	blankets	blanket	NOUN	NNS	_	2	obj	_	_
4	to	to	ADP	IN	_	6	case	_	_
5	displaced	displace	VERB	VBN	_	6	amod	_	_
6	families	family	NOUN	NNS	_	2	obl	_	SpaceAfter=No
7	.	.	PUNCT	.	_	2	punct	_	_

# sent_id = split-4
# text = Unfortunately, nobody remembered.
1	Unfortunately	unfortunately	ADV	RB	_	4	advmod	_	SpaceAfter=No
2	,	,	PUNCT	,	_	4	punct	_	_
3	nobody	nobody	PRON	NN	_	4	nsubj	_	_
4	remembered	remember	VERB	VBD	_	0	root	_	SpaceAfter=No
5	.	.	PUNCT	.	_	4	punct	_	_

"""
"""Four hand-made sentences whose long words split into several pieces under the tiny
vocabularies; heads lie on both sides, so causal reachability differs by direction."""


def split_treebank_path() -> Path:
    """:data:`SPLIT_TREEBANK` written to a file (once per process)."""
    path = scratch_folder() / "split.conllu"
    if not path.is_file():
        path.write_text(SPLIT_TREEBANK, encoding="utf-8")
    return path


def _corpus() -> list[str]:
    return [" ".join(training_words())]


@functools.lru_cache(maxsize=None)
def _byte_level_bpe(vocab_size: int, specials: tuple[str, ...]) -> tuple[dict, list]:
    """A byte-level BPE (GPT-2's scheme: no prefix space) trained on the sample words."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(specials),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(_corpus(), trainer=trainer)
    model = json.loads(backend.to_str())["model"]
    return model["vocab"], [tuple(merge) for merge in model["merges"]]


@functools.lru_cache(maxsize=None)
def _unigram(vocab_size: int, specials: tuple[str, ...], unk: str) -> list[tuple[str, float]]:
    """A SentencePiece-style Unigram vocabulary (``▁`` marks a word start) trained on the sample words."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    backend = Tokenizer(models.Unigram())
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size, special_tokens=list(specials), unk_token=unk, show_progress=False
    )
    backend.train_from_iterator(_corpus(), trainer=trainer)
    return [(piece, float(score)) for piece, score in json.loads(backend.to_str())["model"]["vocab"]]


def tiny_bpe_tokenizer(kind: str = "gpt2"):
    """A byte-level BPE tokenizer of class ``GPT2Tokenizer`` (no special tokens, no BOS)
    or ``RobertaTokenizer`` (``<s> ... </s>``), saved without ``add_prefix_space``
    as the real checkpoints are."""
    from transformers import GPT2Tokenizer, RobertaTokenizer

    if kind == "gpt2":
        vocab, merges = _byte_level_bpe(400, ("<|endoftext|>",))
        return GPT2Tokenizer(vocab=vocab, merges=merges, model_max_length=128)
    if kind == "roberta":
        vocab, merges = _byte_level_bpe(400, ("<s>", "<pad>", "</s>", "<unk>", "<mask>"))
        return RobertaTokenizer(vocab=vocab, merges=merges, model_max_length=128)
    raise ValueError(f"unknown byte-level BPE kind {kind!r}")


_UNIGRAM_KINDS = {
    # kind: (tokenizer class name, special tokens in vocabulary order, unknown token, extra kwargs)
    "xlm-roberta": ("XLMRobertaTokenizer", ("<s>", "<pad>", "</s>", "<unk>", "<mask>"), "<unk>", {}),
    "albert": ("AlbertTokenizer", ("<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"), "<unk>", {}),
    "deberta-v2": ("DebertaV2Tokenizer", ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"), "[UNK]", {}),
    "t5": ("T5Tokenizer", ("<pad>", "</s>", "<unk>"), "<unk>", {"extra_ids": 0}),
}


def tiny_unigram_tokenizer(kind: str = "xlm-roberta"):
    """A SentencePiece/Unigram tokenizer of the class that ``kind``'s checkpoints use."""
    import transformers

    class_name, specials, unk, extra = _UNIGRAM_KINDS[kind]
    vocab = _unigram(300, specials, unk)
    return getattr(transformers, class_name)(vocab=vocab, model_max_length=128, **extra)


def _wordpiece_vocab() -> dict[str, int]:
    return tiny_wordpiece_tokenizer().get_vocab()


def _bert_tokenizer():
    from transformers import BertTokenizer

    return BertTokenizer(vocab=_wordpiece_vocab(), model_max_length=128)


def _mpnet_tokenizer():
    from transformers import MPNetTokenizer

    vocab = dict(_wordpiece_vocab())
    for token in ("<s>", "</s>", "<pad>", "<mask>"):
        vocab.setdefault(token, len(vocab))
    return MPNetTokenizer(vocab=vocab, unk_token="[UNK]", model_max_length=128)


def _llama_tokenizer():
    """A Llama-style tokenizer: Metaspace BPE whose post-processor adds ``<s>`` (BOS)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaTokenizer

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always")
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    backend.train_from_iterator(_corpus(), trainer=trainer)
    model = json.loads(backend.to_str())["model"]
    merges = [tuple(merge) for merge in model["merges"]]
    return LlamaTokenizer(vocab=model["vocab"], merges=merges, add_bos_token=True, model_max_length=128)


def _llama3_tokenizer():
    """A Llama-3-style tokenizer: a generic fast tokenizer (no model-specific class, so no
    ``add_prefix_space`` option) whose regex split feeds a byte-level BPE, BOS added."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    split = pre_tokenizers.Split(Regex(r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+"), "isolated")
    backend.pre_tokenizer = pre_tokenizers.Sequence([split, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|begin_of_text|>", "<|end_of_text|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(_corpus(), trainer=trainer)
    bos = backend.token_to_id("<|begin_of_text|>")
    backend.post_processor = processors.TemplateProcessing(
        single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A $B", special_tokens=[("<|begin_of_text|>", bos)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<|begin_of_text|>", eos_token="<|end_of_text|>", model_max_length=128
    )


def _encoder_config(name: str):
    def build(tokenizer, layers: int, heads: int):
        import transformers

        sizes = dict(hidden_size=16 * heads, num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=32 * heads)
        positions = 128 + (tokenizer.pad_token_id + 1 if name in ("RobertaConfig", "XLMRobertaConfig", "MPNetConfig") else 0)
        extra = {"embedding_size": 16} if name == "AlbertConfig" else {}
        return getattr(transformers, name)(
            vocab_size=len(tokenizer), max_position_embeddings=positions, pad_token_id=tokenizer.pad_token_id, **sizes, **extra
        )

    return build


def _distilbert_config(tokenizer, layers: int, heads: int):
    from transformers import DistilBertConfig

    return DistilBertConfig(
        vocab_size=len(tokenizer), dim=16 * heads, n_layers=layers, n_heads=heads, hidden_dim=32 * heads,
        max_position_embeddings=128, pad_token_id=tokenizer.pad_token_id,
    )


def _gpt2_config(tokenizer, layers: int, heads: int):
    from transformers import GPT2Config

    bos = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    return GPT2Config(
        vocab_size=len(tokenizer), n_embd=16 * heads, n_layer=layers, n_head=heads, n_positions=128,
        bos_token_id=bos, eos_token_id=bos,
    )


def _grouped_kv_heads(heads: int) -> int:
    """The most key-value heads, at most half the query heads, that divide them (grouped-query attention needs a
    divisor: 9 query heads get 3, as SmolLM2-135M has; 4 get 2; 1 gets 1).

    >>> [_grouped_kv_heads(h) for h in (1, 4, 9, 12)]
    [1, 2, 3, 6]
    """
    return next(d for d in range(max(heads // 2, 1), 0, -1) if heads % d == 0)


def _llama_config(tokenizer, layers: int, heads: int):
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=16 * heads, num_hidden_layers=layers, num_attention_heads=heads,
        num_key_value_heads=_grouped_kv_heads(heads), intermediate_size=32 * heads, max_position_embeddings=128,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
    )


def _t5_config(tokenizer, layers: int, heads: int):
    from transformers import T5Config

    return T5Config(
        vocab_size=len(tokenizer), d_model=16 * heads, d_kv=16, d_ff=32 * heads, num_layers=layers, num_heads=heads,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )


@dataclass(frozen=True)
class TinyFamily:
    """How to build one family's tiny checkpoint: tokenizer, config, head class."""

    tokenizer_type: str
    tokenizer: Callable[[], object]
    config: Callable[[object, int, int], object]
    model_class: str


TINY_FAMILIES: dict[str, TinyFamily] = {
    "bert": TinyFamily("WordPiece", _bert_tokenizer, _encoder_config("BertConfig"), "BertForMaskedLM"),
    "distilbert": TinyFamily("WordPiece", _bert_tokenizer, _distilbert_config, "DistilBertForMaskedLM"),
    "electra": TinyFamily("WordPiece", _bert_tokenizer, _encoder_config("ElectraConfig"), "ElectraForMaskedLM"),
    "mpnet": TinyFamily("WordPiece", _mpnet_tokenizer, _encoder_config("MPNetConfig"), "MPNetForMaskedLM"),
    "roberta": TinyFamily(
        "byte-level BPE", lambda: tiny_bpe_tokenizer("roberta"), _encoder_config("RobertaConfig"), "RobertaForMaskedLM"
    ),
    "gpt2": TinyFamily("byte-level BPE", lambda: tiny_bpe_tokenizer("gpt2"), _gpt2_config, "GPT2LMHeadModel"),
    "xlm-roberta": TinyFamily(
        "Unigram", lambda: tiny_unigram_tokenizer("xlm-roberta"), _encoder_config("XLMRobertaConfig"), "XLMRobertaForMaskedLM"
    ),
    "albert": TinyFamily(
        "Unigram", lambda: tiny_unigram_tokenizer("albert"), _encoder_config("AlbertConfig"), "AlbertForMaskedLM"
    ),
    "deberta-v2": TinyFamily(
        "Unigram", lambda: tiny_unigram_tokenizer("deberta-v2"), _encoder_config("DebertaV2Config"), "DebertaV2ForMaskedLM"
    ),
    "t5": TinyFamily("Unigram", lambda: tiny_unigram_tokenizer("t5"), _t5_config, "T5ForConditionalGeneration"),
    "llama": TinyFamily("Metaspace BPE", _llama_tokenizer, _llama_config, "LlamaForCausalLM"),
    "llama3": TinyFamily("byte-level BPE", _llama3_tokenizer, _llama_config, "LlamaForCausalLM"),
}
"""Every family the tests run end to end; the key is what :func:`tiny_model` takes."""


@functools.lru_cache(maxsize=None)
def tiny_model(family: str, num_layers: int = 2, num_heads: int = 4, seed: int = 0) -> str:
    """Save a random tiny checkpoint of ``family`` (see :data:`TINY_FAMILIES`) and return its folder.

    >>> Path(tiny_model("gpt2")).name
    'gpt2-2x4-seed0'
    """
    import torch
    import transformers
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    spec = TINY_FAMILIES[family]
    tokenizer = spec.tokenizer()
    config = spec.config(tokenizer, num_layers, num_heads)
    torch.manual_seed(seed)
    model = getattr(transformers, spec.model_class)(config)
    # a folder of its own: probing.testing.tiny_bert saves another model as bert-2x4-seed0 in the scratch folder,
    # and a run that chose on one of them must not find the other's bytes there later in the same process
    folder = scratch_folder() / "families" / f"{family}-{num_layers}x{num_heads}-seed{seed}"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@functools.lru_cache(maxsize=None)
def tiny_gemma(sliding_window: int = 512, softcap: float | None = None, seed: int = 0) -> str:
    """A random tiny Gemma-3 decoder (not a :data:`TINY_FAMILIES` family): sliding-window and full layers
    alternating, one key-value head, its logits soft-capped at ``softcap`` when given (as gemma-3-270m's may be)."""
    import transformers

    tokenizer = _llama_tokenizer()
    config = transformers.Gemma3TextConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=16, sliding_window=sliding_window,
        layer_types=["sliding_attention", "full_attention"], final_logit_softcapping=softcap,
        max_position_embeddings=128, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=0,
    )
    torch.manual_seed(seed)
    model = transformers.Gemma3ForCausalLM(config)
    folder = scratch_folder() / f"gemma3-w{sliding_window}-cap{softcap}-seed{seed}"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def tiny_slow_bert() -> str:
    """A tiny BERT whose tokenizer has no fast version (``BertTokenizerLegacy``, pure Python):
    the checkpoint that exercises the per-word alignment fallback."""
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

    folder = scratch_folder() / "slow-bert"
    if not folder.is_dir():
        shutil.copytree(tiny_model("bert"), folder)
        for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
            (folder / name).unlink(missing_ok=True)
        vocab = sorted(_wordpiece_vocab().items(), key=lambda item: item[1])
        (folder / "vocab.txt").write_text("".join(token + "\n" for token, _ in vocab), encoding="utf-8")
        BertTokenizerLegacy(str(folder / "vocab.txt"), model_max_length=128).save_pretrained(folder)
    return str(folder)


# --------------------------------------------------------------------------------------------
# A planted attention pattern whose right answer is known.

PLANTED = "probing_planted"
"""The name the planted attention function is registered under (transformers' AttentionInterface)."""


@contextlib.contextmanager
def planted_dependency_attention(loaded, treebank: Path) -> Iterator[None]:
    """Make every head of ``loaded`` attend from each piece of a dependent to its head's first piece.

    Tokens of root words, special tokens and padding attend to themselves. On a
    causal stack a dependent whose head lies to its right also attends to itself,
    as no causal head could see its head. Every head should then score 100% for
    ``dep_to_head`` on ``all`` (over reachable pairs on causal stacks).

    Rows are recognised by their token ids (the model's input embedding records
    each call), so ``treebank`` must be the one that is scored.
    """
    from probing.model.alignment import align_words

    sentences = list(read_treebank(treebank))
    aligned = align_words(loaded.tokenizer, [s.words for s in sentences], prepend=loaded.prepend_token_id,
                          spaces=[s.space_after for s in sentences])
    targets = {item.input_ids: _planted_targets(item.word_of_token, s.heads, loaded.is_causal) for s, item in zip(sentences, aligned)}
    seen: dict[str, torch.Tensor] = {}

    def record(module, args):
        seen["ids"] = args[0]  # the ids of the stack that runs next (T5's decoder embeds after its encoder ran)

    def attend(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        batch, heads, queries, _ = query.shape
        keys = key.shape[-2]
        weights = torch.zeros(batch, heads, queries, keys, dtype=query.dtype, device=query.device)
        ids = seen["ids"]
        if ids.shape[-1] != queries or queries != keys:  # cross-attention: not scored, any valid rows do
            weights += 1.0 / keys
        else:
            for row in range(batch):
                weights[row, :, torch.arange(queries), _row_targets(ids[row].tolist(), targets)] = 1.0
        if value.shape[1] != heads:  # grouped-query attention shares each key/value head
            value = value.repeat_interleave(heads // value.shape[1], dim=1)
        return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights

    table = loaded.model.get_input_embeddings().weight
    # Every embedding that reads token ids (T5's encoder and decoder each hold one, tied to `shared`).
    embeddings = [m for m in loaded.model.modules() if isinstance(m, torch.nn.Embedding) and m.weight is table]
    hooks = [embedding.register_forward_pre_hook(record) for embedding in embeddings]
    try:
        with attention_override(loaded.model, attend, name=PLANTED):
            yield
    finally:
        for hook in hooks:
            hook.remove()


def _planted_targets(word_of_token: tuple[int, ...], heads: tuple[int, ...], causal: bool) -> list[int]:
    first_piece = {}
    for token, word in enumerate(word_of_token):
        first_piece.setdefault(word, token)
    targets = []
    for token, word in enumerate(word_of_token):
        target = first_piece[heads[word]] if word >= 0 and heads[word] >= 0 else token
        targets.append(token if causal and target > token else target)
    return targets


def _row_targets(ids: list[int], targets: dict[tuple[int, ...], list[int]]) -> list[int]:
    """The planted targets of one padded row: those of the longest known sentence it starts
    with; a row of no known sentence (the encoder's input when a decoder is scored) attends
    to itself, which would fail any test of a scored stack."""
    matches = [key for key in targets if tuple(ids[: len(key)]) == key]
    if not matches:
        return list(range(len(ids)))
    key = max(matches, key=len)
    return targets[key] + list(range(len(key), len(ids)))


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

    with attention_override(model, attend, name=PLANTED_HEADS):
        yield


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


def kill_once_checkpointed(argv: list[str], checkpoint: Path, *, timeout: float = 240) -> None:
    """Run ``probing ARGV`` in a child process and SIGKILL it as soon as ``checkpoint`` exists: a run
    killed mid-way, with no chance to clean up, for ``--resume`` to pick up (on the tests' one thread, so that
    it is slow enough to be caught between checkpoints)."""
    process = subprocess.Popen([sys.executable, "-m", "probing", *argv], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    while not checkpoint.exists():
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline, "no checkpoint appeared"
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=60) == -signal.SIGKILL
    process.stderr.close()


# --------------------------------------------------------------------------------------------
# What a Markdown reader makes of a file


def markdown_markup(text: str) -> list[str]:
    """What a CommonMark reader with GitHub's tables makes of ``text`` that a name from a file must never
    become: raw HTML (``html_inline``/``html_block``), links, images and autolinks, each as ``type: what``.
    Every link counts, whatever its URL: GitHub drops a ``javascript:`` one, other readers do not.

    >>> markdown_markup("| a |\\n|---|\\n| <img src=x> [c](javascript:x) |")
    ['html_inline: <img src=x>', 'link_open: javascript:x']
    >>> markdown_markup("| a |\\n|---|\\n| &lt;img src=x> [c\\\\](javascript:x) |")
    []
    """
    from markdown_it import MarkdownIt

    reader = MarkdownIt("commonmark").enable("table")
    reader.validateLink = lambda url: True  # see every link, as a reader that does not check URLs would
    found = []
    pending = list(reader.parse(text))
    while pending:
        token = pending.pop(0)
        pending[:0] = token.children or []
        if token.type in ("html_inline", "html_block"):
            found.append(f"{token.type}: {token.content.strip()}")
        elif token.type in ("link_open", "image"):
            found.append(f"{token.type}: {token.attrGet('href') or token.attrGet('src')}")
    return found


HAND_PAIRS = json.loads((Path(__file__).parent / "data" / "hand_pairs.json").read_text(encoding="utf-8"))
"""Hand-written sentences and (good, bad) pairs for the minimal-pair tests (not BLiMP's: BLiMP is read from
``$PROBING_BLIMP``, ../shared/minimal-pairs/blimp on the team's machines)."""


def hand_blimp(folder: Path, monkeypatch, paradigm: str = "anaphor_gender_agreement") -> str:
    """A BLiMP folder of one paradigm holding the hand-written pairs, pinned by its own sha256 (as BLiMP's files
    are), so ``--blimp FOLDER --paradigms PARADIGM`` reads it like the real thing."""
    import hashlib

    import probing.data.minimal_pairs as minimal_pairs

    folder.mkdir()
    path = folder / f"{paradigm}.jsonl"
    path.write_text("".join(json.dumps({"sentence_good": good, "sentence_bad": bad, "field": "morphology",
                                        "linguistics_term": "anaphor_agreement", "UID": paradigm}) + "\n"
                            for good, bad in HAND_PAIRS["good_bad"]), encoding="utf-8")
    monkeypatch.setitem(minimal_pairs.PINS, paradigm, hashlib.sha256(path.read_bytes()).hexdigest())
    return str(folder)


def registrar(table: dict[str, Callable], marked: set[str] | None = None, *, mark: str = "slow"):
    """The decorator that files each case's builder in ``table`` under the case's name, and the name in ``marked``
    too when the case is registered with ``mark=True``: every hostile test file's registry is made by it.

    >>> CASES, SLOW = {}, set()
    >>> case = registrar(CASES, SLOW)
    >>> @case("spawns a process", slow=True)
    ... def _(env): ...
    >>> list(CASES), SLOW
    (['spawns a process'], {'spawns a process'})
    """

    def register(name: str, **marks: bool):
        if set(marks) - {mark} or (marks and marked is None):  # a misspelt mark would quietly leave a case unmarked
            raise TypeError(f"{name!r}: this registry takes no mark but {mark}=, got {sorted(marks)}")

        def file(builder):
            table[name] = builder
            if marks.get(mark):
                marked.add(name)
            return builder

        return file

    return register


def record_chunks(monkeypatch, stop_after: int | None = None) -> list:
    """Record the units of every chunk a checkpointed pass saves (the list returned), and with ``stop_after`` stop
    the run as Ctrl-C would once that many units are saved: how the resume tests cut a run short at a known unit.
    Called again in the same test, it records afresh (the checkpointer's own saving is kept, once).
    """
    from probing.engine.checkpointing import Checkpointer

    saved = getattr(Checkpointer.chunk_done, "saved", Checkpointer.chunk_done)
    scored: list = []

    def chunk_done(self, run, chunk):
        scored.extend(chunk)
        saved(self, run, chunk)
        if stop_after is not None and self._consumed >= stop_after:
            raise KeyboardInterrupt

    chunk_done.saved = saved
    monkeypatch.setattr(Checkpointer, "chunk_done", chunk_done)
    return scored
