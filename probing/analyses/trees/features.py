"""What the attention probes read: special-token attention, word vectors, and stored training examples.

- :func:`special_attention`: each word's attention to the first and to the
  last special pseudo-word (``[CLS]`` and ``[SEP]``, a causal model's BOS
  sink...), for every layer and head; from a word, as in the word attention,
  the mean over its pieces' rows.
- :func:`word_vectors`: the model's input embeddings averaged over each
  word's pieces (the default word vectors).
- :func:`read_word_vectors`: a GloVe-format text file instead (``word v1 ...
  vd`` per line; a word2vec ``count dim`` first line is skipped). A word is
  looked up as written, then lowercased; a word found neither way gets the
  zero vector, and is counted.
- :class:`ProbeExamples`: the selection treebank's sentences kept for
  training, attention in float16. Memory: per sentence n^2 x layers x heads
  x 2 bytes of attention (the other direction is its transpose), plus n x
  dim x 2 bytes of vectors: for en_ewt dev (sum of n^2 = 533,021) and 12 x 12
  heads, 154 MB of attention and 39 MB of 768-d vectors.

>>> weight = torch.tensor([[0.0, 0.0], [2.0, 4.0], [4.0, 0.0]])   # embeddings of token ids 0..2
>>> word_vectors(weight, torch.tensor([[0, 1, 2, 0]]), torch.tensor([[-1, 0, 0, -1]]), 1).tolist()
[[[3.0, 2.0]]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from probing.data.treebank import ROOT, Sentence
from probing.engine.pooling import piece_matrix
from probing.errors import ProbingError


def special_attention(token_attention: torch.Tensor, word_of_token: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """float32 [batch, 2, layer, head, word]: each word's attention to the first and the last special token.

    token_attention [batch, layer, head, tok, tok]; word_of_token [batch, tok]
    (-1 for special and padding tokens); attention_mask [batch, tok] (0 for
    padding). A sentence with one special token uses it twice; one with none
    gets zeros.
    """
    batch, layers, heads, tokens, _ = token_attention.shape
    device = token_attention.device
    word_of_token = word_of_token.to(device)
    is_special = (word_of_token < 0) & (attention_mask.to(device) > 0)  # [batch, tok]
    positions = torch.arange(tokens, device=device)
    first = torch.where(is_special, positions, tokens).min(dim=1).values  # [batch]
    last = torch.where(is_special, positions, -1).max(dim=1).values
    has_special = is_special.any(dim=1)
    columns = torch.stack([first, last], dim=1).clamp(0, tokens - 1)  # [batch, 2]
    index = columns[:, None, None, None, :].expand(batch, layers, heads, tokens, 2)
    to_special = token_attention.float().gather(-1, index)  # [batch, layer, head, tok, 2]
    to_special = to_special * has_special[:, None, None, None, None]
    num_words = max(int(word_of_token.max().item()) + 1, 1)
    pieces = piece_matrix(word_of_token, num_words)  # [batch, tok, word]
    averaging = pieces / pieces.sum(dim=1, keepdim=True).clamp(min=1)
    return torch.einsum("btw,blhts->bslhw", averaging, to_special)  # [batch, 2, layer, head, word]


def word_vectors(embedding_weight: torch.Tensor, input_ids: torch.Tensor, word_of_token: torch.Tensor, num_words) -> torch.Tensor:
    """float32 [batch, word, dim]: the input embeddings of each word's pieces, averaged (zeros for padding).

    embedding_weight [vocab, dim] (``model.get_input_embeddings().weight``);
    input_ids, word_of_token [batch, tok]; num_words: the batch's longest sentence.
    """
    words = int(num_words if isinstance(num_words, int) else torch.as_tensor(num_words).max())
    device = embedding_weight.device
    pieces = piece_matrix(word_of_token.to(device), max(words, 1))[:, :, :words]  # [batch, tok, word]
    embedded = embedding_weight.detach().float()[input_ids.to(device)]  # [batch, tok, dim]
    summed = torch.einsum("btw,btd->bwd", pieces, embedded)
    return summed / pieces.sum(dim=1).clamp(min=1)[:, :, None]


@dataclass
class WordVectors:
    """Vectors read from a text file; ``unknown`` counts the words looked up and not found."""

    vectors: dict[str, torch.Tensor]
    dim: int
    source: str
    unknown: int = 0
    looked_up: int = 0

    def lookup(self, words: Sequence[str]) -> torch.Tensor:
        """float32 [word, dim]; unknown words (as written and lowercased) get zeros and are counted."""
        rows = []
        for word in words:
            vector = self.vectors.get(word)
            if vector is None:
                vector = self.vectors.get(word.lower())
            if vector is None:
                self.unknown += 1
                vector = torch.zeros(self.dim)
            rows.append(vector)
        self.looked_up += len(words)
        return torch.stack(rows) if rows else torch.zeros((0, self.dim))

    def batch(self, sentences: Sequence[Sentence]) -> torch.Tensor:
        """float32 [batch, word, dim] of padded sentences."""
        words = max((len(s) for s in sentences), default=0)
        out = torch.zeros((len(sentences), words, self.dim))
        for row, sentence in enumerate(sentences):
            out[row, : len(sentence)] = self.lookup(sentence.words)
        return out


def read_word_vectors(path: str | Path) -> WordVectors:
    """Read a GloVe-format text file: one ``word v1 ... vd`` per line (space-separated).

    Errors name the file and line: a line whose numbers are not d finite
    floats, a file without vectors. A first line of exactly two integers (word2vec's
    header) is skipped; a repeated word keeps its first vector.
    """
    path = Path(path)
    if not path.is_file():
        raise ProbingError(f"word vector file not found: {path}", source="--word-vectors")
    vectors: dict[str, torch.Tensor] = {}
    dim = None
    with path.open(encoding="utf-8", errors="strict") as stream:
        try:
            for number, line in enumerate(stream, start=1):
                parts = line.rstrip("\r\n").split(" ")
                if not line.strip():
                    continue
                if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                    continue  # word2vec header: "count dim"
                word, values = parts[0], [p for p in parts[1:] if p]
                if dim is None:
                    dim = len(values)
                    if dim == 0:
                        raise ProbingError("a line holds a word but no numbers", source=str(path), line=number)
                if len(values) != dim:
                    raise ProbingError(f"expected {dim} numbers after the word, found {len(values)}", source=str(path), line=number)
                try:
                    vector = torch.tensor([float(v) for v in values], dtype=torch.float32)
                except ValueError:
                    raise ProbingError(f"not a number among the values of {word!r}", source=str(path), line=number) from None
                if not bool(torch.isfinite(vector).all()):  # nan, inf, or past float32's range: no probe learns from it
                    raise ProbingError(f"a value of {word!r} is not a finite float32 number (NaN, infinity or past "
                                       "3.4e38)", source=str(path), line=number)
                vectors.setdefault(word, vector)
        except UnicodeDecodeError as error:
            raise ProbingError(f"not UTF-8 text ({error.reason})", source=str(path)) from None
    if dim is None:
        raise ProbingError("the file holds no word vectors", source=str(path))
    return WordVectors(vectors, dim, str(path))


@dataclass
class ProbeExample:
    """One sentence of probe features: attention float16 [layer, head, word, word], special attention
    float16 [2, layer, head, word], vectors float16 [word, dim], gold heads long [word] (ROOT -1), scored bool [word]."""

    attention: torch.Tensor
    special: torch.Tensor
    vectors: torch.Tensor
    heads: torch.Tensor
    scored: torch.Tensor
    index: int

    def __len__(self) -> int:
        return self.heads.shape[0]


@dataclass
class ProbeExamples:
    """The selection treebank's examples, collected batch by batch (float16 on the CPU)."""

    examples: list[ProbeExample] = field(default_factory=list)

    def update(self, word_attention: torch.Tensor, token_attention: torch.Tensor, word_of_token: torch.Tensor,
               attention_mask: torch.Tensor, vectors: torch.Tensor, sentences: Sequence[Sentence], num_words) -> None:
        """One batch of the engine: word_attention [batch, layer, head, word, word], the token attention
        [batch, layer, head, tok, tok] it came from, word_of_token and attention_mask [batch, tok], and
        vectors [batch, word, dim] (:func:`word_vectors` or :meth:`WordVectors.batch`)."""
        special = special_attention(token_attention, word_of_token, attention_mask)[..., : word_attention.shape[-1]]
        self.add(word_attention, special, vectors, sentences, num_words)

    def add(self, word_attention: torch.Tensor, special: torch.Tensor, vectors: torch.Tensor,
            sentences: Sequence[Sentence], num_words) -> None:
        """As :meth:`update`, with the special-token attention [batch, 2, layer, head, word] already pooled."""
        for row, sentence in enumerate(sentences):
            n = int(torch.as_tensor(num_words)[row])
            if n != len(sentence):
                raise ValueError("num_words must be the sentences' lengths, in batch order")
            self.examples.append(ProbeExample(
                attention=word_attention[row, :, :, :n, :n].detach().to(torch.float16).cpu(),
                special=special[row, :, :, :, :n].detach().to(torch.float16).cpu(),
                vectors=vectors[row, :n].detach().to(torch.float16).cpu(),
                heads=torch.tensor(sentence.heads, dtype=torch.long),
                scored=torch.tensor([h != ROOT and u != "PUNCT" for h, u in zip(sentence.heads, sentence.upos)]),
                index=sentence.index,
            ))

    def nbytes(self) -> int:
        return sum(t.element_size() * t.numel() for e in self.examples for t in (e.attention, e.special, e.vectors))


