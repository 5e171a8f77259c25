"""Gradient importance (Clark et al. Fig. 3): masking, the accumulator by hand, a tiny masked LM, headless models."""

from __future__ import annotations

import copy
import dataclasses
import json
import math

import pytest
import torch
from helpers import planted_head_attention

from probing.analyses.gradients.accumulator import GradientAccumulator, batch_gradients
from probing.cli import main
from probing.data.inputs import InputSource
from probing.engine.accumulator import BatchView
from probing.engine.batching import batches_of_chunk
from probing.engine.options import PassOptions
from probing.engine.passes import run_pass
from probing.engine.token_roles import TokenRoles
from probing.errors import ProbingError
from probing.model.loading import load_model
from probing.model.masking import choose_masked
from probing.results.pass_statistics import BatchStats
from probing.testing import sample_path, tiny_bert, tiny_wordpiece_tokenizer


def test_masking_is_seeded_by_unit_and_skips_special_and_padding():
    real = torch.tensor([1] * 22 + [0, 0])
    special = torch.zeros(24, dtype=torch.long)
    special[0] = special[21] = 1
    chosen = choose_masked(real, special, seed=5, index=7)
    assert int(chosen.sum()) == 3  # round(0.15 * 20 candidates)
    assert not chosen[[0, 21, 22, 23]].any()
    assert torch.equal(chosen, choose_masked(real, special, seed=5, index=7))
    assert not torch.equal(chosen, choose_masked(real, special, seed=6, index=7))
    assert int(choose_masked(torch.tensor([1, 1, 1]), torch.tensor([1, 0, 1]), seed=0, index=0).sum()) == 1


def test_accumulator_by_hand():
    # One unit [CLS] w . [SEP], 1 layer x 1 head; gradient entries chosen so each kind's mean is easy.
    gradient = torch.tensor([[1.0, 2.0, 3.0, 4.0]] * 4).view(1, 1, 1, 4, 4)
    gradient[0, 0, 0, 3, 3] = -8.0  # magnitudes count
    attention = torch.full((1, 1, 1, 4, 4), 0.25)
    roles = TokenRoles.from_masks(torch.ones(1, 4), torch.tensor([[1, 0, 0, 1]]), torch.tensor([[0, 0, 1, 0]]))
    stats = GradientAccumulator(1, 1)
    stats.add(gradient, attention, roles, loss=2.0, scored=1)
    result = stats.result()["gradients"]
    assert result["gradient"]["first_special"] == [[1.0]]
    assert result["gradient"]["other"] == [[2.0]]
    assert result["gradient"]["punctuation"] == [[3.0]]
    assert result["gradient"]["separator"] == [[(4 + 4 + 4 + 8) / 4]]
    assert result["layer_attention"]["separator"] == [0.25]
    assert result["weights"] == {"first_special": 4, "separator": 4, "punctuation": 4, "other": 4}
    assert result["mean_unit_loss"] == 2.0


@pytest.fixture(scope="module")
def masked_lm():
    return load_model(tiny_bert(), head="masked_lm")


def gradient_result(loaded, seed, batch_size=4, limit=8):
    accumulator = GradientAccumulator(loaded.num_layers, loaded.num_heads, seed=seed)
    run_pass(loaded, InputSource.treebank(str(sample_path()), limit=limit), [accumulator],
             PassOptions(batch_size=batch_size))
    return accumulator.result()["gradients"]


def first_view(loaded, limit: int) -> BatchView:
    units = list(InputSource.treebank(str(sample_path()), limit=limit).units())
    batch = next(batches_of_chunk(units, loaded.tokenizer, batch_size=limit, max_length=128, stats=BatchStats()))
    return BatchView(batch, None, loaded)


def test_tiny_masked_lm_gives_finite_non_negative_deterministic_values(masked_lm):
    first = gradient_result(masked_lm, seed=0)
    for kind, values in first["layer_gradient"].items():
        assert len(values) == 2
        assert all(math.isfinite(v) and v >= 0 for v in values), kind
    assert any(v > 0 for v in first["layer_gradient"]["other"])
    assert first == gradient_result(masked_lm, seed=0)
    assert first["scored_tokens"] > 0 and first["mean_unit_loss"] > 0
    assert first != gradient_result(masked_lm, seed=1)


