"""Token attention to word attention, for every layer and head of a batch at once.

Attention *to* a word is the sum of its pieces' columns; attention *from* a
word is the mean of its pieces' rows (docs/scoring.md section 2). With a
pooling matrix ``T`` [tok, word] of ones and an averaging matrix ``F``
[word, tok], the word attention is ``W = F . A . T``: two batched matrix
products, no loop over heads or words. Special tokens and padding belong to
no word (index -1), so their columns are left out of ``T`` and their rows out
of ``F``; that is the spec's "pooled as pseudo-words, then dropped", without
renormalising the rows.

>>> import torch
>>> A = torch.tensor([[0.5, 0.25, 0.25], [0.0, 0.5, 0.5], [0.5, 0.5, 0.0]])  # tokens: w0 w0 w1
>>> pool_word_attention(A[None, None, None], torch.tensor([[0, 0, 1]]))[0, 0, 0]
tensor([[0.6250, 0.3750],
        [1.0000, 0.0000]])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from probing.registry import Registry


@dataclass(frozen=True)
class FromPooling:
    """One way to pool the rows of a word's pieces (attention *from* a word), given in one of two forms.

    ``row_weights``: pieces [batch, tok, word] (piece_matrix) -> [batch, word, tok], each word's row as a fixed
    mix of its pieces' rows (the mean, the first piece); made once per batch and applied to every layer by one
    matrix product. ``pooled``: a rule that is no such mix (the max), (attention [batch, layer, head, tok, tok],
    attention_to_words [batch, layer, head, tok, word], word_of_token [batch, tok]) -> [batch, layer, head,
    word, word].

    >>> pieces = piece_matrix(torch.tensor([[-1, 0, 0, 1]]), 2)  # [CLS] w0 w0 w1
    >>> FROM_POOLINGS["mean"].row_weights(pieces)[0].tolist()
    [[0.0, 0.5, 0.5, 0.0], [0.0, 0.0, 0.0, 1.0]]
    """

    row_weights: Callable[[torch.Tensor], torch.Tensor] | None = None
    pooled: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor] | None = None


FROM_POOLINGS: Registry[FromPooling] = Registry("pooling", option="--pool-from")
"""Ways to pool the rows of a word's pieces (attention *from* a word); a new one is one registered entry."""


def from_pooling_modes() -> list[str]:
    return FROM_POOLINGS.names()


def check_from_pooling(name: str) -> str:
    FROM_POOLINGS[name]
    return name


def piece_matrix(word_of_token: torch.Tensor, num_words: int) -> torch.Tensor:
    """One-hot map from tokens to words; rows of special and padding tokens are 0.

    word_of_token: [batch, tok] with -1 for tokens of no word.
    Returns float32 [batch, tok, word].
    """
    is_word = word_of_token >= 0
    one_hot = torch.nn.functional.one_hot(word_of_token.clamp(min=0), num_words).to(torch.float32)
    return one_hot * is_word.unsqueeze(-1)  # [batch, tok, word]


def pool_word_attention(attention: torch.Tensor, word_of_token: torch.Tensor, from_mode: str = "mean") -> torch.Tensor:
    """Word-level attention of every head.

    attention: [batch, layer, head, query, key] token attention (not modified).
    word_of_token: [batch, tok], -1 for special and padding tokens.
    Returns float32 [batch, layer, head, word, word]: rows attend, columns are
    attended to, the diagonal kept, special-token columns dropped.
    """
    return WordPooling(word_of_token, from_mode)(attention)


