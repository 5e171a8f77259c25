"""Head clusters (Clark et al. sec. 6): Jensen-Shannon divergences, MDS, behaviour labels, probe marks."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from helpers import planted_head_attention
from scipy.spatial.distance import jensenshannon

from probing.analyses.heads.accumulator import HeadDivergence, HeadsAccumulator, behaviours, embed, probe_marks
from probing.cli import main
from probing.data.inputs import InputSource
from probing.engine.passes import run_pass
from probing.engine.token_roles import TokenRoles
from probing.errors import ProbingError
from probing.model.loading import load_model
from probing.testing import sample_path, tiny_bert


def divergence_of(attention, real):
    layers, heads = attention.shape[1:3]
    accumulator = HeadDivergence(layers, heads)
    accumulator.update(attention, real)
    return accumulator.matrix()


def test_hand_computed_divergence():
    # Head 0: [1, 0]; head 1: [0.5, 0.5]. M = [0.75, 0.25]; JS = H(M) - (0 + ln 2) / 2.
    attention = torch.tensor([[1.0, 0.0], [0.5, 0.5]]).view(1, 1, 2, 1, 2).expand(1, 1, 2, 2, 2).clone()
    attention[0, 0, 0, 1] = torch.tensor([1.0, 0.0])
    attention[0, 0, 1, 1] = torch.tensor([0.5, 0.5])
    expected = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)) - math.log(2) / 2
    matrix = divergence_of(attention, torch.ones(1, 2))
    assert matrix[0, 1] == pytest.approx(expected, abs=1e-6)


def random_attention(seed=0, batch=3, layers=2, heads=3, tokens=5, lengths=(5, 3, 4)):
    generator = torch.Generator().manual_seed(seed)
    real = (torch.arange(tokens).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)).long()
    scores = torch.randn(batch, layers, heads, tokens, tokens, generator=generator)
    scores = scores.masked_fill(real.view(batch, 1, 1, 1, tokens) == 0, float("-inf"))
    return scores.softmax(dim=-1), real


def test_divergence_equals_scipy_per_row_averaged_over_real_queries():
    attention, real = random_attention()
    matrix = divergence_of(attention, real)
    flat = attention.flatten(1, 2)  # [batch, layer * head, query, key]
    expected = np.zeros_like(matrix)
    rows = 0
    for b in range(attention.shape[0]):
        n = int(real[b].sum())
        for i in range(n):
            rows += 1
            for x in range(flat.shape[1]):
                for y in range(flat.shape[1]):
                    expected[x, y] += jensenshannon(flat[b, x, i, :n].double(), flat[b, y, i, :n].double()) ** 2
    assert np.allclose(matrix, expected / rows, atol=1e-6)


def test_identical_heads_have_zero_divergence_and_the_matrix_is_symmetric():
    attention, real = random_attention()
    attention[:, 1, 2] = attention[:, 0, 0]  # head 2 of layer 2 copies head 1 of layer 1
    matrix = divergence_of(attention, real)
    assert matrix[0, 5] == pytest.approx(0.0, abs=1e-6) and matrix[5, 0] == matrix[0, 5]
    assert np.array_equal(matrix, matrix.T)
    assert np.all(np.diag(matrix) == 0)
    different = ~np.eye(6, dtype=bool)
    different[0, 5] = different[5, 0] = False
    assert np.all(matrix[different] > 1e-3)
    assert matrix.max() <= math.log(2)


def test_padding_queries_and_keys_do_not_count():
    attention, real = random_attention()
    garbage = attention.clone()
    garbage[1, :, :, 3:] = torch.rand(2, 3, 2, 5)  # rows of padding queries of unit 2
    assert np.allclose(divergence_of(garbage, real), divergence_of(attention, real))


def test_merge_of_batches_equals_one_pass():
    attention, real = random_attention()
    roles = lambda rows: TokenRoles.from_masks(real[rows], torch.zeros_like(real[rows]), torch.zeros_like(real[rows]))  # noqa: E731
    whole = HeadsAccumulator(2, 3)
    whole.add(attention, roles(slice(None)))
    first, second = HeadsAccumulator(2, 3), HeadsAccumulator(2, 3)
    first.add(attention[:1], roles(slice(0, 1)))
    second.add(attention[1:], roles(slice(1, None)))
    merged = first.merge(second)
    assert int(merged.divergence.rows) == int(whole.divergence.rows) == 12
    assert np.allclose(merged.divergence.matrix(), whole.divergence.matrix(), atol=1e-9)
    assert merged.surface.result()["surface"] == whole.surface.result()["surface"]


def test_embedding_is_seeded_and_keeps_identical_heads_together():
    divergence = np.array([[0, 0, 0.5], [0, 0, 0.5], [0.5, 0.5, 0]])
    first, again = embed(divergence, seed=1), embed(divergence, seed=1)
    assert first.shape == (3, 2) and np.array_equal(first, again)
    assert np.linalg.norm(first[0] - first[1]) < 1e-3
    assert np.linalg.norm(first[0] - first[2]) == pytest.approx(math.sqrt(0.5), rel=0.05)


def surface_of(**heads):
    """A 1 x N surface part where each keyword is the per-head list of one statistic."""
    count = len(next(iter(heads.values())))
    zeros = [[0.0] * count]
    base = {name: zeros for name in ("previous", "next", "first_special", "separator", "punctuation")}
    base["entropy"] = [[1.0] * count]
    base.update({name: [values] for name, values in heads.items()})
    return {"heads": base, "uniform_entropy": {"entropy": 2.0}}


def test_behaviour_thresholds():
    surface = surface_of(
        previous=[0.6, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0],  # previous/next need more than 0.5 (head 6 from 1 has not)
        separator=[0.55, 0.45, 0.0, 0.0, 0.0, 0.0, 0.0, 0.35],  # head 1 (from 1): two rules hold, the larger share wins
        punctuation=[0.0, 0.0, 0.35, 0.0, 0.0, 0.0, 0.0, 0.31],  # head 8 from 1: separator 0.35 is under 0.4
        first_special=[0.0, 0.0, 0.0, 0.41, 0.0, 0.0, 0.0, 0.0],
        entropy=[0.1, 0.1, 0.1, 0.1, 1.7, 1.5, 1.6, 0.1],  # broad from 0.8 x 2.0 = 1.6 on
    )
    expected = ["previous", "separator", "punctuation", "first special", "broad", "other", "broad", "punctuation"]
    assert behaviours(surface) == [expected]


def test_missing_statistic_never_labels():
    surface = surface_of(next=[0.7, 0.1])
    surface["heads"]["separator"] = None  # no separator in a decoder's input
    assert behaviours(surface) == [["next", "other"]]


def test_planted_heads_are_labelled_as_planted():
    loaded = load_model(tiny_bert())
    source = InputSource.treebank(str(sample_path()), limit=10)
    heads = HeadsAccumulator(loaded.num_layers, loaded.num_heads)
    with planted_head_attention(loaded.model, {0: "previous", 1: "last", 2: "uniform", 3: "next"}):
        run_pass(loaded, source, [heads])
    divergence = heads.divergence
    labels = behaviours(heads.surface.result()["surface"])
    assert labels == [["previous", "separator", "broad", "next"]] * 2
    matrix = divergence.matrix()
    for head in range(4):  # the same rule in both layers: the same rows
        assert matrix[head, 4 + head] == pytest.approx(0.0, abs=1e-6)  # float32 within a row
    # previous vs last: disjoint one-hot rows everywhere, so JS = ln 2 (less the smoothing).
    assert matrix[0, 1] == pytest.approx(math.log(2), abs=1e-6)


def test_probe_marks_need_a_probe_of_the_same_shape():
    probe = {"model": {"num_layers": 2, "num_heads": 4},
             "relations": {"det": {"best": {"layer": 1, "head": 3, "accuracy": 0.5}}, "x": {"best": None}}}
    assert probe_marks(probe, 2, 4) == [{"relation": "det", "layer": 1, "head": 3, "accuracy": 0.5}]
    with pytest.raises(ProbingError, match="has 2x4 heads"):
        probe_marks(probe, 6, 12)


def test_heads_command_with_a_probe(tmp_path, capsys):
    probe_path = tmp_path / "probe.json"
    assert main(["score", "--model", tiny_bert(), "--treebank", str(sample_path()), "--limit", "6", "--bootstrap", "0",
                 "--output", str(probe_path)]) == 0
    status = main(["heads", "--model", tiny_bert(), "--treebank", str(sample_path()), "--limit", "6", "--probe",
                   str(probe_path), "--output", str(tmp_path / "out" / "heads.json"), "--quiet"])
    assert status == 0
    result = json.loads((tmp_path / "out" / "heads.json").read_text())
    heads = result["heads"]
    assert len(heads["mds"]) == 8 and len(heads["divergence"]["mean"]) == 8
    assert "1e-10" in heads["divergence"]["smoothing"]
    assert {mark["relation"] for mark in heads["probe_marks"]} == {"dobj", "det", "pobj", "poss", "all"}
    assert (tmp_path / "out" / "heads-heads.png").read_bytes()[:4] == b"\x89PNG"
    assert "attends to" in capsys.readouterr().out
