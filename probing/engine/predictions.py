"""Each head's predicted syntactic head for every word, in both directions.

docs/scoring.md section 3: zero the diagonal of the word attention ``W``, then
``dep_to_head`` predicts ``argmax_j W[i, j]`` (the word i attends to most) and
``head_to_dep`` predicts ``argmax_j W[j, i]`` (the word that attends to i most).
``torch.argmax`` returns the first maximum, so ties go to the lowest index.

>>> import torch
>>> W = torch.tensor([[0.9, 0.1, 0.0], [0.5, 0.2, 0.3], [0.2, 0.7, 0.1]])
>>> predict_heads(W[None, None, None], torch.tensor([3]))[0, :, 0, 0]
tensor([[1, 0, 1],
        [1, 2, 1]])
"""

from __future__ import annotations

import torch


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
        replaced, fill = self.masks(word_attention.device, word_attention.shape[-1])
        scores = torch.where(replaced, fill, word_attention)  # one pass; the caller's tensor is untouched
        # max(dim).indices returns the first maximum, as argmax does, and is much faster on CPU
        dep_to_head = scores.max(dim=-1).indices  # over the words i attends to
        head_to_dep = scores.max(dim=-2).indices  # over the words that attend to i
        return torch.stack([dep_to_head, head_to_dep], dim=1)  # [batch, direction, layer, head, word]