class WordPooling:
    """One batch's pooling, its token-to-word map made once for all the layers it pools.

    A pass that reads attention one layer at a time pools each layer on its
    own; the batch's one-hot map and its row weights (the mean's averaging
    matrix) are the same for all of them, so both are made once per batch
    (made again per layer, the map alone cost SmolLM2's 30 layers a quarter of
    a second per en_ewt dev). Both are kept per device: under a device map,
    layers live on several.

    >>> pooling = WordPooling(torch.tensor([[-1, 0, 0, 1]]))
    >>> layer = torch.full((1, 1, 2, 4, 4), 0.25)  # [batch, layer, head, query, key]
    >>> pooling(layer)[0, 0, 0].tolist()
    [[0.5, 0.25], [0.5, 0.25]]
    """

    def __init__(self, word_of_token: torch.Tensor, from_mode: str = "mean"):
        self.word_of_token = word_of_token  # long [batch, tok], on the CPU
        self.num_words = max(int(word_of_token.max().item()) + 1, 1)  # on the CPU: no device wait
        self.rule = FROM_POOLINGS[from_mode]
        self._maps: dict[torch.device, tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]] = {}

    def maps(self, device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """``(word_of_token, pieces, row_weights)`` on ``device``: long [batch, tok], float32 [batch, tok, word]
        and the rule's float32 [batch, word, tok] (None for a rule that is no mix of rows)."""
        if device not in self._maps:
            word_of_token = self.word_of_token.to(device)
            pieces = piece_matrix(word_of_token, self.num_words)
            weights = self.rule.row_weights(pieces) if self.rule.row_weights is not None else None
            self._maps[device] = word_of_token, pieces, weights
        return self._maps[device]

    def __call__(self, attention: torch.Tensor) -> torch.Tensor:
        """attention [batch, layer, head, query, key] -> float32 [batch, layer, head, word, word]."""
        word_of_token, to_words, row_weights = self.maps(attention.device)
        batch, layers, heads, queries, keys = attention.shape
        # One matrix product per sentence with layers, heads and query rows stacked into
        # one tall matrix: far faster than one small product per head.
        rows = attention.float().reshape(batch, layers * heads * queries, keys)
        attention_to_words = torch.bmm(rows, to_words).view(batch, layers, heads, queries, self.num_words)
        if row_weights is not None:
            return _combine_rows(row_weights, attention_to_words)
        return self.rule.pooled(attention, attention_to_words, word_of_token)


def _mean_weights(pieces: torch.Tensor) -> torch.Tensor:
    """The paper's rule: average the rows of a word's pieces. [batch, tok, word] -> [batch, word, tok]."""
    counts = pieces.sum(dim=1).clamp(min=1)  # [batch, word]
    return (pieces / counts[:, None, :]).transpose(1, 2)


def _first_piece_weights(pieces: torch.Tensor) -> torch.Tensor:
    """The released reference code's default: the row of a word's first piece. [batch, tok, word] -> [batch,
    word, tok]."""
    is_first = (pieces.cumsum(dim=1) == 1) & (pieces > 0)  # the first token of each word
    return is_first.to(torch.float32).transpose(1, 2)


FROM_POOLINGS.register("mean", FromPooling(row_weights=_mean_weights))
FROM_POOLINGS.register("first", FromPooling(row_weights=_first_piece_weights))


def _combine_rows(weights: torch.Tensor, attention_to_words: torch.Tensor) -> torch.Tensor:
    """``weights [batch, word, tok] . attention_to_words`` for every layer and head at once.

    The token rows are moved in front ([batch, tok, layer * head * word], one
    copy of a tensor smaller than the attention), so that each sentence needs
    one wide matrix product instead of one tiny product per head. Returns
    [batch, layer, head, word, word] as a view of a [batch, word, layer, head,
    word] tensor.
    """
    batch, layers, heads, tokens, words = attention_to_words.shape
    columns = attention_to_words.permute(0, 3, 1, 2, 4).reshape(batch, tokens, layers * heads * words)
    pooled = torch.bmm(weights, columns)  # [batch, word, layer * head * word]
    return pooled.view(batch, weights.shape[1], layers, heads, words).permute(0, 2, 3, 1, 4)


def _max_of_pieces(attention: torch.Tensor, attention_to_words: torch.Tensor, word_of_token: torch.Tensor) -> torch.Tensor:
    """Element-wise max of a word's piece rows, renormalised, as the reference code's ``max``.

    Each row is divided by its sum over all pseudo-words, special tokens
    included (each special token is a pseudo-word of its own), and only then
    are the special-token columns dropped.
    """
    words = _max_over_pieces(attention_to_words, word_of_token)  # [batch, layer, head, word, word]
    is_special_key = (word_of_token < 0).to(attention.dtype)[:, None, None, None, :]
    specials = _max_over_pieces(attention.float() * is_special_key, word_of_token)  # [batch, layer, head, word, tok]
    total = words.sum(-1, keepdim=True) + specials.sum(-1, keepdim=True)
    return words / total.clamp(min=torch.finfo(torch.float32).tiny)


FROM_POOLINGS.register("max", FromPooling(pooled=_max_of_pieces))


def _max_over_pieces(rows: torch.Tensor, word_of_token: torch.Tensor) -> torch.Tensor:
    """[batch, layer, head, tok, C] -> [batch, layer, head, word, C]: max over each word's rows."""
    batch, layers, heads, tokens, columns = rows.shape
    num_words = int(word_of_token.max().item()) + 1
    # Rows of special and padding tokens are sent to a spare word, then cut off.
    index = word_of_token.masked_fill(word_of_token < 0, num_words)
    index = index[:, None, None, :, None].expand(batch, layers, heads, tokens, columns)
    pooled = rows.new_zeros(batch, layers, heads, num_words + 1, columns)
    pooled = pooled.scatter_reduce(3, index, rows, reduce="amax", include_self=False)
    return pooled[..., :num_words, :]


def pool_with_special_keys(attention: torch.Tensor, word_of_token: torch.Tensor, is_special: torch.Tensor,
                           from_mode: str = "mean") -> tuple[torch.Tensor, torch.Tensor]:
    """Word attention that keeps what goes to special tokens: ``(words, specials)``.

    Each special token becomes a pseudo-word of its own (as the spec pools
    them) whose column is kept instead of dropped: ``words`` is float32
    [batch, layer, head, word, word], exactly :func:`pool_word_attention`'s
    result, and ``specials`` float32 [batch, layer, head, word, special] holds
    each word's attention to the unit's special tokens in order (zero columns
    where a unit has fewer). Under ``max`` the rows are renormalised over both,
    as the reference code does. ``is_special``: bool [batch, tok], padding False.

    >>> A = torch.tensor([[0.5, 0.25, 0.25], [0.6, 0.2, 0.2], [0.0, 0.5, 0.5]])  # tokens: [CLS] w0 w1
    >>> words, specials = pool_with_special_keys(A[None, None, None], torch.tensor([[-1, 0, 1]]),
    ...                                          torch.tensor([[True, False, False]]))
    >>> words[0, 0, 0].tolist(), specials[0, 0, 0, :, 0].tolist()
    ([[0.20000000298023224, 0.20000000298023224], [0.5, 0.5]], [0.6000000238418579, 0.0])
    """
    num_words = max(int(word_of_token.max().item()) + 1, 1)
    special_rank = is_special.long().cumsum(dim=1) - 1  # [batch, tok]: 0 for a unit's first special token
    extended = torch.where(is_special, num_words + special_rank, word_of_token)
    pooled = pool_word_attention(attention, extended, from_mode)  # [batch, layer, head, word + special, same]
    rows = pooled[..., :num_words, :]
    return rows[..., :num_words], rows[..., num_words:]
