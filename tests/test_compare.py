"""probing compare: a model against itself, against a copy with one perturbed layer, and mismatches."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from helpers import tiny_model
from transformers import AutoModelForMaskedLM, AutoTokenizer

from probing.analyses.compare.accumulator import CompareAccumulator
from probing.cli import main
from probing.data.inputs import InputSource
from probing.engine.passes import run_pass
from probing.engine.readings import READINGS
from probing.model.loading import load_model
from probing.testing import tiny_bert

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
    assert main(["compare", "--model", tiny_bert(), "--second-model", tiny_bert(), "--text", str(text_file), "--pairs",
                 "--output", str(tmp_path / "compare.json")]) == 0
    result = json.loads((tmp_path / "compare.json").read_text())
    np.testing.assert_allclose(result["similarity"], 1.0, atol=1e-5)
    np.testing.assert_allclose(result["layer_means"], 1.0, atol=1e-5)
    assert result["input"]["units_used"] == 3
    assert (tmp_path / "compare-compare.png").read_bytes()[:4] == b"\x89PNG"


def test_a_perturbed_layer_leaves_the_layers_before_it_alone(text_file, tmp_path):
    perturbed = perturbed_copy(tmp_path / "perturbed", layer=1)
    first = load_model(tiny_bert(num_layers=3))
    cosines = CompareAccumulator(3, 4, load_model(perturbed), READINGS["weights"])
    run_pass(first, InputSource.text(str(text_file)), [cosines])
    similarity = cosines.similarity()
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
    plain, padded = CompareAccumulator(1, 2), CompareAccumulator(1, 2)
    plain.add(a, b, torch.ones(1, 4, dtype=torch.long))
    padded.add(padded_a, padded_b, torch.tensor([[1, 1, 1, 1, 0, 0]]))
    np.testing.assert_allclose(padded.similarity(), plain.similarity(), atol=1e-6)
    assert int(padded.state_tensors["rows"]) == 4 and int(padded.state_tensors["units"]) == 1


def test_merge_adds_parts():
    a = torch.softmax(torch.randn(2, 1, 1, 3, 3, generator=torch.Generator().manual_seed(2)), dim=-1)
    b = torch.softmax(torch.randn(2, 1, 1, 3, 3, generator=torch.Generator().manual_seed(3)), dim=-1)
    whole, first, second = CompareAccumulator(1, 1), CompareAccumulator(1, 1), CompareAccumulator(1, 1)
    mask = torch.ones(2, 3, dtype=torch.long)
    whole.add(a, b, mask)
    first.add(a[:1], b[:1], mask[:1])
    second.add(a[1:], b[1:], mask[1:])
    np.testing.assert_allclose(first.merge(second).similarity(), whole.similarity())


def test_mismatched_tokenizers_give_a_clear_error(text_file, tmp_path, capsys):
    assert main(["compare", "--model", tiny_bert(), "--second-model", tiny_model("gpt2"), "--text", str(text_file)]) == 2
    error = capsys.readouterr().err
    assert "the tokenizers differ" in error and "same tokens" in error


def test_mismatched_shapes_give_a_clear_error(text_file, tmp_path, capsys):
    assert main(["compare", "--model", tiny_bert(), "--second-model", tiny_bert(num_layers=3), "--text",
                 str(text_file)]) == 2
    assert "differ in shape" in capsys.readouterr().err
    assert main(["compare", "--model", tiny_bert(), "--second-model", tiny_bert(num_heads=2), "--text",
                 str(text_file)]) == 2
    assert "differ in shape" in capsys.readouterr().err
