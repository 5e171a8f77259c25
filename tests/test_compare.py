"""probing compare: a model against itself, against a copy with one perturbed layer, and mismatches."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer

from probing.analyses.compare import CosineStats, compare_attention
from probing.cli import main
from probing.errors import ProbingError
from probing.extraction import load_model
from probing.inputs import read_units
from probing.testing import tiny_bert, tiny_model

TEXT = "the dog barks at the cat .\nit runs home .\n\na cat sleeps on the mat .\nthe sun is up today .\nshe reads .\n"


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("compare") / "text.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def perturbed_copy(folder, layer: int, num_layers: int = 3) -> str:
    """tiny_bert with noise added to one layer's query weights, saved next to its tokenizer."""
    model = AutoModelForMaskedLM.from_pretrained(tiny_bert(num_layers=num_layers))
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        query = model.bert.encoder.layer[layer].attention.self.query.weight
        query.add_(torch.randn(query.shape, generator=generator))
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(tiny_bert(num_layers=num_layers)).save_pretrained(folder)
    return str(folder)


def test_a_model_with_itself_is_one_everywhere(text_file, tmp_path):
    assert main(["compare", tiny_bert(), tiny_bert(), str(text_file), "--pairs", "--output-dir", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "compare.json").read_text())
    np.testing.assert_allclose(result["similarity"], 1.0, atol=1e-5)
    np.testing.assert_allclose(result["layer_means"], 1.0, atol=1e-5)
    assert result["input"]["units"] == 3 and (tmp_path / "compare.png").stat().st_size > 0


def test_a_perturbed_layer_leaves_the_layers_before_it_alone(text_file, tmp_path):
    perturbed = perturbed_copy(tmp_path / "perturbed", layer=1)
    similarity = compare_attention(load_model(tiny_bert(num_layers=3)), load_model(perturbed), read_units(text_file)).result()
    np.testing.assert_allclose(similarity[0], 1.0, atol=1e-5)  # layer 1: before the perturbed one
    assert similarity[1].mean() < 0.99  # layer 2: its queries were perturbed
    assert similarity[1].min() < 0.95


def test_padding_is_excluded_as_rows_and_keys():
    a = torch.softmax(torch.randn(1, 1, 2, 4, 4, generator=torch.Generator().manual_seed(0)), dim=-1)
    b = torch.softmax(torch.randn(1, 1, 2, 4, 4, generator=torch.Generator().manual_seed(1)), dim=-1)
    padded_a, padded_b = torch.zeros(1, 1, 2, 6, 6), torch.zeros(1, 1, 2, 6, 6)
    padded_a[..., :4, :4], padded_b[..., :4, :4] = a, b
    padded_a[..., 4:, :] = padded_b[..., 4:, :] = 1 / 6  # padded rows that agree must not raise the mean
    padded_b[..., :4, 4:] = 0.3  # nor may padded keys that differ lower it
    plain, padded = CosineStats(1, 2), CosineStats(1, 2)
    plain.update(a, b, torch.ones(1, 4, dtype=torch.long))
    padded.update(padded_a, padded_b, torch.tensor([[1, 1, 1, 1, 0, 0]]))
    np.testing.assert_allclose(padded.result(), plain.result(), atol=1e-6)
    assert padded.rows == 4 and padded.units == 1


def test_merge_adds_parts():
    a = torch.softmax(torch.randn(2, 1, 1, 3, 3, generator=torch.Generator().manual_seed(2)), dim=-1)
    b = torch.softmax(torch.randn(2, 1, 1, 3, 3, generator=torch.Generator().manual_seed(3)), dim=-1)
    whole, first, second = CosineStats(1, 1), CosineStats(1, 1), CosineStats(1, 1)
    mask = torch.ones(2, 3, dtype=torch.long)
    whole.update(a, b, mask)
    first.update(a[:1], b[:1], mask[:1])
    second.update(a[1:], b[1:], mask[1:])
    np.testing.assert_allclose(first.merge(second).result(), whole.result())


def test_mismatched_tokenizers_give_a_clear_error(text_file, tmp_path, capsys):
    assert main(["compare", tiny_bert(), tiny_model("gpt2"), str(text_file), "--output-dir", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "the tokenizers differ" in error and "same tokens" in error


def test_mismatched_shapes_give_a_clear_error(text_file, tmp_path, capsys):
    assert main(["compare", tiny_bert(), tiny_bert(num_layers=3), str(text_file), "--output-dir", str(tmp_path)]) == 2
    assert "differ in shape" in capsys.readouterr().err
    with pytest.raises(ProbingError, match="differ in shape"):
        compare_attention(load_model(tiny_bert()), load_model(tiny_bert(num_heads=2)), read_units(text_file))
