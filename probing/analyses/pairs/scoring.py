"""Sentence log-probabilities of a causal LM, and BLiMP accuracies from them (docs/minimal-pairs.md).

log p(sentence) = the sum over its tokens of log p(token | everything before it), the sentence tokenized
as plain text without special tokens and preceded by one token of context: the tokenizer's BOS token, or
its EOS token when it has none (as lm-evaluation-harness does for an empty context). One forward pass
per batch of sentences of like lengths, one sentence per row, padded on the right: a causal model's token never
sees the padding after it, and positions count from the first real token, so padding changes no score beyond
float rounding; the batches are the engine's (probing.engine.batching: its length groups, its right padding).
Log-probabilities are taken in float32 from the logits, which are computed only where a real
token is predicted. The accuracies they give are
computed in probing.analyses.pairs.accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from probing.engine.batching import length_groups, padded_rows
from probing.errors import ProbingError

CONTEXTS = ("bos", "eos", "none")
"""What a sentence is scored after: ``bos`` the tokenizer's BOS token, else its EOS (the rule, as
lm-evaluation-harness begins an empty context); ``eos`` its EOS token; ``none`` nothing, so the sentence's first
token is not scored (it has nothing to be predicted from); any other value is one token of the vocabulary, named
as the tokenizer writes it (``<|endoftext|>``). An instruction-tuned model's BOS can be a chat-turn marker
(SmolLM2-Instruct's is ``<|im_start|>``, its EOS ``<|im_end|>``, and its pretraining's document separator
``<|endoftext|>`` is neither), which is why the choice is an option and is recorded."""


def context_token(tokenizer, context: str = "bos") -> int | None:
    """The one token before every sentence (``context``: see :data:`CONTEXTS`), or None for ``none``.

    >>> from types import SimpleNamespace
    >>> context_token(SimpleNamespace(bos_token_id=None, eos_token_id=2)), context_token(None, "none")
    (2, None)
    >>> vocabulary = {"<|endoftext|>": 0}
    >>> context_token(SimpleNamespace(convert_tokens_to_ids=vocabulary.get, unk_token_id=None), "<|endoftext|>")
    0
    """
    if context == "none":
        return None
    if context not in CONTEXTS:
        return _vocabulary_token(tokenizer, context)
    token = tokenizer.bos_token_id if context == "bos" else None
    token = tokenizer.eos_token_id if token is None else token
    if token is None:
        wanted = "an EOS token" if context == "eos" else "neither a BOS nor an EOS token"
        raise ProbingError(f"the tokenizer has {wanted} to start a sentence with", source="--model")
    return int(token)


def _vocabulary_token(tokenizer, token: str) -> int:
    """The id of ``token``, one token of the tokenizer's vocabulary (its unknown token does not count unless named)."""
    found = tokenizer.convert_tokens_to_ids(token)
    if found is None or (found == tokenizer.unk_token_id and token != getattr(tokenizer, "unk_token", None)):
        raise ProbingError(f"{token!r} is not a token of the model's vocabulary; give bos, eos, none or one token "
                           "as the tokenizer writes it (such as <|endoftext|>)", source="--context")
    return int(found)


def encode(tokenizer, sentences: Sequence[str], context: str = "bos") -> list[list[int]]:
    """Each sentence's ids: the context token (none for ``none``), then the plain text's tokens."""
    start = context_token(tokenizer, context)
    prefix = [] if start is None else [start]
    return [[*prefix, *tokenizer(text, add_special_tokens=False)["input_ids"]] for text in sentences]


