"""Disabling heads: the intervention itself, conditions, the metrics, stacked conditions, and the command."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from helpers import tiny_model
from transformers import AutoModel, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer, BertConfig, BertForSequenceClassification

from probing.analyses.ablation import accumulator as ablation
from probing.analyses.ablation.accumulator import AblationAccumulator
from probing.analyses.ablation.conditions import INTACT, chosen_heads, each_head, each_layer
from probing.analyses.ablation.metrics import METRICS
from probing.cli import main
from probing.data.inputs import InputSource
from probing.engine.passes import run_pass
from probing.errors import ProbingError
from probing.model.interventions import uniform_heads
from probing.model.loading import load_model
from probing.testing import sample_path, tiny_bert

TEXT = "the dog barks at the cat .\nit runs home .\n\na cat sleeps on the mat .\nthe sun is up today .\nshe reads .\n"


@pytest.fixture(scope="module")
def masked_lm():
    path = tiny_bert()
    model = AutoModelForMaskedLM.from_pretrained(path, attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    batch = tokenizer(["the dog barks at the cat on the mat", "a cat"], padding=True, return_tensors="pt")
    return model, batch


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def forward(model, batch):
    with torch.inference_mode():
        return model(**batch, output_attentions=True)


def test_disabling_nothing_changes_no_output(masked_lm):
    model, batch = masked_lm
    before = forward(model, batch)
    with uniform_heads(model, ()):
        assert model.config._attn_implementation == uniform_heads.NAME
        during = forward(model, batch)
    assert torch.equal(before.logits, during.logits)
    assert all(torch.equal(a, b) for a, b in zip(before.attentions, during.attentions))


def test_disabled_head_is_uniform_over_real_tokens_and_others_untouched(masked_lm):
    model, batch = masked_lm
    before = forward(model, batch)
    with uniform_heads(model, {(1, 2)}) as intervention:
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


def test_a_per_row_mask_disables_heads_in_its_own_copy_only(masked_lm):
    model, batch = masked_lm
    alone = {}
    for heads in ((), ((0, 1),), ((1, 3),)):
        with uniform_heads(model, set(heads)):
            alone[heads] = forward(model, batch).logits
    stacked = {key: value.repeat(3, 1) for key, value in batch.items()}
    mask = torch.zeros(6, 2, 4, dtype=torch.bool)
    mask[2:4, 0, 1] = True
    mask[4:6, 1, 3] = True
    with uniform_heads(model, mask) as intervention:
        logits = forward(model, stacked).logits
    intervention.verify()
    for copy, heads in enumerate(alone):
        torch.testing.assert_close(logits[2 * copy : 2 * copy + 2], alone[heads], rtol=1e-5, atol=1e-5)


def test_context_manager_restores_the_model_even_after_an_error(masked_lm):
    model, batch = masked_lm
    before = forward(model, batch)
    with pytest.raises(RuntimeError):
        with uniform_heads(model, {(0, 0), (1, 3)}):
            raise RuntimeError("inside")
    assert model.config._attn_implementation == "eager"
    assert torch.equal(before.logits, forward(model, batch).logits)


@pytest.mark.parametrize("family", ["gpt2", "llama"])  # llama: grouped-query attention (2 key/value heads for 4)
def test_causal_model_is_uniform_over_the_allowed_keys(family):
    path = tiny_model(family)
    model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager").eval()
    ids = torch.tensor([[5, 6, 7, 8, 9]])
    before = model(ids, output_attentions=True)
    with uniform_heads(model, {(0, 1)}) as intervention:
        during = model(ids, output_attentions=True)
    intervention.verify()
    expected = torch.tril(torch.ones(5, 5)) / torch.arange(1, 6)[:, None]
    assert torch.allclose(during.attentions[0][0, 1], expected, atol=1e-6)
    others = [0, 2, 3]
    assert torch.equal(before.attentions[0][0, others], during.attentions[0][0, others])


def test_model_outside_the_attention_interface_is_refused():
    model = AutoModel.from_pretrained(tiny_model("mpnet"), attn_implementation="eager")
    with pytest.raises(ProbingError, match="AttentionInterface"):
        with uniform_heads(model, {(0, 0)}):
            pass
    assert model.config._attn_implementation == "eager"


def test_conditions():
    assert [c.heads for c in chosen_heads(["2-3, 1-1"], 2, 4)] == [(), ((0, 0), (1, 2))]
    assert chosen_heads(["2-3, 1-1"], 2, 4)[1].label == "1-1,2-3"
    with pytest.raises(ProbingError, match="3-1 does not exist"):
        chosen_heads(["3-1"], 2, 4)
    with pytest.raises(ProbingError, match="LAYER-HEAD"):
        chosen_heads(["0.5"], 2, 4)
    heads = each_head(2, 4)
    assert len(heads) == 9 and heads[0].label == "none" and heads[6].label == "2-2" and heads[6].heads == ((1, 1),)
    assert each_layer(2, 4)[2].heads == tuple((1, head) for head in range(4))


def test_mlm_metric_reports_changes_with_paired_intervals(text, tmp_path):
    output = tmp_path / "ablation.json"
    assert main(["ablate", "--model", tiny_bert(), "--text", str(text), "--each-layer", "--metric", "mlm",
                 "--bootstrap", "50", "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    base = result["baseline"]["loss"]["value"]
    assert base > 0 and [c["label"] for c in result["conditions"]] == ["none", "layer 1", "layer 2"]
    for condition in result["conditions"][1:]:
        part = condition["parts"]["loss"]
        assert part["change"] == pytest.approx(part["value"] - base)
        assert part["interval"][0] <= part["change"] <= part["interval"][1]
        assert part["improvement"] == pytest.approx(-part["change"])


def run_ablation(model: str, metric: str, conditions, *, source, head=None, bootstrap=20, **options):
    loaded = load_model(model, head=head or METRICS[metric].head)
    chosen = METRICS[metric](**options)
    chosen.setup(loaded)
    accumulator = AblationAccumulator(chosen, conditions, loaded.num_layers, loaded.num_heads, bootstrap=bootstrap,
                                      causal=loaded.is_causal)
    run_pass(loaded, source, [accumulator])
    return accumulator


def test_mlm_masks_are_seeded_and_the_same_for_every_condition(text):
    source = lambda: InputSource.text(str(text))  # noqa: E731
    first = run_ablation(tiny_bert(), "mlm", each_layer(2, 4), source=source())
    again = run_ablation(tiny_bert(), "mlm", each_layer(2, 4), source=source())
    assert torch.equal(first.state_tensors["numerator"], again.state_tensors["numerator"])
    masked_tokens = first.state_tensors["denominator"][:, 0]
    assert masked_tokens.min() == masked_tokens.max() > 0  # every condition sees the same masks
    other_seed = run_ablation(tiny_bert(), "mlm", each_layer(2, 4), source=source(), seed=7)
    assert not torch.equal(first.state_tensors["numerator"], other_seed.state_tensors["numerator"])


@pytest.mark.parametrize("metric, model, head", [("mlm", "bert", None), ("lm", "llama", None), ("probe", "bert", None)])
def test_stacked_conditions_give_the_numbers_of_one_pass_per_condition(metric, model, head, text, monkeypatch):
    """Many conditions in one forward pass (copies of a batch), the layers below their first disabled
    one reused from the intact model's pass = each condition's own pass through the whole model."""
    path = tiny_bert() if model == "bert" else tiny_model(model)
    source = lambda: InputSource.treebank(str(sample_path()), limit=12)  # noqa: E731
    layers = 2
    conditions = each_head(layers, 4)
    stacked = run_ablation(path, metric, conditions, source=source(), relations=("det", "all"))
    monkeypatch.setattr(ablation, "CONDITION_CELLS", 1)  # one condition per forward pass
    monkeypatch.setattr(ablation, "SHARE_PREFIX", False)  # ... of the whole model
    single = run_ablation(path, metric, conditions, source=source(), relations=("det", "all"))
    assert stacked.result()["conditions"][1:] and len(stacked.conditions) == 9
    for name, tensor in stacked.state_tensors.items():
        if tensor.dtype.is_floating_point:
            torch.testing.assert_close(tensor, single.state_tensors[name], rtol=1e-5, atol=1e-6)
        else:
            assert torch.equal(tensor, single.state_tensors[name]), name


def test_lm_metric_is_the_next_token_loss():
    source = InputSource.treebank(str(sample_path()), limit=4)
    accumulator = run_ablation(tiny_model("llama"), "lm", [INTACT], source=source)
    loaded = load_model(tiny_model("llama"), head="causal_lm")
    total, count = 0.0, 0
    for unit in InputSource.treebank(str(sample_path()), limit=4).units():
        # The tiny Llama's tokenizer reads running text (SentencePiece), so the sentence goes in as the
        # treebank writes it, SpaceAfter=No included; the loss is then computed here, by hand.
        text = "".join(word + (" " if space else "") for word, space in zip(unit.first, unit.sentence.space_after))
        encoded = loaded.tokenizer(text.rstrip(" "), return_tensors="pt")
        with torch.inference_mode():
            logits = loaded.model(**encoded).logits[0, :-1]
        targets = encoded["input_ids"][0, 1:]
        total += float(torch.nn.functional.cross_entropy(logits, targets, reduction="sum"))
        count += len(targets)
    assert float(accumulator.state_tensors["numerator"][0, 0]) == pytest.approx(total, rel=1e-4)
    assert int(accumulator.state_tensors["denominator"][0, 0]) == count


def test_checkpoint_without_mlm_head_gets_a_clear_error(text, tmp_path, capsys):
    encoder_only = tmp_path / "encoder-only"
    AutoModel.from_pretrained(tiny_bert()).save_pretrained(encoder_only)
    AutoTokenizer.from_pretrained(tiny_bert()).save_pretrained(encoder_only)
    assert main(["ablate", "--model", str(encoder_only), "--text", str(text), "--heads", "1-1", "--metric", "mlm"]) == 2
    assert "no trained masked-LM head" in capsys.readouterr().err


def test_probe_metric_reports_best_head_before_and_after(tmp_path):
    output = tmp_path / "probe.json"
    assert main(["ablate", "--model", tiny_bert(), "--limit", "12", "--each-layer", "--metric", "probe",
                 "--relations", "det", "all", "--bootstrap", "30", "--output", str(output), "--quiet"]) == 0
    result = json.loads(output.read_text())
    for relation in ("det", "all"):
        base = result["baseline"][relation]
        assert 0.0 <= base["value"] <= 1.0 and base["detail"].endswith(("dep->head", "head->dep"))
        part = result["conditions"][1]["parts"][relation]
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
    assert main(["ablate", "--model", str(folder), "--labels", str(labels), "--heads", "1-1,2-2", "--metric",
                 "classification", "--bootstrap", "40", "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    assert 0.0 <= result["baseline"]["accuracy"]["value"] <= 1.0
    assert result["conditions"][1]["heads"] == [[0, 0], [1, 1]] and result["conditions"][1]["label"] == "1-1,2-2"
    assert "1-1,2-2" in capsys.readouterr().out
    labels.write_text("text,label\nthe dog,maybe\n", encoding="utf-8")
    assert main(["ablate", "--model", str(folder), "--labels", str(labels), "--heads", "1-1", "--metric",
                 "classification"]) == 2
    assert "label 'maybe'" in capsys.readouterr().err


@pytest.mark.parametrize("family, metric_name", [("bert", "mlm"), ("llama", "lm"), ("bert", "probe")])
def test_layers_below_a_conditions_first_disabled_head_are_not_recomputed(family, metric_name, text):
    """--each-head: layer 1 runs for the intact model and for the conditions of layer 1 only (the probe: their
    layer 1's predictions are the intact model's)."""
    from probing.model.prefix import SharedPrefix

    metric = METRICS[metric_name](relations=("det", "all"))
    loaded = load_model(tiny_bert() if family == "bert" else tiny_model(family), head=metric.head)
    prefix = SharedPrefix.find(loaded)
    assert prefix is not None and len(prefix.blocks) == 2
    metric.setup(loaded)
    runs = []
    first_attention = next(prefix.blocks[0].children())  # a skipped block never calls its submodules
    handle = first_attention.register_forward_hook(lambda module, args, output: runs.append(output[0].shape[0]))
    try:
        accumulator = AblationAccumulator(metric, each_head(2, 4), 2, 4, bootstrap=5, causal=loaded.is_causal)
        run_pass(loaded, InputSource.treebank(str(sample_path()), limit=3), [accumulator])
    finally:
        handle.remove()
    # one row for the accumulator's own check that reuse is exact, then 3 sentences for the intact model and for
    # each of the four heads of layer 1; never for the heads of layer 2
    assert runs == [1, 3, 3 * 4]


def test_a_probe_ablation_keeps_conditions_relative_to_the_intact_model_and_merges_and_reads_alike(tmp_path, capsys):
    """Each condition's counts are written as their (zigzag) difference from the intact model's: a fraction of the
    size of the counts themselves, the same numbers read back, and shards that merge into the whole run."""
    from probing.analyses.ablation.scores import condition_scores, decoded_state, result_scores
    from probing.results.io import read_result
    from probing.results.schema.arrays import encode_array

    common = ["ablate", "--model", tiny_bert(), "--treebank", str(sample_path()), "--limit", "20", "--each-head",
              "--metric", "probe", "--relations", "det", "all", "--bootstrap", "200", "--quiet"]
    assert main([*common, "--output", str(tmp_path / "whole.json")]) == 0
    for index in (0, 1):
        assert main([*common, "--shard", f"{index}/2", "--output", str(tmp_path / f"part{index}.json")]) == 0
    assert main(["merge", str(tmp_path / "part0.json"), str(tmp_path / "part1.json"),
                 "--output", str(tmp_path / "merged.json")]) == 0
    capsys.readouterr()
    whole, merged = read_result(tmp_path / "whole.json"), read_result(tmp_path / "merged.json")
    assert any(name.startswith("d1.") for name in whole["state"]) and "c1.boot_heads" not in whole["state"]
    assert merged["conditions"] == whole["conditions"] and merged["baseline"] == whole["baseline"]

    state = decoded_state(whole)  # the counts themselves, as the accumulator held them
    assert {name.split(".")[0] for name in state} == {f"c{i}" for i in range(len(whole["conditions"]))}
    kept = sum(len(encoded["data"]) for encoded in whole["state"].values())
    absolute = sum(len(encode_array(array)["data"]) for array in state.values())
    assert kept < 0.6 * absolute, (kept, absolute)

    # a file written before (every condition's counts as they are) reads to the same numbers
    before = {**whole, "state": {name: encode_array(array) for name, array in state.items()}}
    for read, expected in zip(result_scores(whole), result_scores(before)):
        np.testing.assert_array_equal(read, expected)  # (NaN where a relation has no pair, in both)
    for read, expected in zip(result_scores(whole), condition_scores("probe", state, len(whole["conditions"]))):
        np.testing.assert_array_equal(read, expected)


def test_the_accumulator_asks_its_metric_and_never_which_metric_it_is():
    """Each metric carries its own state, sums and details (probing.analyses.ablation.metrics): the accumulator
    holds no switch on a metric's type, so a new metric is one class."""
    import ast
    import inspect

    from probing.analyses.ablation import accumulator, metrics

    kinds = {name for name, value in vars(metrics).items() if inspect.isclass(value) and issubclass(value, metrics.Metric)}
    tree = ast.parse(inspect.getsource(accumulator))
    switches = [node.lineno for node in ast.walk(tree)
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance"
                and any(name.id in kinds for name in ast.walk(node.args[1]) if isinstance(name, ast.Name))]
    assert len(kinds) >= 6 and switches == []
