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


def shared_length(first: Sequence[int], second: Sequence[int]) -> int:
    """How many tokens two sentences' ids share at their start: at most all but the last token of the
    shorter, so that each sentence has a continuation of one token or more to score.

    >>> shared_length([1, 7, 8, 9], [1, 7, 5]), shared_length([1, 7], [1, 7, 5]), shared_length([3], [4, 5])
    (2, 1, 0)
    """
    most = min(len(first), len(second)) - 1
    length = 0
    while length < most and first[length] == second[length]:
        length += 1
    return length


def prefix_shared_log_probs(run, score, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], new_cache,
                            copies: int = 1, settle=None) -> torch.Tensor:
    """log p [copy, sentence] of every pair's two sentences (good, bad, good, ...), their shared token prefix
    (:func:`shared_length`, 1 token or more) computed once and its keys and values reused for both continuations.

    Two forward passes: the prefixes [copy * pair, token], right-padded, into a fresh cache (``new_cache()``);
    then every sentence's continuation [copy * sentence, token], right-padded, after its pair's cached prefix
    repeated for both sentences. A continuation's positions go on from its own prefix's length, and the
    attention mask covers the prefix's padding too, so a token sees exactly the tokens it sees in the whole
    sentence. The prefix's own tokens are scored once and their log p added to both sentences: each sentence's
    log p is the whole sentence's, up to float rounding (:func:`sentence_log_probs` is the reference).

    ``run(ids, attention_mask, sentences, positions=None, cache=None)`` computes one pass, giving what
    ``score(states, ids, mask)`` reads (hidden states or logits, [row, token, ...]); ``sentences`` are the rows
    of the [copy * sentence] layout the input rows belong to (a prefix's row: its pair's good sentence).
    ``settle(cache)``, when given, sees the prefixes' cache before it is repeated for the continuations.
    """
    shared = torch.tensor([shared_length(good, bad) for good, bad in pairs])  # [pair], all >= 1
    prefix_ids, prefix_mask = padded_rows([good[:length] for (good, _), length in zip(pairs, shared.tolist())])
    prefix_ids, prefix_mask = prefix_ids.repeat(copies, 1), prefix_mask.repeat(copies, 1)  # [copy * pair, token]
    rows = torch.arange(copies * len(pairs))
    cache = new_cache()
    states = run(prefix_ids, prefix_mask, 2 * rows, cache=cache)  # a pair's prefix is its good sentence's
    device = states.device
    prefix_scores = score(states, prefix_ids.to(device), prefix_mask.to(device))  # [copy * pair]
    last = states[rows.to(device), (shared.repeat(copies) - 1).to(device)]  # predicts each continuation's first token
    if settle is not None:
        settle(cache)
    cache.batch_repeat_interleave(2)  # one copy of each pair's prefix for each of its sentences
    # Each continuation preceded by its prefix's last token: a placeholder whose state is ``last``, so that
    # ``score`` reads token t + 1 from state t as it does on a whole sentence.
    rest_ids, rest_mask = padded_rows([sentence[length - 1 :] for pair, length in zip(pairs, shared.tolist())
                                       for sentence in pair])
    rest_ids, rest_mask = rest_ids.repeat(copies, 1), rest_mask.repeat(copies, 1)  # [copy * sentence, 1 + token]
    steps = rest_ids.shape[1] - 1
    positions = shared.repeat_interleave(2).repeat(copies)[:, None] + torch.arange(steps)  # [copy * sentence, token]
    attention = torch.cat([prefix_mask.repeat_interleave(2, dim=0), rest_mask[:, 1:]], dim=1)
    states = run(rest_ids[:, 1:], attention, torch.arange(2 * len(rows)), positions=positions, cache=cache)
    states = torch.cat([last.repeat_interleave(2, dim=0)[:, None], states], dim=1)
    scores = score(states, rest_ids.to(device), rest_mask.to(device)) + prefix_scores.repeat_interleave(2)
    return scores.view(copies, 2 * len(pairs))


def prefix_sharing_fits(model, pairs) -> bool:
    """Whether :func:`prefix_shared_log_probs` may score ``pairs`` together: every pair shares a token or more,
    and their padded prefix and continuation together fit the model's sliding window (a window counts cache
    slots, and the prefixes' padding takes slots a whole sentence does not)."""
    shared = [shared_length(good, bad) for good, bad in pairs]
    if not shared or min(shared) < 1:
        return False
    window = getattr(model.config.get_text_config(decoder=True), "sliding_window", None)
    longest = max(shared) + max(len(sentence) - length for pair, length in zip(pairs, shared) for sentence in pair)
    return window is None or longest < window


def model_pass(model, split: bool, device):
    """``run`` for :func:`prefix_shared_log_probs`: ``model``'s last hidden states (``split``) or its logits."""
    from transformers import DynamicCache

    def run(ids, mask, sentences, positions=None, cache=None):
        module = model.base_model if split else model
        output = module(input_ids=ids.to(device), attention_mask=mask.to(device), cache=cache, use_cache=True,
                        position_ids=None if positions is None else positions.to(device))
        return output.last_hidden_state if split else output.logits

    def score(states, ids, mask):
        return scored_log_probs(model.get_output_embeddings(), states, ids, mask) if split else \
            row_log_probs(states, ids, mask)

    return run, score, lambda: DynamicCache(config=model.config)