def row_log_probs(logits: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log p(row) [row]: the float32 sum of log p(token t + 1 | tokens <= t) over each row's real tokens.

    ``logits`` [row, token, vocab]; ``ids`` and ``mask`` [row, token], on the logits' device. (The reference
    form of :func:`scored_log_probs`, which computes the same from hidden states at the scored positions only.)
    """
    log_probs = torch.log_softmax(logits[:, :-1].float(), dim=-1)  # prediction of token t+1 from tokens <= t
    picked = log_probs.gather(-1, ids[:, 1:, None])[..., 0] * mask[:, 1:]  # [row, token - 1]
    return picked.sum(dim=1)


LOGIT_CELLS = 1 << 24
"""Logits (positions x vocabulary) computed at once: 64 MiB of float32."""


def scored_log_probs(head, hidden: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor,
                     cells: int = LOGIT_CELLS) -> torch.Tensor:
    """log p(row) [row], as :func:`row_log_probs` gives it, from the last hidden states [row, token, hidden].

    ``head`` (the LM head, hidden -> logits) runs only at the positions that predict a real token, never at
    padding, ``cells // vocabulary`` positions at a time, and log p(token) is its logit minus the logsumexp of
    all logits, in float32: no log-softmax over the vocabulary is written out.

    >>> head = torch.nn.Linear(2, 3, bias=False)
    >>> hidden, ids, mask = torch.randn(2, 3, 2), torch.tensor([[0, 1, 2], [0, 2, 0]]), torch.tensor([[1, 1, 1], [1, 1, 0]])
    >>> torch.allclose(scored_log_probs(head, hidden, ids, mask), row_log_probs(head(hidden), ids, mask))
    True
    """
    rows, steps = (mask[:, 1:] > 0).nonzero(as_tuple=True)  # a position t that predicts the real token t + 1
    states, wanted = hidden[rows, steps], ids[rows, steps + 1]  # [scored, hidden], [scored]
    chunk = max(1, cells // head.weight.shape[0])
    picked = []
    for start in range(0, len(wanted), chunk):
        logits = head(states[start : start + chunk]).float()  # [chunk, vocab]
        picked.append(logits.gather(1, wanted[start : start + chunk, None])[:, 0] - torch.logsumexp(logits, dim=1))
    per_token = hidden.new_zeros(mask[:, 1:].shape, dtype=torch.float32)  # [row, token - 1], 0 where unscored
    if picked:
        per_token[rows, steps] = torch.cat(picked)
    return per_token.sum(dim=1)


def exact_head(model) -> bool:
    """Whether ``model``'s logits are its output embeddings applied to its base model's last hidden state, on a
    short input (a model that scales or soft-caps its logits is scored from its whole output instead)."""
    head, base = model.get_output_embeddings(), getattr(model, "base_model", None)
    if head is None or base is None or base is model or getattr(head, "weight", None) is None:
        return False
    device = head.weight.device
    ids = torch.tensor([[1, 5, 6, 7]], device=device)
    with torch.inference_mode():
        whole = model(input_ids=ids).logits.float()
        split = head(base(input_ids=ids).last_hidden_state).float()
    return whole.shape == split.shape and bool(torch.allclose(whole, split, rtol=1e-5, atol=1e-5))


@torch.inference_mode()
def sentence_log_probs(model, tokenizer, sentences: Sequence[str], *, batch_size: int = 32,
                       device: str = "cpu", context: str = "bos", after_batch=None) -> list[float]:
    """log p(sentence) of every sentence, in order, each after ``context`` (:data:`CONTEXTS`); ``batch_size``
    sentences per forward pass; ``after_batch(n)``, where given, is told each batch's n sentences once scored (a
    progress bar's ``update``: probing.engine.progress).

    The sentences are batched by length (shortest first; one sentence a row still, so a score is the same
    whatever else is in its batch, up to float rounding), so batches carry little padding, and the LM head
    runs only where a real token is predicted (:func:`scored_log_probs`).
    """
    encoded = encode(tokenizer, sentences, context)
    split = exact_head(model)
    scores = [0.0] * len(encoded)
    for chosen in length_groups([len(ids) for ids in encoded], batch_size):
        ids, mask = padded_rows([encoded[index] for index in chosen])
        ids, mask = ids.to(device), mask.to(device)
        if split:
            hidden = model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state  # [sentence, token, hidden]
            values = scored_log_probs(model.get_output_embeddings(), hidden, ids, mask)
        else:
            values = row_log_probs(model(input_ids=ids, attention_mask=mask).logits, ids, mask)
        for index, value in zip(chosen, values.cpu().tolist()):
            scores[index] = value
        if after_batch is not None:
            after_batch(len(chosen))
    return scores
