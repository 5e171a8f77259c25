"""A causal LM's log-probabilities of a sentence's tokens: the one home of that computation.

log p(sentence) is the sum over its tokens of log p(token | everything before it), the sentence tokenized as plain
text without special tokens and preceded by one token of context (:func:`encode`: the tokenizer's BOS token, or its
EOS when it has none, as lm-evaluation-harness begins an empty context). Every scorer of the package reads token
log-probabilities here: ``probing pairs`` and the ablation's minimal-pair metric (whole sentences and the
continuations of a shared prefix, probing.model.pair_rows) and its next-token loss. They are taken in float32,
from the LM head run only where a real token is predicted, a chunk of positions at a time
(:func:`token_log_probs`); a model whose logits are more than its LM head (soft-capped or scaled) is scored from
its whole logits (:func:`row_log_probs`, which :func:`exact_head` decides).

>>> head = torch.nn.Linear(2, 3, bias=False)
>>> hidden, ids, mask = torch.randn(2, 3, 2), torch.tensor([[0, 1, 2], [0, 2, 0]]), torch.tensor([[1, 1, 1], [1, 1, 0]])
>>> torch.allclose(scored_log_probs(head, hidden, ids, mask), row_log_probs(head(hidden), ids, mask))
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import torch

from probing.errors import ProbingError
from probing.model.padding import padded_rows

CONTEXTS = ("bos", "eos", "none")
"""What a sentence is scored after: ``bos`` the tokenizer's BOS token, else its EOS (the rule, as
lm-evaluation-harness begins an empty context); ``eos`` its EOS token; ``none`` nothing, so the sentence's first
token is not scored (it has nothing to be predicted from); any other value is one token of the vocabulary, named
as the tokenizer writes it (``<|endoftext|>``). An instruction-tuned model's BOS can be a chat-turn marker
(SmolLM2-Instruct's is ``<|im_start|>``, its EOS ``<|im_end|>``, and its pretraining's document separator
``<|endoftext|>`` is neither), which is why the choice is an option and is recorded."""

LOGIT_CELLS = 1 << 24
"""Logits (positions x vocabulary) computed at once by default: 64 MiB of float32."""


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


def token_log_probs(head, states: torch.Tensor, wanted: torch.Tensor, cells: int = LOGIT_CELLS) -> torch.Tensor:
    """log p(wanted[i] | states[i]), float32 [position]: ``head`` (the LM head, hidden -> logits) on the hidden
    states [position, hidden], ``cells // vocabulary`` positions at a time, each log p its logit minus the
    logsumexp of all logits: no log-softmax over the vocabulary is written out.

    >>> head = torch.nn.Linear(2, 3, bias=False)
    >>> states, wanted = torch.randn(4, 2), torch.tensor([0, 2, 1, 1])
    >>> expected = torch.log_softmax(head(states), dim=-1)[torch.arange(4), wanted]
    >>> torch.allclose(token_log_probs(head, states, wanted, cells=3), expected)
    True
    """
    chunk = max(1, cells // head.weight.shape[0])
    picked = []
    for start in range(0, len(wanted), chunk):
        logits = head(states[start : start + chunk]).float()  # [chunk, vocab]
        picked.append(logits.gather(1, wanted[start : start + chunk, None])[:, 0] - torch.logsumexp(logits, dim=1))
    return torch.cat(picked) if picked else states.new_zeros(0, dtype=torch.float32)


def scored_log_probs(head, hidden: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor,
                     cells: int = LOGIT_CELLS) -> torch.Tensor:
    """log p(row) [row], as :func:`row_log_probs` gives it, from the last hidden states [row, token, hidden]: the
    float32 sum of :func:`token_log_probs` at the positions that predict a real token (never at padding)."""
    rows, steps = (mask[:, 1:] > 0).nonzero(as_tuple=True)  # a position t that predicts the real token t + 1
    per_token = hidden.new_zeros(mask[:, 1:].shape, dtype=torch.float32)  # [row, token - 1], 0 where unscored
    if len(rows):
        per_token[rows, steps] = token_log_probs(head, hidden[rows, steps], ids[rows, steps + 1], cells)
    return per_token.sum(dim=1)


def row_log_probs(logits: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log p(row) [row]: the float32 sum of log p(token t + 1 | tokens <= t) over each row's real tokens, from the
    whole logits [row, token, vocab] (``ids`` and ``mask`` [row, token], on the logits' device): how a model whose
    logits are more than its LM head is scored."""
    log_probs = torch.log_softmax(logits[:, :-1].float(), dim=-1)  # prediction of token t+1 from tokens <= t
    picked = log_probs.gather(-1, ids[:, 1:, None])[..., 0] * mask[:, 1:]  # [row, token - 1]
    return picked.sum(dim=1)


