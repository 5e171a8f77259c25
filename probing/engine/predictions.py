"""Each head's predicted syntactic head for every word, in both directions.

docs/scoring.md section 3: zero the diagonal of the word attention ``W``, then
``dep_to_head`` predicts ``argmax_j W[i, j]`` (the word i attends to most) and
``head_to_dep`` predicts ``argmax_j W[j, i]`` (the word that attends to i most).
``torch.argmax`` returns the first maximum, so ties go to the lowest index (and
a NaN, where one appears, is the maximum, its first one chosen, as torch's
``max`` has it).

On CPU tensors both directions come from one compiled pass over each head's
matrix (:func:`_first_maxima`, probing.compiling) instead of a masking pass and
two reductions: the same comparisons of the same numbers, so the same
predictions, in less time on one core than the tensor code takes on all of
them (benchmarks/RESULTS.md, "Predictions and bootstrap weights compiled").
Elsewhere (a GPU) the tensor code runs.

>>> import torch
>>> W = torch.tensor([[0.9, 0.1, 0.0], [0.5, 0.2, 0.3], [0.2, 0.7, 0.1]])
>>> predict_heads(W[None, None, None], torch.tensor([3]))[0, :, 0, 0]
tensor([[1, 0, 1],
        [1, 2, 1]])
"""

from __future__ import annotations

import numpy as np
import torch

from probing.compiling import COMPILED, compiled


def predict_heads(word_attention: torch.Tensor, num_words: torch.Tensor) -> torch.Tensor:
    """Predicted head index of every word, for every layer, head and direction.

    word_attention: [batch, layer, head, word, word] (not modified).
    num_words: [batch], the real word count of each sentence; padded words
    are never predicted.
    Returns long [batch, direction, layer, head, word].
    """
    return HeadPrediction(num_words)(word_attention)


