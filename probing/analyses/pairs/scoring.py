"""Sentence log-probabilities of a causal LM, and BLiMP accuracies from them (docs/minimal-pairs.md).

log p(sentence) = the sum over its tokens of log p(token | everything before it), the sentence tokenized
as plain text without special tokens and preceded by one token of context: the tokenizer's BOS token, or
its EOS token when it has none (as lm-evaluation-harness does for an empty context). One forward pass
per batch of sentences of like lengths, one sentence per row, padded on the right: a causal model's token never
sees the padding after it, and positions count from the first real token, so padding changes no score beyond
float rounding; the batches are the engine's (probing.engine.batching: its length groups, its right padding).
A pair's two sentences are scored in one row (:func:`pair_log_probs`): their shared token prefix once, then
each continuation, a token seeing only the tokens of its own sentence (:func:`sentence_log_probs`, every
sentence whole, is the reference it is tested against). Log-probabilities are taken in float32 from the
logits, which are computed only where a real token is predicted. The accuracies they give are
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


def pair_rows(pairs: Sequence[tuple[Sequence[int], Sequence[int]]]):
    """One row per pair: its shared prefix (:func:`shared_length`), its good sentence's continuation, then its bad
    one's; ids and attention mask [pair, token] (right-padded), each token's position in its own sentence, and
    which keys each query sees, bool [pair, query, key]: those before it in its own sentence, so that a bad
    continuation's token never sees the good continuation beside it.

    >>> ids, mask, positions, visible = pair_rows([([1, 7, 8], [1, 7, 9])])
    >>> ids.tolist(), positions.tolist()
    ([[1, 7, 8, 9]], [[0, 1, 2, 2]])
    >>> visible[0].int().tolist()  # the last token (the bad one's 9) sees 1 and 7, not the good one's 8
    [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 0, 1]]
    """
    shared = torch.tensor([shared_length(good, bad) for good, bad in pairs])[:, None]  # [pair, 1]
    ids, mask = padded_rows([[*good, *bad[length:]] for (good, bad), length in zip(pairs, shared[:, 0].tolist())])
    index = torch.arange(ids.shape[1])[None]  # [1, token]
    good_length = torch.tensor([len(good) for good, _ in pairs])[:, None]
    bad_part = index >= good_length  # [pair, token]
    good_part = (index >= shared) & ~bad_part
    positions = torch.where(bad_part, index - good_length + shared, index) * mask
    visible = (index[:, :, None] >= index[:, None, :]) & ~(bad_part[:, :, None] & good_part[:, None, :])
    visible = visible & mask[:, None, :].bool()
    visible[:, :, 0] = True  # a padding query sees the first token: no row of its attention is empty
    return ids, mask, positions, visible


def prefix_shared_log_probs(run, score, pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
                            copies: int = 1) -> torch.Tensor:
    """log p [copy, sentence] of every pair's two sentences (good, bad, good, ...), their shared token prefix
    (:func:`shared_length`, 1 token or more) computed once and seen by both continuations.

    One forward pass over one row per pair (:func:`pair_rows`): the prefix, then both continuations, each token at
    its position in its own sentence and seeing exactly the tokens it sees there. The prefix's own tokens are
    scored once and their log p added to both sentences; each continuation is scored from the prefix's last
    state on. Each sentence's log p is the whole sentence's up to float rounding (:func:`sentence_log_probs` is
    the reference), and, every real token sitting where it sits whatever else is in the batch, does not depend
    on the batch it is in.

    ``run(ids, visible, sentences, positions)`` computes the pass on [copy * pair] rows (``visible``: bool
    [row, query, key]; ``sentences``: each row's good sentence's place in the [copy * sentence] layout), giving
    what ``score(states, ids, mask)`` reads: hidden states or logits [row, token, ...].
    """
    ids, mask, positions, visible = pair_rows(pairs)
    shared = torch.tensor([shared_length(good, bad) for good, bad in pairs])
    rows = torch.arange(copies * len(pairs))
    states = run(ids.repeat(copies, 1), visible.repeat(copies, 1, 1), 2 * rows, positions.repeat(copies, 1))
    device = states.device
    longest = int(shared.max())
    prefix_mask = (torch.arange(longest)[None] < shared[:, None]).long()  # [pair, token]: the prefixes
    prefix_scores = score(states[:, :longest], ids[:, :longest].repeat(copies, 1).to(device),
                          prefix_mask.repeat(copies, 1).to(device))  # [copy * pair]
    # Each continuation read from its prefix's last state on (that state predicts its first token), as
    # ``score`` reads a whole sentence: token t + 1 from state t.
    places, rest = [], []
    for (good, bad), length in zip(pairs, shared.tolist()):
        places += [list(range(length - 1, len(good))), [length - 1, *range(len(good), len(good) + len(bad) - length)]]
        rest += [good[length - 1 :], bad[length - 1 :]]
    places, _ = padded_rows(places)  # [sentence, token]: where each continuation's states are in its pair's row
    rest_ids, rest_mask = padded_rows(rest)
    row_of = rows.repeat_interleave(2)[:, None]  # [copy * sentence, 1]: its pair's row
    rest_states = states[row_of.to(device), places.repeat(copies, 1).to(device)]  # [copy * sentence, token, ...]
    scores = score(rest_states, rest_ids.repeat(copies, 1).to(device), rest_mask.repeat(copies, 1).to(device))
    return (scores + prefix_scores.repeat_interleave(2)).view(copies, 2 * len(pairs))


def prefix_sharing_fits(model, pairs) -> bool:
    """Whether :func:`prefix_shared_log_probs` may score ``pairs`` together: every pair shares a token or more,
    and every pair's row fits the model's sliding window (the row's keys are all within it, as the whole
    sentences' are then)."""
    shared = [shared_length(good, bad) for good, bad in pairs]
    if not shared or min(shared) < 1:
        return False
    window = getattr(model.config.get_text_config(decoder=True), "sliding_window", None)
    return window is None or max(len(good) + len(bad) - length for (good, bad), length in zip(pairs, shared)) < window


def visibility_mask(visible: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The attention mask a model reads as given [row, 1, query, key]: 0 where a key is seen, the dtype's minimum
    where not (added to the attention scores, in every attention implementation that takes a mask)."""
    return torch.zeros(visible.shape, dtype=dtype).masked_fill(~visible, torch.finfo(dtype).min)[:, None]


def model_pass(model, split: bool, device):
    """``run`` and ``score`` for :func:`prefix_shared_log_probs`: ``model``'s last hidden states (``split``,
    read by the LM head at the scored positions only) or its logits."""
    dtype = next(model.parameters()).dtype

    def run(ids, visible, sentences, positions):
        mask = visibility_mask(visible, dtype).to(device)
        if split:
            return model.base_model(input_ids=ids.to(device), attention_mask=mask,
                                    position_ids=positions.to(device)).last_hidden_state
        return model(input_ids=ids.to(device), attention_mask=mask, position_ids=positions.to(device)).logits

    def score(states, ids, mask):
        if split:
            return scored_log_probs(model.get_output_embeddings(), states, ids, mask)
        return row_log_probs(states, ids, mask)

    return run, score


AGREEMENT = 1e-4
"""Nats: how far a shared prefix's log p may be from the whole sentence's (float rounding of other shapes)."""


@torch.inference_mode()
def prefix_sharing_agrees(model, split: bool, device) -> bool:
    """Whether sharing a pair's prefix gives ``model``'s whole-sentence log p (within :data:`AGREEMENT` nats) on
    two tiny pairs; a model that reads its mask or positions otherwise is scored whole."""
    pairs = [([1, 5, 6, 7, 8], [1, 5, 6, 9]), ([1, 5, 7], [1, 6, 7, 8])]
    try:
        shared = prefix_shared_log_probs(*model_pass(model, split, device), pairs)
        whole = _whole_log_probs(model, split, [sentence for pair in pairs for sentence in pair], device)
    except Exception:  # a model that takes no attention mask of its own, or no position ids
        return False
    return bool(torch.allclose(shared[0].cpu(), whole.cpu(), rtol=0, atol=AGREEMENT))


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
                   context: str = "bos", after_batch=None) -> list[float]:
    """log p(sentence) of every sentence of consecutive pairs (good, bad, good, bad, ...), as
    :func:`sentence_log_probs` gives them, each pair's shared token prefix computed once
    (:func:`prefix_shared_log_probs`); ``batch_size`` sentences (half as many pairs, a row each) per forward pass;
    ``after_batch(n)``, where given, is told each batch's n sentences once scored (a progress bar's ``update``).

    Pairs are batched by the length of their rows (the engine's length groups). A batch holding a pair that
    shares no token (``context="none"``) or that does not fit the model's sliding window, and every batch of a
    model on which sharing does not give the whole sentences' numbers (:func:`prefix_sharing_agrees`), is scored
    whole.
    """
    if len(sentences) % 2:
        raise ValueError(f"pairs of sentences come in twos, not {len(sentences)}")
    encoded = encode(tokenizer, sentences, context)
    pairs = list(zip(encoded[0::2], encoded[1::2]))
    split = exact_head(model)
    sharing = prefix_sharing_agrees(model, split, device)
    run, score = model_pass(model, split, device)
    scores = [0.0] * len(encoded)
    lengths = [len(good) + len(bad) - shared_length(good, bad) for good, bad in pairs]
    for chosen in length_groups(lengths, max(1, batch_size // 2)):
        batch = [pairs[index] for index in chosen]
        if sharing and prefix_sharing_fits(model, batch):
            values = prefix_shared_log_probs(run, score, batch)[0]
        else:
            values = _whole_log_probs(model, split, [sentence for pair in batch for sentence in pair], device)
        for index, (good, bad) in zip(chosen, values.view(-1, 2).cpu().tolist()):
            scores[2 * index], scores[2 * index + 1] = good, bad
        if after_batch is not None:
            after_batch(2 * len(chosen))
    return scores


@torch.inference_mode()
def sentence_log_probs(model, tokenizer, sentences: Sequence[str], *, batch_size: int = 32,
                       device: str = "cpu", context: str = "bos") -> list[float]:
    """log p(sentence) of every sentence, in order, each after ``context`` (:data:`CONTEXTS`); ``batch_size``
    sentences per forward pass: every sentence whole, the reference that :func:`pair_log_probs` equals.

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