@torch.inference_mode()
def prefix_sharing_agrees(model, split: bool, device) -> bool:
    """Whether sharing a pair's prefix gives ``model``'s whole-sentence log p (within :data:`AGREEMENT` nats) on
    two tiny pairs; a model whose cache or positions work otherwise is scored whole."""
    pairs = [([1, 5, 6, 7, 8], [1, 5, 6, 9]), ([1, 5, 7], [1, 6, 7, 8])]
    try:
        run, score, new_cache = model_pass(model, split, device)
        shared = prefix_shared_log_probs(run, score, pairs, new_cache)
        whole = _whole_log_probs(model, split, [sentence for pair in pairs for sentence in pair], device)
    except Exception:  # a model without a key-value cache, or one that reads its inputs otherwise
        return False
    return bool(torch.allclose(shared[0].cpu(), whole.cpu(), rtol=0, atol=AGREEMENT))


AGREEMENT = 1e-4
"""Nats: how far a shared prefix's log p may be from the whole sentence's (float rounding of other shapes)."""


def _whole_log_probs(model, split: bool, encoded: Sequence[Sequence[int]], device) -> torch.Tensor:
    """log p [row] of token rows, each whole, in one right-padded forward pass."""
    ids, mask = padded_rows(encoded)
    ids, mask = ids.to(device), mask.to(device)
    if split:
        hidden = model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state  # [sentence, token, hidden]
        return scored_log_probs(model.get_output_embeddings(), hidden, ids, mask)
    return row_log_probs(model(input_ids=ids, attention_mask=mask).logits, ids, mask)


@torch.inference_mode()
def pair_log_probs(model, tokenizer, sentences: Sequence[str], *, batch_size: int = 32, device: str = "cpu",
                   context: str = "bos") -> list[float]:
    """log p(sentence) of every sentence of consecutive pairs (good, bad, good, bad, ...), as
    :func:`sentence_log_probs` gives them, each pair's shared token prefix computed once
    (:func:`prefix_shared_log_probs`); ``batch_size`` sentences (half as many pairs) per forward pass.

    A batch holds pairs whose prefixes are equally long (then by the length of their longer sentence), so that
    no prefix is padded: every real token's key sits where it sits in the whole sentence, and a score does not
    depend on the batch it is in (the parts of a sharded run add up to the whole run's numbers). Pairs that share
    no token (``context="none"``), a batch that does not fit the model's sliding window, and a model on which
    sharing does not give the whole sentences' numbers (:func:`prefix_sharing_agrees`) are scored whole.
    """
    if len(sentences) % 2:
        raise ValueError(f"pairs of sentences come in twos, not {len(sentences)}")
    encoded = encode(tokenizer, sentences, context)
    pairs = list(zip(encoded[0::2], encoded[1::2]))
    split = exact_head(model)
    sharing = prefix_sharing_agrees(model, split, device)
    run, score, new_cache = model_pass(model, split, device)
    scores = [0.0] * len(encoded)
    for chosen in _equal_prefix_groups(pairs, max(1, batch_size // 2)):
        batch = [pairs[index] for index in chosen]
        if sharing and prefix_sharing_fits(model, batch):
            values = prefix_shared_log_probs(run, score, batch, new_cache)[0]
        else:
            values = _whole_log_probs(model, split, [sentence for pair in batch for sentence in pair], device)
        for index, (good, bad) in zip(chosen, values.view(-1, 2).cpu().tolist()):
            scores[2 * index], scores[2 * index + 1] = good, bad
    return scores


def _equal_prefix_groups(pairs, batch_size: int):
    """Positions of ``pairs`` in groups of at most ``batch_size`` whose shared prefixes are equally long, each
    cut by the engine's length groups (probing.engine.batching.length_groups) of their longer sentences.

    >>> list(_equal_prefix_groups([([1, 2, 3], [1, 2]), ([1, 4], [1, 5]), ([1, 2, 4, 5], [1, 2, 3])], 2))
    [[1, 0], [2]]
    """
    members: dict[int, list[int]] = {}
    for index, (good, bad) in enumerate(pairs):
        members.setdefault(shared_length(good, bad), []).append(index)
    for _, chosen in sorted(members.items()):
        for group in length_groups([max(len(pairs[index][0]), len(pairs[index][1])) for index in chosen], batch_size):
            yield [chosen[place] for place in group]


@torch.inference_mode()
def sentence_log_probs(model, tokenizer, sentences: Sequence[str], *, batch_size: int = 32,
                       device: str = "cpu", context: str = "bos") -> list[float]:
    """log p(sentence) of every sentence, in order, each after ``context`` (:data:`CONTEXTS`); ``batch_size``
    sentences per forward pass.

    The sentences are batched by length (shortest first; one sentence a row still, so a score is the same
    whatever else is in its batch, up to float rounding), so batches carry little padding, and the LM head
    runs only where a real token is predicted (:func:`scored_log_probs`).
    """
    encoded = encode(tokenizer, sentences, context)
    split = exact_head(model)
    scores = [0.0] * len(encoded)
    for chosen in length_groups([len(ids) for ids in encoded], batch_size):
        values = _whole_log_probs(model, split, [encoded[index] for index in chosen], device)
        for index, value in zip(chosen, values.cpu().tolist()):
            scores[index] = value
    return scores