def test_batching_does_not_change_the_numbers(masked_lm):
    one = gradient_result(masked_lm, seed=0, batch_size=1, limit=5)
    many = gradient_result(masked_lm, seed=0, batch_size=5, limit=5)
    assert one["scored_tokens"] == many["scored_tokens"]
    for kind in one["layer_gradient"]:
        assert one["layer_gradient"][kind] == pytest.approx(many["layer_gradient"][kind], rel=1e-4)


def test_gradient_is_the_derivative_of_the_loss(masked_lm):
    """A finite difference agrees with the returned gradient (scaling one head's weights)."""
    exact = dataclasses.replace(masked_lm, model=copy.deepcopy(masked_lm.model).double())  # float64: no rounding noise
    view = first_view(exact, limit=2)
    attention, gradient, loss, _ = batch_gradients(view, "masked_lm", seed=0)
    assert gradient.shape[:3] == (2, 2, 4) and torch.isfinite(gradient).all()
    # Scaling head 0's attention weights by (1 + e) in every layer changes the loss by e * sum(A * dL/dA).
    predicted = float((attention[:, :, 0].double() * gradient[:, :, 0].double()).sum())
    epsilon = 1e-4
    with _scaled_head(exact.model, 0, 1 + epsilon):
        _, _, shifted, _ = batch_gradients(view, "masked_lm", seed=0)
    assert abs(predicted) > 1e-6
    assert (shifted - loss) / epsilon == pytest.approx(predicted, rel=1e-2)


class _scaled_head:
    """Multiply one head's attention weights by a factor in every layer (through its value projection)."""

    def __init__(self, model, head, factor):
        self.model, self.head, self.factor = model, head, factor

    def __enter__(self):
        size = self.model.config.hidden_size // self.model.config.num_attention_heads
        self.saved = []
        for layer in self.model.base_model.encoder.layer:
            value = layer.attention.self.value
            self.saved.append((value.weight.detach().clone(), value.bias.detach().clone()))
            rows = slice(self.head * size, (self.head + 1) * size)
            with torch.no_grad():
                value.weight[rows] *= self.factor
                value.bias[rows] *= self.factor
        return self

    def __exit__(self, *exc):
        with torch.no_grad():
            for layer, (weight, bias) in zip(self.model.base_model.encoder.layer, self.saved):
                layer.attention.self.value.weight.copy_(weight)
                layer.attention.self.value.bias.copy_(bias)


def test_planted_heads_still_carry_gradients(masked_lm):
    with planted_head_attention(masked_lm.model, {0: "previous", 1: "last"}):
        result = gradient_result(masked_lm, seed=0, limit=4)
    assert result["layer_attention"]["separator"][0] > 0.25  # head 1 of 4 sends everything to [SEP]
    assert all(math.isfinite(v) and v > 0 for v in result["layer_gradient"]["separator"])


@pytest.fixture(scope="module")
def headless_bert(tmp_path_factory):
    """A tiny BERT saved without its masked-LM head, as sentence-transformers checkpoints are."""
    from transformers import BertConfig, BertModel

    tokenizer = tiny_wordpiece_tokenizer()
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    folder = tmp_path_factory.mktemp("headless")
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def test_a_model_without_a_trained_head_gets_a_clear_error(headless_bert):
    with pytest.raises(ProbingError, match="no trained masked-LM head.*cls.predictions"):
        load_model(headless_bert, head="masked_lm")


def test_gradients_command(tmp_path, headless_bert, capsys):
    assert main(["gradients", "--model", headless_bert, "--limit", "3", "--quiet"]) == 2
    assert "no trained masked-LM head" in capsys.readouterr().err
    status = main(["gradients", "--model", tiny_bert(), "--treebank", str(sample_path()), "--limit", "4", "--seed", "3",
                   "--output", str(tmp_path / "gradients.json"), "--quiet"])
    assert status == 0
    result = json.loads((tmp_path / "gradients.json").read_text())
    assert result["config"]["seed"] == 3 and result["config"]["mask_rate"] == 0.15
    assert result["analysis"] == "gradients" and result["model"]["architecture"] == "BertForMaskedLM"
    assert (tmp_path / "gradients-gradients.png").read_bytes()[:4] == b"\x89PNG"