class HeadPrediction:
    """One batch's predictions, its masks made once for all the layers it predicts.

    The masks (padded rows and columns, the diagonal) depend only on the
    batch's word counts; a pass that reads attention layer by layer predicts
    each layer on its own and shares them. Kept per device and word count.

    >>> W = torch.tensor([[0.9, 0.1], [0.5, 0.2]])[None, None, None]  # [batch, layer, head, word, word]
    >>> HeadPrediction(torch.tensor([2]))(W)[0, :, 0, 0].tolist()
    [[1, 0], [1, 0]]
    """

    def __init__(self, num_words: torch.Tensor):
        self.num_words = num_words  # long [batch]
        self._masks: dict[tuple[torch.device, int], tuple[torch.Tensor, torch.Tensor]] = {}

    def masks(self, device: torch.device, words: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``(replaced, fill)``, bool and float32 [batch, 1, 1, word, word]: where a score is replaced, by what."""
        key = (device, words)
        if key not in self._masks:
            positions = torch.arange(words, device=device)
            is_padding = positions[None, :] >= self.num_words.to(device)[:, None]  # [batch, word]
            replaced = is_padding[:, :, None] | is_padding[:, None, :]  # [batch, word, word]: a padded row or column
            # -inf where a padded word would be predicted (no head can choose it), 0 on the diagonal
            # (a word never predicts itself)
            fill = torch.zeros(replaced.shape, device=device).masked_fill_(replaced, float("-inf"))
            replaced |= torch.eye(words, dtype=torch.bool, device=device)
            self._masks[key] = replaced[:, None, None], fill[:, None, None]
        return self._masks[key]

    def __call__(self, word_attention: torch.Tensor) -> torch.Tensor:
        """word_attention [batch, layer, head, word, word] -> long [batch, direction, layer, head, word]."""
        if word_attention.device.type == "cpu" and COMPILED and word_attention.dtype in (torch.float32, torch.float64):
            return self.compiled(word_attention)
        return self.vectorised(word_attention)

    def compiled(self, word_attention: torch.Tensor) -> torch.Tensor:
        """The CPU's way: :func:`_first_maxima` over every head's matrix (a view of any strides is read as it is).

        >>> W = torch.rand(2, 3, 4, 5, 5)
        >>> prediction = HeadPrediction(torch.tensor([5, 3]))
        >>> torch.equal(prediction.compiled(W), prediction.vectorised(W))
        True
        """
        scores = word_attention.detach().numpy()  # [batch, layer, head, word, word], no copy
        batch, layers, heads, words = scores.shape[:4]
        predictions = np.zeros((batch, 2, layers, heads, words), dtype=np.int64)
        _first_maxima(scores, self.num_words.cpu().numpy().astype(np.int64), predictions)
        return torch.from_numpy(predictions)

    def vectorised(self, word_attention: torch.Tensor) -> torch.Tensor:
        """The tensor code, on any device: the masks in one pass, then one reduction per direction."""
        replaced, fill = self.masks(word_attention.device, word_attention.shape[-1])
        scores = torch.where(replaced, fill, word_attention)  # one pass; the caller's tensor is untouched
        # max(dim).indices returns the first maximum, as argmax does, and is much faster on CPU
        dep_to_head = scores.max(dim=-1).indices  # over the words i attends to
        head_to_dep = scores.max(dim=-2).indices  # over the words that attend to i
        return torch.stack([dep_to_head, head_to_dep], dim=1)  # [batch, direction, layer, head, word]


@compiled
def _first_maxima(scores, num_words, predictions):  # pragma: no cover - compiled by numba
    """predictions[b, 0, l, h, i]: first j maximising scores[b, l, h, i, j]; predictions[b, 1, l, h, j]: first i
    maximising scores[b, l, h, i, j]; both over the sentence's real words, the diagonal read as 0.

    What the masks of :class:`HeadPrediction` make of padding needs no reading: a padded word's row and column
    are -inf throughout, so it predicts word 0 (the first of equal maxima) and, coming after every real word,
    never wins a real word's maximum; ``predictions`` arrives zeroed. A matrix is scanned once, row by row, for
    each row's maximum and every column's running one, with plain "greater" (the first maximum kept); one that
    holds a NaN is scanned again with torch's rule (the first NaN is the maximum).
    """
    batch, layers, heads, words = scores.shape[0], scores.shape[1], scores.shape[2], scores.shape[3]
    row = np.empty(words, dtype=scores.dtype)
    column_best = np.empty(words, dtype=scores.dtype)
    column_index = np.empty(words, dtype=np.int64)  # contiguous, as the vectorised loop needs
    for b in range(batch):
        n = min(num_words[b], words)  # never past the matrix: numba does not check bounds
        for layer in range(layers):
            for head in range(heads):
                matrix, made = scores[b, layer, head], predictions[b, :, layer, head]
                if _scan(matrix, n, row, column_best, column_index, made):
                    _scan_with_nan(matrix, n, row, column_best, column_index, made)
                made[1, :n] = column_index[:n]


@compiled
def _scan(matrix, n, row, column_best, column_index, made):  # pragma: no cover - compiled by numba
    """One head's predictions: each row's into ``made[0]``, each column's into ``column_index``; True where the
    matrix holds a NaN (then both are to be made again by :func:`_scan_with_nan`)."""
    column_best[:n] = -np.inf
    column_index[:n] = 0
    unordered = False
    for i in range(n):
        row[:n] = matrix[i, :n]
        row[i] = 0.0  # a word never predicts itself
        best, best_j = row[0], 0
        for j in range(1, n):
            if row[j] > best:
                best, best_j = row[j], j
        made[0, i] = best_j
        for j in range(n):  # branch-free, so that the compiler can vectorise it
            value = row[j]
            wins = value > column_best[j]
            column_best[j] = value if wins else column_best[j]
            column_index[j] = i if wins else column_index[j]
            unordered |= value != value
    return unordered


@compiled
def _scan_with_nan(matrix, n, row, column_best, column_index, made):  # pragma: no cover - compiled by numba
    """:func:`_scan` with torch's rule for a NaN: "greater, or a NaN over a number", so the first NaN wins."""
    column_best[:n] = -np.inf
    column_index[:n] = 0
    for i in range(n):
        row[:n] = matrix[i, :n]
        row[i] = 0.0
        best, best_j = row[0], 0
        for j in range(1, n):
            if row[j] > best or (row[j] != row[j] and best == best):
                best, best_j = row[j], j
        made[0, i] = best_j
        for j in range(n):
            value = row[j]
            if value > column_best[j] or (value != value and column_best[j] == column_best[j]):
                column_best[j] = value
                column_index[j] = i