@dataclass
class ProbeBatch:
    """Padded features of a batch: attention float32 [batch, layer, head, word, word], special
    [batch, 2, layer, head, word], vectors [batch, word, dim], num_words [batch]."""

    attention: torch.Tensor
    special: torch.Tensor
    vectors: torch.Tensor
    num_words: torch.Tensor

    @classmethod
    def from_engine(cls, word_attention, token_attention, word_of_token, attention_mask, vectors, num_words) -> "ProbeBatch":
        """A held-out batch straight from the engine's tensors (see :meth:`ProbeExamples.update`)."""
        special = special_attention(token_attention, word_of_token, attention_mask)[..., : word_attention.shape[-1]]
        return cls(word_attention.float(), special, vectors.float(), torch.as_tensor(num_words))

    @classmethod
    def of(cls, examples: Sequence[ProbeExample], *, attention: bool = True) -> "ProbeBatch":
        """Padded to the longest example; ``attention=False`` leaves the attention maps empty (a probe that
        reads only the word vectors need not have them copied)."""
        words = max(len(e) for e in examples)
        layers, heads = examples[0].attention.shape[:2]
        dim = examples[0].vectors.shape[-1]
        maps = torch.zeros((len(examples), layers, heads, words, words) if attention else (len(examples), 0, 0, 0, 0))
        special = torch.zeros((len(examples), 2, layers, heads, words) if attention else (len(examples), 2, 0, 0, 0))
        vectors = torch.zeros((len(examples), words, dim))
        for row, e in enumerate(examples):
            n = len(e)
            if attention:
                maps[row, :, :, :n, :n] = e.attention.float()
                special[row, ..., :n] = e.special.float()
            vectors[row, :n] = e.vectors.float()
        return cls(maps, special, vectors, torch.tensor([len(e) for e in examples]))


def gold_targets(examples: Sequence[ProbeExample], words: int) -> torch.Tensor:
    """long [batch, word]: the gold candidate of each word (a word index, or ``words`` for ROOT); -100 for padding."""
    targets = torch.full((len(examples), words), -100, dtype=torch.long)
    for row, e in enumerate(examples):
        targets[row, : len(e)] = torch.where(e.heads == ROOT, torch.full_like(e.heads, words), e.heads)
    return targets
