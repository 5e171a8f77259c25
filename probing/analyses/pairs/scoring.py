"""Sentence log-probabilities of a causal LM, and BLiMP accuracies from them (docs/minimal-pairs.md).

log p(sentence) = the sum over its tokens of log p(token | everything before it), the sentence tokenized
as plain text without special tokens and preceded by one token of context: the tokenizer's BOS token, or
its EOS token when it has none (as lm-evaluation-harness does for an empty context). One forward pass
per batch of sentences, one sentence per row, padded on the right: a causal model's token never sees the
padding after it, and positions count from the first real token, so padding changes no score beyond
float rounding. Log-probabilities are taken in float32 from the logits. The accuracies they give are
computed in probing.analyses.pairs.accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from probing.errors import ProbingError

CONTEXTS = ("bos", "eos", "none")
"""What a sentence is scored after: ``bos`` the tokenizer's BOS token, else its EOS (the rule, as
lm-evaluation-harness begins an empty context); ``eos`` its EOS token; ``none`` nothing, so the sentence's first
token is not scored (it has nothing to be predicted from). An instruction-tuned model's BOS can be a chat-turn
marker (SmolLM2-Instruct's is ``<|im_start|>``), which is why the choice is an option and is recorded."""


def context_token(tokenizer, context: str = "bos") -> int | None:
    """The one token before every sentence (``context``: see :data:`CONTEXTS`), or None for ``none``.

    >>> from types import SimpleNamespace
    >>> context_token(SimpleNamespace(bos_token_id=None, eos_token_id=2)), context_token(None, "none")
    (2, None)
    """
    if context == "none":
        return None
    token = tokenizer.bos_token_id if context == "bos" else None
    token = tokenizer.eos_token_id if token is None else token
    if token is None:
        wanted = "an EOS token" if context == "eos" else "neither a BOS nor an EOS token"
        raise ProbingError(f"the tokenizer has {wanted} to start a sentence with", source="--model")
    return int(token)


def plain_tokenizer(loaded):
    """The checkpoint's own tokenizer, as it reads plain text: the loaded one may have been given a space before
    every pre-split word (probing.model.tokenizers), which would change a sentence's first token."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(loaded.name_or_path, revision=loaded.revision)


def encode(tokenizer, sentences: Sequence[str], context: str = "bos") -> list[list[int]]:
    """Each sentence's ids: the context token (none for ``none``), then the plain text's tokens."""
    start = context_token(tokenizer, context)
    prefix = [] if start is None else [start]
    return [[*prefix, *tokenizer(text, add_special_tokens=False)["input_ids"]] for text in sentences]


def padded(encoded: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """ids and attention mask [sentence, token] of encoded sentences, right-padded with 0.

    >>> ids, mask = padded([[1, 5], [1]])
    >>> ids.tolist(), mask.tolist()
    ([[1, 5], [1, 0]], [[1, 1], [1, 0]])
    """
    longest = max(map(len, encoded))
    ids = torch.zeros((len(encoded), longest), dtype=torch.long)  # [sentence, token]
    mask = torch.zeros((len(encoded), longest), dtype=torch.long)
    for row, tokens in enumerate(encoded):
        ids[row, : len(tokens)] = torch.tensor(tokens)
        mask[row, : len(tokens)] = 1
    return ids, mask


def row_log_probs(logits: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log p(row) [row]: the float32 sum of log p(token t + 1 | tokens <= t) over each row's real tokens.

    ``logits`` [row, token, vocab]; ``ids`` and ``mask`` [row, token], on the logits' device.
    """
    log_probs = torch.log_softmax(logits[:, :-1].float(), dim=-1)  # prediction of token t+1 from tokens <= t
    picked = log_probs.gather(-1, ids[:, 1:, None])[..., 0] * mask[:, 1:]  # [row, token - 1]
    return picked.sum(dim=1)


@torch.inference_mode()
def sentence_log_probs(model, tokenizer, sentences: Sequence[str], *, batch_size: int = 32,
                       device: str = "cpu", context: str = "bos") -> list[float]:
    """log p(sentence) of every sentence, in order, each after ``context`` (:data:`CONTEXTS`); ``batch_size``
    sentences per forward pass."""
    encoded = encode(tokenizer, sentences, context)
    scores: list[float] = []
    for start in range(0, len(encoded), batch_size):
        ids, mask = padded(encoded[start : start + batch_size])
        ids, mask = ids.to(device), mask.to(device)
        logits = model(input_ids=ids, attention_mask=mask).logits  # [sentence, token, vocab]
        scores += row_log_probs(logits, ids, mask).cpu().tolist()
    return scores