def exact_head(model, *, first: int = 1, tolerance: float = 1e-5, device=None) -> bool:
    """Whether ``model``'s logits are its output embeddings applied to its base model's last hidden state, within
    ``tolerance``, on the short input ``first``, 5, 6, 7 (on ``device``, default the head's): a model that scales or
    soft-caps its logits is scored from its whole output instead, or refused where only the head's chunks are read
    (the ablation's LM metrics)."""
    head, base = model.get_output_embeddings(), getattr(model, "base_model", None)
    if head is None or base is None or base is model or getattr(head, "weight", None) is None:
        return False
    ids = torch.tensor([[first, 5, 6, 7]], device=head.weight.device if device is None else device)
    with torch.inference_mode():
        whole = model(input_ids=ids).logits.float()
        split = head(base(input_ids=ids).last_hidden_state).float()
    return whole.shape == split.shape and bool(torch.allclose(whole, split, rtol=tolerance, atol=tolerance))


class RowScorer:
    """How ``model`` scores token rows: a forward pass (:meth:`states`: the last hidden states where ``split``,
    read by the LM head at the scored positions only, else the logits) and the rows' log p from it
    (:meth:`log_probs`), ``cells`` logits at a time. ``around(rows)``, where given, is a context manager the forward
    pass runs in, told which sentence each row is (the ablation disables each copy's heads there)."""

    def __init__(self, model, split: bool, device, *, cells: int = LOGIT_CELLS, around=None):
        self.model, self.split, self.device, self.cells, self.around = model, split, device, cells, around

    def states(self, ids: torch.Tensor, mask: torch.Tensor, sentences: torch.Tensor,
               positions: torch.Tensor | None = None) -> torch.Tensor:
        """Hidden states or logits [row, token, ...] of ``ids`` [row, token] under ``mask`` (long [row, token], or
        which keys each query sees, bool [row, query, key]), at ``positions`` (None: from 0)."""
        if mask.dim() == 3:  # which keys each query sees (probing.model.pair_rows.pair_rows)
            mask = visibility_mask(mask, next(self.model.parameters()).dtype)
        inputs = {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device)}
        if positions is not None:
            inputs["position_ids"] = positions.to(self.device)
        with self.around(sentences) if self.around else contextlib.nullcontext():
            if self.split:
                return self.model.base_model(**inputs).last_hidden_state
            return self.model(**inputs).logits

    def log_probs(self, states: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """log p(row) [row] from :meth:`states`' output (``ids``, ``mask`` on its device)."""
        if self.split:
            return scored_log_probs(self.model.get_output_embeddings(), states, ids, mask, self.cells)
        return row_log_probs(states, ids, mask)

    def whole(self, rows: Sequence[Sequence[int]], copies: int = 1) -> torch.Tensor:
        """log p [copy, row] of token ``rows``, each whole, in one right-padded forward pass over ``copies`` stacked
        copies of them."""
        ids, mask = padded_rows(rows)
        ids, mask = ids.repeat(copies, 1), mask.repeat(copies, 1)  # [copy * row, token], copy-major
        states = self.states(ids, mask, torch.arange(len(ids)))
        return self.log_probs(states, ids.to(states.device), mask.to(states.device)).view(copies, len(rows))


def visibility_mask(visible: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The attention mask a model reads as given [row, 1, query, key]: 0 where a key is seen, the dtype's minimum
    where not (added to the attention scores, in every attention implementation that takes a mask).

    >>> visibility_mask(torch.tensor([[[True, False]]]), torch.float32)[0, 0, 0, 0].item()
    0.0
    """
    return torch.zeros(visible.shape, dtype=dtype).masked_fill(~visible, torch.finfo(dtype).min)[:, None]
