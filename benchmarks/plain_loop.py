"""The reference code's way of scoring, as the yardstick for the vectorised scorer.

The paper's released code turns each sentence's token attention into word
attention one head at a time (a numpy loop over the words of the sentence:
sum the columns of a split word into its first piece, delete the other
pieces' columns, then average the rows of its pieces and delete the other
rows), and then scores every head with a Python loop over sentences and
words. This module does the same arithmetic in the same order of loops, on
our word alignment (special tokens are pseudo-words of their own, dropped at
the end), so that it gives the counts the vectorised pipeline gives and the
two can be timed on the same attention.

>>> import numpy as np
>>> A = np.array([[[[[0.5, 0.25, 0.25], [0.0, 0.5, 0.5], [0.5, 0.5, 0.0]]]]], dtype=np.float32)
>>> word_word_attention(A[0, 0, 0], [[0, 1], [2]]).round(4).tolist()
[[0.625, 0.375], [1.0, 0.0]]
"""

from __future__ import annotations

import numpy as np


def pieces_of_words(word_of_token) -> list[list[int]]:
    """Token positions of each word, in word order; special tokens (-1) get a group of their own
    after the words, so they are pooled as pseudo-words and then dropped."""
    groups: dict[int, list[int]] = {}
    specials = []
    for token, word in enumerate(word_of_token):
        if word >= 0:
            groups.setdefault(int(word), []).append(token)
        else:
            specials.append([token])
    return [groups[word] for word in sorted(groups)] + specials


def word_word_attention(token_attention: np.ndarray, words: list[list[int]]) -> np.ndarray:
    """One head's [tok, tok] attention -> [word, word]: sum attended pieces, mean attending pieces.

    ``words`` are the token positions of each word, the real words first
    (pseudo-words of special tokens, if any, follow and are dropped by the caller).
    """
    attention = np.array(token_attention)
    for pieces in words:  # attention to a word: the sum of its pieces' columns
        attention[:, pieces[0]] = attention[:, pieces].sum(axis=-1)
    firsts = [pieces[0] for pieces in words]
    attention = attention[:, firsts]  # the other pieces' columns are gone
    for pieces in words:  # attention from a word: the mean of its pieces' rows
        attention[pieces[0]] = np.mean(attention[pieces], axis=0)
    return attention[firsts]


def plain_counts(attention, word_of_token, token_counts, sentences, pairs_of, offsets, counts: dict) -> None:
    """Add one batch's counts to ``counts`` (total, heads, baselines), sentence by sentence, head by head.

    attention: float32 numpy [batch, layer, head, tok, tok] (padded);
    word_of_token: [batch, tok]; token_counts: real tokens per sentence;
    ``pairs_of(sentence)`` lists (relation index, query, target) triples.
    """
    _, layers, heads, _, _ = attention.shape
    for row, sentence in enumerate(sentences):
        length, n = int(token_counts[row]), len(sentence)
        words = pieces_of_words(word_of_token[row, :length])
        triples = pairs_of(sentence)
        for layer in range(layers):
            for head in range(heads):
                word_attention = word_word_attention(attention[row, layer, head, :length, :length], words)[:n, :n]
                for direction, matrix in enumerate((word_attention, word_attention.T)):
                    matrix = np.array(matrix)
                    matrix[range(n), range(n)] = 0  # a word never predicts itself
                    predicted = np.argmax(matrix, axis=-1)
                    for relation, query, target in triples:
                        if predicted[query] == target:
                            counts["heads"][relation, direction, layer, head] += 1
        for relation, query, target in triples:
            counts["total"][relation] += 1
            for o, offset in enumerate(offsets):
                if target >= 0 and query + offset == target:
                    counts["baselines"][relation, o] += 1
