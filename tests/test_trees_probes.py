"""Attention probes: features, word vectors, a planted signal learnt, seeded reruns, decoding."""

from __future__ import annotations

import pytest
import torch

from probing.analyses.trees.features import ProbeBatch, ProbeExamples, read_word_vectors, special_attention, word_vectors
from probing.analyses.trees.probes import ProbeTreeCounts, decode, make_probe, train_probe
from probing.data.treebank import Sentence
from probing.errors import ProbingError


def test_special_attention_pools_rows_like_word_attention():
    """Tokens: [CLS] w0 w0 w1 [SEP] PAD. Word 0's attention to [CLS] is the mean of its two pieces'."""
    attention = torch.zeros(1, 1, 1, 6, 6)
    attention[0, 0, 0, 1, 0], attention[0, 0, 0, 2, 0] = 0.2, 0.6  # w0's pieces -> [CLS]
    attention[0, 0, 0, 3, 0], attention[0, 0, 0, 3, 4] = 0.1, 0.7  # w1 -> [CLS], [SEP]
    attention[0, 0, 0, 1, 5] = 0.9  # to padding: never a special token
    word_of_token = torch.tensor([[-1, 0, 0, 1, -1, -1]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 0]])
    special = special_attention(attention, word_of_token, mask)  # [batch, 2, layer, head, word]
    assert special.shape == (1, 2, 1, 1, 2)
    assert torch.allclose(special[0, :, 0, 0], torch.tensor([[0.4, 0.1], [0.0, 0.7]]))


def test_examples_from_engine_tensors_match_the_held_out_batch():
    """The training collector and the held-out batch read the same features from the engine's tensors."""
    generator = torch.Generator().manual_seed(0)
    token_attention = torch.softmax(torch.randn(2, 1, 2, 6, 6, generator=generator), dim=-1)
    word_of_token = torch.tensor([[-1, 0, 0, 1, 2, -1], [-1, 0, 1, -1, -1, -1]])
    mask = torch.tensor([[1] * 6, [1, 1, 1, 1, 0, 0]])
    from probing.engine.pooling import pool_word_attention

    word_attention = pool_word_attention(token_attention, word_of_token)
    vectors = torch.randn(2, 3, 4, generator=generator)
    sentences = [Sentence(("a", "b", "c"), (1, -1, 1), ("x",) * 3, ("X", "X", "PUNCT")),
                 Sentence(("d", "e"), (-1, 0), ("x",) * 2, ("X",) * 2, index=1)]
    examples = ProbeExamples()
    examples.update(word_attention, token_attention, word_of_token, mask, vectors, sentences, [3, 2])
    batch = ProbeBatch.from_engine(word_attention, token_attention, word_of_token, mask, vectors, [3, 2])
    rebuilt = ProbeBatch.of(examples.examples)
    assert torch.allclose(rebuilt.attention, batch.attention, atol=1e-3)  # float16 storage
    assert torch.allclose(rebuilt.special, batch.special, atol=1e-3)
    assert examples.examples[0].scored.tolist() == [True, False, False]
    assert examples.nbytes() == 2 * (1 * 2 * (9 + 4) + 2 * 1 * 2 * (3 + 2) + 4 * (3 + 2))


def test_word_vectors_average_pieces():
    weight = torch.arange(12, dtype=torch.float32).view(6, 2)
    ids = torch.tensor([[0, 3, 5, 1, 0], [0, 2, 0, 0, 0]])
    word_of_token = torch.tensor([[-1, 0, 0, 1, -1], [-1, 0, -1, -1, -1]])
    vectors = word_vectors(weight, ids, word_of_token, 2)
    assert vectors.tolist() == [[[8.0, 9.0], [2.0, 3.0]], [[4.0, 5.0], [0.0, 0.0]]]


def test_read_word_vectors(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("3 2\nthe 0.5 1\ncat -1 2.5e-1\n", encoding="utf-8")
    vectors = read_word_vectors(path)
    assert vectors.dim == 2
    assert vectors.lookup(["The", "cat", "zebra"]).tolist() == [[0.5, 1.0], [-1.0, 0.25], [0.0, 0.0]]
    assert (vectors.unknown, vectors.looked_up) == (1, 3)


@pytest.mark.parametrize(
    "text, line, message",
    [("a 1 2\nb 1\n", 2, "expected 2 numbers"), ("a 1 x\n", 1, "not a number"), ("a\n", 1, "no numbers")],
)
def test_read_word_vectors_errors_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProbingError, match=message) as error:
        read_word_vectors(path)
    assert str(error.value).startswith(f"{path}:{line}: ")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(ProbingError, match="no word vectors"):
        read_word_vectors(empty)


def random_tree(n: int, generator: torch.Generator) -> tuple[int, ...]:
    """A random tree: a random order of the words, each attached to an earlier one in that order."""
    order = torch.randperm(n, generator=generator).tolist()
    heads = [0] * n
    heads[order[0]] = -1
    for position in range(1, n):
        heads[order[position]] = order[int(torch.randint(0, position, (1,), generator=generator))]
    return tuple(heads)


