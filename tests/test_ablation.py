"""Disabling heads: the intervention itself, head specs, the three metrics and the command."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoModel, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer, BertConfig, BertForSequenceClassification

from probing.analyses.ablation import ATTENTION_NAME, AblationConfig, disabled_heads, each_head, each_layer, heads_label, make_metric, parse_heads, run_ablation
from probing.cli import main
from probing.errors import ProbingError
from probing.testing import sample_path, tiny_bert, tiny_model

TEXT = "the dog barks at the cat .\nit runs home .\n\na cat sleeps on the mat .\nthe sun is up today .\nshe reads .\n"


@pytest.fixture(scope="module")
def masked_lm():
    path = tiny_bert()
    model = AutoModelForMaskedLM.from_pretrained(path, attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    batch = tokenizer(["the dog barks at the cat on the mat", "a cat"], padding=True, return_tensors="pt")
    return model, batch


def forward(model, batch):
    with torch.inference_mode():
        return model(**batch, output_attentions=True)


def test_disabling_nothing_changes_no_output(masked_lm):
    model, batch = masked_lm
    before = forward(model, batch)
    with disabled_heads(model, ()):
        assert model.config._attn_implementation == ATTENTION_NAME
        during = forward(model, batch)
    assert torch.equal(before.logits, during.logits)
    assert all(torch.equal(a, b) for a, b in zip(before.attentions, during.attentions))


def test_disabled_head_is_uniform_over_real_tokens_and_others_untouched(masked_lm):
    model, batch = masked_lm
    before = forward(model, batch)
    with disabled_heads(model, {(1, 2)}) as intervention:
        during = forward(model, batch)
    intervention.verify()
    assert torch.equal(before.attentions[0], during.attentions[0])  # the layer before: untouched
    others = [0, 1, 3]
    assert torch.equal(before.attentions[1][:, others], during.attentions[1][:, others])
    mask = batch["attention_mask"]  # the second sentence is padded
    for row in range(2):
        real = int(mask[row].sum())
        expected = torch.zeros(mask.shape[1])
        expected[:real] = 1.0 / real
        weights = during.attentions[1][row, 2]  # [query, key]
        assert torch.allclose(weights[:real], expected.expand(real, -1), atol=1e-6)
    assert not torch.equal(before.logits, during.logits)


def test_context_manager_restores_the_model_even_after_an_error(masked_lm):
    model, batch = masked_lm
    before = forward(model, batch)
    with pytest.raises(RuntimeError):
        with disabled_heads(model, {(0, 0), (1, 3)}):
            raise RuntimeError("inside")
    assert model.config._attn_implementation == "eager"
    assert torch.equal(before.logits, forward(model, batch).logits)


@pytest.mark.parametrize("family", ["gpt2", "llama"])  # llama: grouped-query attention (2 key/value heads for 4)
def test_causal_model_is_uniform_over_the_allowed_keys(family):
    path = tiny_model(family)
    model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager").eval()
    ids = torch.tensor([[5, 6, 7, 8, 9]])
    before = model(ids, output_attentions=True)
    with disabled_heads(model, {(0, 1)}) as intervention:
        during = model(ids, output_attentions=True)
    intervention.verify()
    expected = torch.tril(torch.ones(5, 5)) / torch.arange(1, 6)[:, None]
    assert torch.allclose(during.attentions[0][0, 1], expected, atol=1e-6)
    others = [0, 2, 3]
    assert torch.equal(before.attentions[0][0, others], during.attentions[0][0, others])


def test_model_outside_the_attention_interface_is_refused():
    model = AutoModel.from_pretrained(tiny_model("mpnet"), attn_implementation="eager")
    with pytest.raises(ProbingError, match="AttentionInterface"):
        with disabled_heads(model, {(0, 0)}):
            pass
    assert model.config._attn_implementation == "eager"


def test_head_specs():
    assert parse_heads("2-3, 1-1", 2, 4) == {(1, 2), (0, 0)}
    assert heads_label({(1, 2), (0, 0)}) == "1-1,2-3"
    with pytest.raises(ProbingError, match="3-1 does not exist"):
        parse_heads("3-1", 2, 4)
    with pytest.raises(ProbingError, match="LAYER-HEAD"):
        parse_heads("0.5", 2, 4)
    assert len(each_head(2, 4)) == 8 and each_head(2, 4)[5] == ("2-2", frozenset({(1, 1)}))
    assert each_layer(2, 4)[1][1] == frozenset((1, head) for head in range(4))


def test_mlm_metric_reports_changes_with_paired_intervals(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text(TEXT, encoding="utf-8")
    output = tmp_path / "ablation.json"
    assert main(["ablate", tiny_bert(), str(text), "--each-layer", "--metric", "mlm", "--bootstrap", "50", "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    base = result["baseline"]["loss"]["value"]
    assert base > 0 and len(result["conditions"]) == 2
    for condition in result["conditions"]:
        part = condition["parts"]["loss"]
        assert part["change"] == pytest.approx(part["value"] - base)
        assert part["interval"][0] <= part["change"] <= part["interval"][1]
        assert part["improvement"] == pytest.approx(-part["change"])
    improvements = [condition["parts"]["loss"]["improvement"] for condition in result["conditions"]]
    assert improvements == sorted(improvements, reverse=True) or len(set(improvements)) == len(improvements)


def test_mlm_masks_are_seeded_and_the_same_for_every_condition(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text(TEXT, encoding="utf-8")
    config = AblationConfig(model=tiny_bert(), input=str(text), metric="mlm", bootstrap=20)
    first, second = make_metric(config), make_metric(config)
    assert all(torch.equal(a["input_ids"], b["input_ids"]) for a, b in zip(first.batches, second.batches))
    assert first.evaluate().value[0] == second.evaluate().value[0]


def test_checkpoint_without_mlm_head_gets_a_clear_error(tmp_path, capsys):
    encoder_only = tmp_path / "encoder-only"
    AutoModel.from_pretrained(tiny_bert()).save_pretrained(encoder_only)
    AutoTokenizer.from_pretrained(tiny_bert()).save_pretrained(encoder_only)
    text = tmp_path / "text.txt"
    text.write_text(TEXT, encoding="utf-8")
    assert main(["ablate", str(encoder_only), str(text), "--heads", "1-1", "--metric", "mlm"]) == 2
    assert "no trained masked-LM head" in capsys.readouterr().err


def test_probe_metric_reports_best_head_before_and_after():
    config = AblationConfig(model=tiny_bert(), input=str(sample_path()), metric="probe", relations=("det", "all"), limit=12, bootstrap=30)
    metric = make_metric(config)
    result = run_ablation(metric, [("layer 1", frozenset((0, head) for head in range(4)))])
    for relation in ("det", "all"):
        base = result["baseline"][relation]
        assert 0.0 <= base["value"] <= 1.0 and base["detail"].endswith(("dep->head", "head->dep"))
        part = result["conditions"][0]["parts"][relation]
        assert part["detail"] is not None and part["change"] == pytest.approx(part["value"] - base["value"])


def test_classification_metric_on_a_labelled_csv(tmp_path, capsys):
    config = BertConfig.from_pretrained(tiny_bert())
    config.num_labels, config.id2label, config.label2id = 2, {0: "neg", 1: "pos"}, {"neg": 0, "pos": 1}
    torch.manual_seed(0)
    folder = tmp_path / "classifier"
    BertForSequenceClassification(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(tiny_bert()).save_pretrained(folder)
    labels = tmp_path / "labelled.csv"
    rows = [f"the dog {'barks' if i % 2 else 'sleeps'} here,{'pos' if i % 2 else 0}" for i in range(12)]
    labels.write_text("text,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    output = tmp_path / "out.json"
    assert main(["ablate", str(folder), "--labels", str(labels), "--heads", "1-1,2-2", "--metric", "classification", "--bootstrap", "40", "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    assert 0.0 <= result["baseline"]["accuracy"]["value"] <= 1.0
    assert result["conditions"][0]["heads"] == [[0, 0], [1, 1]] and result["conditions"][0]["label"] == "1-1,2-2"
    assert "1-1,2-2" in capsys.readouterr().out
    labels.write_text("text,label\nthe dog,maybe\n", encoding="utf-8")
    assert main(["ablate", str(folder), "--labels", str(labels), "--heads", "1-1", "--metric", "classification"]) == 2
    assert "label 'maybe'" in capsys.readouterr().err
