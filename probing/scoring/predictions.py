"""Each head's predicted syntactic head for every word, in both directions.

spec/scoring.md section 3: zero the diagonal of the word attention ``W``, then
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

DIRECTIONS = ("dep_to_head", "head_to_dep")
"""Axis 1 of the predictions, and the order of directions everywhere."""


def predict_heads(word_attention: torch.Tensor, num_words: torch.Tensor) -> torch.Tensor:
    """Predicted head index of every word, for every layer, head and direction.

    word_attention: [batch, layer, head, word, word] (not modified).
    num_words: [batch], the real word count of each sentence; padded words
    are never predicted.
    Returns long [batch, direction, layer, head, word].
    """
    scores = word_attention.clone()
    scores.diagonal(dim1=-2, dim2=-1).zero_()  # a word never predicts itself
    positions = torch.arange(scores.shape[-1], device=scores.device)
    is_padding = positions[None, :] >= num_words.to(scores.device)[:, None]  # [batch, word]
    is_padding = is_padding[:, None, None, None, :]
    dep_to_head = scores.masked_fill(is_padding, float("-inf")).argmax(dim=-1)
    head_to_dep = scores.transpose(-1, -2).masked_fill(is_padding, float("-inf")).argmax(dim=-1)
    return torch.stack([dep_to_head, head_to_dep], dim=1)  # [batch, direction, layer, head, word]