def synthetic(count: int, seed: int, heads_of=random_tree, planted=(1, 0), dim=6):
    """Sentences with random trees; in head ``planted`` each word attends 0.6 to its gold head and the root
    word attends to the first special token; the other heads are random; vectors are random."""
    generator = torch.Generator().manual_seed(seed)
    examples, sentences = ProbeExamples(), []
    for index in range(count):
        n = int(torch.randint(3, 9, (1,), generator=generator))
        heads = heads_of(n, generator)
        sentence = Sentence(words=tuple(f"w{i}" for i in range(n)), heads=heads, labels=("dep",) * n,
                            upos=("X",) * n, index=index)
        attention = torch.softmax(torch.randn(1, 2, 2, n, n, generator=generator), dim=-1) * 0.5
        special = torch.rand(1, 2, 2, 2, n, generator=generator) * 0.2
        signal = torch.full((n, n), 0.4 / n)
        for word, head in enumerate(heads):
            if head >= 0:
                signal[word, head] += 0.6
            else:
                special[0, 0, planted[0], planted[1], word] = 0.9
        attention[0, planted[0], planted[1]] = signal
        vectors = torch.randn(1, n, dim, generator=generator)
        examples.add(attention, special, vectors, [sentence], [n])
        sentences.append(sentence)
    return examples.examples, sentences


def heldout(probe, examples, sentences):
    counts = ProbeTreeCounts()
    for start in range(0, len(examples), 16):
        group = examples[start : start + 16]
        counts.update(probe, ProbeBatch.of(group), sentences[start : start + 16])
    return counts.result()


@pytest.mark.parametrize("name", ["attn", "attn+vectors"])
def test_probe_learns_a_planted_head(name):
    train, _ = synthetic(120, seed=1)
    test, test_sentences = synthetic(60, seed=2)
    probe = make_probe(name, 2, 2, dim=6, seed=0)
    if name == "attn":
        assert sum(p.numel() for p in probe.parameters()) == 2 * 2 * 2 + 3
    record = train_probe(probe, train, seed=0, epochs=15, learning_rate=0.05, batch_sentences=16)
    assert record["mean_loss_per_epoch"][-1] < record["mean_loss_per_epoch"][0]
    result = heldout(probe, test, test_sentences)
    words = result["words"]
    assert words > 100
    assert result["decodings"]["argmax"]["uas"] >= 0.95 * words
    assert result["decodings"]["mst"]["uas"] >= 0.95 * words


def test_distances_probe_learns_a_positional_tree():
    """Every word's head is the next word (the last is the root): distance alone tells the head."""

    def chain(n, generator):
        return tuple(list(range(1, n)) + [-1])

    train, _ = synthetic(80, seed=3, heads_of=chain)
    test, test_sentences = synthetic(40, seed=4, heads_of=chain)
    probe = make_probe("distances+vectors", 2, 2, dim=6, seed=0)
    train_probe(probe, train, seed=0, epochs=15, learning_rate=0.01, batch_sentences=16)
    result = heldout(probe, test, test_sentences)
    assert result["decodings"]["argmax"]["uas"] == result["words"]


def test_same_seed_same_numbers_and_another_seed_differs():
    train, _ = synthetic(40, seed=5)
    test, sentences = synthetic(20, seed=6)
    runs = []
    for seed in (7, 7, 8):
        probe = make_probe("attn+vectors", 2, 2, dim=6, seed=seed)
        record = train_probe(probe, train, seed=seed, epochs=3, learning_rate=0.01, batch_sentences=8)
        runs.append((record, heldout(probe, test, sentences), [p.detach().clone() for p in probe.parameters()]))
    assert runs[0][:2] == runs[1][:2]
    assert all(torch.equal(a, b) for a, b in zip(runs[0][2], runs[1][2]))
    assert not all(torch.equal(a, b) for a, b in zip(runs[0][2], runs[2][2]))
    assert runs[0][0]["seed"] == 7 and runs[0][0]["optimiser"] == "Adam"


def test_decode_maps_root_to_minus_one_and_builds_trees():
    scores = torch.tensor([[[-9.0, 2.0, 1.0, 0.0], [3.0, -9.0, 0.5, 5.0], [1.0, 4.0, -9.0, 0.0]]])  # words 0-2, ROOT
    predicted = decode(scores, torch.tensor([3]), torch.tensor([1]))
    assert predicted[0, 0].tolist() == [1, -1, 1]  # argmax: word 1 picks ROOT
    assert predicted[0, 1].tolist() == [1, -1, 1]  # mst rooted at word 1


def test_unknown_probe_name():
    with pytest.raises(ValueError, match="unknown probe"):
        make_probe("attn+glove", 1, 1, 1, 0)
