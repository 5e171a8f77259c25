"""The three readings of attention (weights, norms, rollout) on every model family.

Norms are checked against a direct computation from each family's own
weights: the layer's input x is taken from ``output_hidden_states`` (through
the layer's own pre-attention norm where the family has one), the values are
``x W_V^T + b_V`` by hand, and ``||f_h(x_j)||`` is the norm of head h's values
(its key-value group's, under grouped-query attention) through its block of
the output projection, head by head. Rollout is checked against a plain loop
over the real tokens of each sentence.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from helpers import TINY_FAMILIES, tiny_model

from probing.engine.readings import READINGS, ValueNorms, norm_weighted, rollout
from probing.errors import ProbingError
from probing.model.extraction import _run_stack, attention
from probing.model.layout import scored_stack
from probing.model.loading import load_model
from probing.testing import tiny_bert

SENTENCE_LENGTHS = (9, 5, 7)
"""Token counts of the test batch: unequal, so that every family sees padding."""


def as_batch(input_ids: torch.Tensor, attention_mask: torch.Tensor) -> SimpleNamespace:
    """What a reading reads of the engine's Batch."""
    return SimpleNamespace(input_ids=input_ids, attention_mask=attention_mask)


def padded_batch(loaded, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of random ordinary token ids, right-padded, led by the stack's start token when it has one."""
    generator = torch.Generator().manual_seed(seed)
    vocabulary = len(loaded.tokenizer)
    specials = set(loaded.tokenizer.all_special_ids)
    ordinary = torch.tensor([i for i in range(vocabulary) if i not in specials])
    pad = loaded.tokenizer.pad_token_id if loaded.tokenizer.pad_token_id is not None else 0
    longest = max(SENTENCE_LENGTHS)
    input_ids = torch.full((len(SENTENCE_LENGTHS), longest), pad)  # [batch, tok]
    attention_mask = torch.zeros_like(input_ids)  # [batch, tok]
    for row, length in enumerate(SENTENCE_LENGTHS):
        input_ids[row, :length] = ordinary[torch.randint(len(ordinary), (length,), generator=generator)]
        if loaded.prepend_token_id is not None:
            input_ids[row, 0] = loaded.prepend_token_id
        attention_mask[row, :length] = 1
    return input_ids, attention_mask


# ------------------------------------------------------------------------------ direct norms


def layer_parts(family: str, model, hidden_states, layer: int):
    """(x [batch, tok, hidden], W_V [kv*d, hidden], b_V or None, W_O [hidden, heads*d], the output
    projection module) of one layer, by hand from the family's own code."""
    x = hidden_states[layer]
    if family in ("bert", "roberta", "xlm-roberta", "electra"):
        attn = model.encoder.layer[layer].attention
        return x, attn.self.value.weight, attn.self.value.bias, attn.output.dense.weight, attn.output.dense
    if family == "deberta-v2":
        attn = model.encoder.layer[layer].attention
        return x, attn.self.value_proj.weight, attn.self.value_proj.bias, attn.output.dense.weight, attn.output.dense
    if family == "distilbert":
        attn = model.transformer.layer[layer].attention
        return x, attn.v_lin.weight, attn.v_lin.bias, attn.out_lin.weight, attn.out_lin
    if family == "mpnet":
        attn = model.encoder.layer[layer].attention.attn
        return x, attn.v.weight, attn.v.bias, attn.o.weight, attn.o
    if family == "albert":  # one layer, shared: the same weights for every layer's input
        attn = model.encoder.albert_layer_groups[0].albert_layers[0].attention
        return x, attn.value.weight, attn.value.bias, attn.dense.weight, attn.dense
    if family == "gpt2":  # pre-norm; Conv1D keeps [in, out], c_attn holds queries, keys, values
        attn = model.h[layer].attn
        embed = x.shape[-1]
        weight, bias = attn.c_attn.weight, attn.c_attn.bias
        return model.h[layer].ln_1(x), weight[:, 2 * embed :].T, bias[2 * embed :], attn.c_proj.weight.T, attn.c_proj
    if family in ("llama", "llama3"):  # pre-norm (RMS), no biases
        block = model.layers[layer]
        attn = block.self_attn
        return block.input_layernorm(x), attn.v_proj.weight, None, attn.o_proj.weight, attn.o_proj
    if family in ("t5", "t5-decoder"):  # pre-norm (RMS), no biases
        sub = (model.encoder if family == "t5" else model.decoder).block[layer].layer[0]
        attn = sub.SelfAttention
        return sub.layer_norm(x), attn.v.weight, None, attn.o.weight, attn.o
    raise AssertionError(family)


def hidden_states_of(family: str, loaded, input_ids, attention_mask):
    """The inputs of every layer of the scored stack, from an ordinary forward pass."""
    model = loaded.base
    if family == "t5":
        return model.get_encoder()(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True).hidden_states
    if family == "t5-decoder":
        output = model(
            input_ids=input_ids[:, 1:], attention_mask=attention_mask[:, 1:],
            decoder_input_ids=input_ids, decoder_attention_mask=attention_mask, output_hidden_states=True,
        )
        return output.decoder_hidden_states
    return model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True).hidden_states


def transformed_values(family: str, loaded, input_ids, attention_mask) -> torch.Tensor:
    """f_h(x_j) by hand, float64 [batch, layer, head, key, hidden]: one head at a time."""
    heads = loaded.num_heads
    with torch.no_grad():
        hidden_states = hidden_states_of(family, loaded, input_ids, attention_mask)
        layers = []
        for layer in range(loaded.num_layers):
            parts = layer_parts(family, loaded.base, hidden_states, layer)[:4]
            x, value_weight, value_bias, output_weight = (None if t is None else t.double() for t in parts)
            values = x @ value_weight.T + (0 if value_bias is None else value_bias)  # [batch, tok, kv*d]
            head_dim = output_weight.shape[1] // heads
            per_group = heads // (values.shape[-1] // head_dim)  # query heads per key-value head
            transformed = []
            for head in range(heads):
                group = head // per_group
                head_values = values[..., group * head_dim : (group + 1) * head_dim]  # [batch, tok, d]
                transformed.append(head_values @ output_weight[:, head * head_dim : (head + 1) * head_dim].T)
            layers.append(torch.stack(transformed, dim=1))  # [batch, head, tok, hidden]
    return torch.stack(layers, dim=1)


def direct_norms(family: str, loaded, input_ids, attention_mask) -> torch.Tensor:
    """||f_h(x_j)||, float64 [batch, layer, head, key]."""
    return transformed_values(family, loaded, input_ids, attention_mask).norm(dim=-1)


FAMILIES = [*TINY_FAMILIES, "t5-decoder"]


def load_family(family: str):
    if family == "t5-decoder":
        return load_model(tiny_model("t5"), stack="decoder")
    return load_model(tiny_model(family))


@pytest.mark.parametrize("family", FAMILIES)
def test_norms_match_a_direct_computation_from_the_weights(family):
    loaded = load_family(family)
    input_ids, attention_mask = padded_batch(loaded)
    passes = []
    counter = scored_stack(loaded).register_forward_pre_hook(lambda module, args: passes.append(1))
    try:
        reading = READINGS["norms"]
        with reading.attached(loaded):
            norm_based = reading.read(loaded, as_batch(input_ids, attention_mask))  # [batch, layer, head, query, key]
    finally:
        counter.remove()
    assert len(passes) == 1, "norms must come from the pass that gives the weights"
    weights = attention(loaded, input_ids, attention_mask)  # the same weights again (eval mode)
    expected_norms = direct_norms(family, loaded, input_ids, attention_mask)
    expected = weights.double() * expected_norms.unsqueeze(-2)
    assert norm_based.shape == weights.shape
    torch.testing.assert_close(norm_based.double(), expected, rtol=1e-4, atol=1e-6)
    # padded keys of real rows get nothing; the weights themselves are untouched
    real = attention_mask.bool()
    padded_keys_of_real_rows = (real[:, :, None] & ~real[:, None, :])[:, None, None].expand_as(norm_based)
    assert padded_keys_of_real_rows.any() and (norm_based[padded_keys_of_real_rows] == 0).all()


@pytest.mark.parametrize("family", FAMILIES)
def test_the_hand_computed_f_h_add_up_to_the_attention_output(family):
    """What makes the direct computation a check and not a copy: sum_h sum_j alpha_h[i, j] f_h(x_j)
    plus the output bias is what the model's output projection really gives, so the hand-made
    per-head blocks (and the key-value group of each head) are the model's own."""
    loaded = load_family(family)
    input_ids, attention_mask = padded_batch(loaded)
    with torch.no_grad():
        hidden_states = hidden_states_of(family, loaded, input_ids, attention_mask)
    projections = [layer_parts(family, loaded.base, hidden_states, layer)[4] for layer in range(loaded.num_layers)]
    outputs = []  # (module, output) in call order: ALBERT's one projection runs once per layer
    handles = [
        module.register_forward_hook(lambda module, args, output: outputs.append((module, output)))
        for module in {id(module): module for module in projections}.values()
    ]
    try:  # the whole model: a probing pass stops before the last layer's output projection
        layers = _run_stack(loaded, input_ids, attention_mask)
    finally:
        for handle in handles:
            handle.remove()
    weights = torch.stack([layer.float() for layer in layers], dim=1)  # [batch, layer, head, query, key]
    assert len(outputs) == loaded.num_layers
    transformed = transformed_values(family, loaded, input_ids, attention_mask)  # [batch, layer, head, key, hidden]
    mixed = torch.einsum("blhqk,blhkd->blqd", weights.double(), transformed)  # [batch, layer, query, hidden]
    real = attention_mask.bool()
    for layer, (module, output) in enumerate(outputs):
        bias = 0 if module.bias is None else module.bias.double()
        torch.testing.assert_close(mixed[:, layer][real], (output.double() - bias)[real], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("family", ["llama", "albert", "gpt2", "bert"])
def test_recorded_value_norms_equal_the_direct_ones_on_every_token(family):
    loaded = load_family(family)
    input_ids, attention_mask = padded_batch(loaded, seed=1)
    with ValueNorms(loaded) as capture:
        attention(loaded, input_ids, attention_mask)
        recorded = capture.take()  # [batch, layer, head, key]
    torch.testing.assert_close(recorded.double(), direct_norms(family, loaded, input_ids, attention_mask), rtol=1e-4, atol=1e-6)


def test_the_tiny_llama_has_grouped_query_attention():
    """The GQA path is exercised: fewer key-value heads than query heads."""
    config = load_model(tiny_model("llama")).model.config
    assert config.num_key_value_heads < config.num_attention_heads


def test_albert_records_its_shared_layer_once_per_layer():
    loaded = load_model(tiny_model("albert", num_layers=3))
    input_ids, attention_mask = padded_batch(loaded)
    with ValueNorms(loaded) as capture:
        attention(loaded, input_ids, attention_mask)
        recorded = capture.take()
    assert recorded.shape[1] == 3
    assert not torch.allclose(recorded[:, 0], recorded[:, 1])  # the same weights read different inputs
    torch.testing.assert_close(recorded.double(), direct_norms("albert", loaded, input_ids, attention_mask), rtol=1e-4, atol=1e-6)


def test_a_capture_left_open_over_several_passes_gives_each_pass_its_own_norms():
    loaded = load_model(tiny_bert())
    first, second = padded_batch(loaded, seed=2), padded_batch(loaded, seed=3)
    with ValueNorms(loaded) as capture:
        attention(loaded, *first)
        attention(loaded, *second)  # the first pass's norms were never taken: the new pass drops them
        recorded = capture.take()
    torch.testing.assert_close(recorded.double(), direct_norms("bert", loaded, *second), rtol=1e-4, atol=1e-6)


def test_hooks_are_removed_when_the_capture_closes():
    loaded = load_model(tiny_bert())

    def hooks():
        return sum(len(module._forward_hooks) + len(module._forward_pre_hooks) for module in loaded.base.modules())

    before = hooks()
    with ValueNorms(loaded):
        assert hooks() == before + 1 + loaded.num_layers  # the stack's pre-hook, one per value projection
    assert hooks() == before


def test_taking_norms_without_a_pass_is_an_error():
    loaded = load_model(tiny_bert())
    with ValueNorms(loaded) as capture, pytest.raises(ProbingError, match="ran 0 times"):
        capture.take()


def test_a_model_without_known_projections_is_one_clear_error():
    loaded = load_model(tiny_bert())
    for layer in loaded.base.encoder.layer:
        layer.attention.self.values = layer.attention.self.value
        del layer.attention.self.value
    with pytest.raises(ProbingError) as error:
        READINGS["norms"].attached(loaded)
    message = str(error.value)
    assert "\n" not in message
    assert "--attention norms" in message and loaded.name_or_path in message
    assert error.value.source == "--attention"


def test_norm_weighted_scales_each_key_column_by_its_norm():
    weights = torch.tensor([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])[None, None, None]  # [1, 1, 1, 3, 3]
    norms = torch.tensor([2.0, 0.0, 10.0])[None, None, None]  # [1, 1, 1, 3]
    expected = torch.tensor([[1.0, 0.0, 0.0], [0.4, 0.0, 5.0], [2.0, 0.0, 0.0]])
    torch.testing.assert_close(norm_weighted(weights, norms)[0, 0, 0], expected)


# ------------------------------------------------------------------------------ rollout


def plain_rollout(weights: torch.Tensor, length: int) -> torch.Tensor:
    """One sentence, real tokens only, float64, a loop over layers: [layer, length, length]."""
    rolled, current = [], None
    for layer_weights in weights[:, :, :length, :length].double():  # [head, query, key]
        mixed = 0.5 * layer_weights.mean(dim=0) + 0.5 * torch.eye(length, dtype=torch.float64)
        mixed = mixed / mixed.sum(dim=1, keepdim=True)
        current = mixed if current is None else mixed @ current
        rolled.append(current)
    return torch.stack(rolled)


def test_rollout_equals_a_plain_per_sentence_loop_and_padding_never_leaks():
    generator = torch.Generator().manual_seed(0)
    lengths = [6, 3, 5]
    batch, layers, heads, tokens = len(lengths), 4, 3, max(lengths)
    weights = torch.zeros(batch, layers, heads, tokens, tokens)  # [batch, layer, head, query, key]
    attention_mask = torch.zeros(batch, tokens, dtype=torch.long)
    for row, length in enumerate(lengths):
        attention_mask[row, :length] = 1
        weights[row, ..., :length] = torch.softmax(torch.randn(layers, heads, tokens, length, generator=generator), dim=-1)
        weights[row, ..., length:, :] = float("nan")  # padded rows: garbage that must not reach real rows
    rolled = rollout(weights, attention_mask)
    assert rolled.shape == (batch, layers, 1, tokens, tokens)
    for row, length in enumerate(lengths):
        torch.testing.assert_close(rolled[row, :, 0, :length, :length].double(), plain_rollout(weights[row], length))
        assert (rolled[row, :, 0, length:, :] == 0).all() and (rolled[row, :, 0, :, length:] == 0).all()
        torch.testing.assert_close(rolled[row, :, 0, :length].sum(-1), torch.ones(layers, length))


@pytest.mark.parametrize("family", ["bert", "gpt2", "llama", "t5-decoder"])
def test_rollout_of_a_model_is_the_plain_loop_and_causal_stacks_stay_causal(family):
    loaded = load_family(family)
    input_ids, attention_mask = padded_batch(loaded)
    reading = READINGS["rollout"]
    with reading.attached(loaded):
        rolled = reading.read(loaded, as_batch(input_ids, attention_mask))  # [batch, layer, 1, query, key]
    weights = attention(loaded, input_ids, attention_mask)
    for row, length in enumerate(SENTENCE_LENGTHS):
        torch.testing.assert_close(rolled[row, :, 0, :length, :length].double(), plain_rollout(weights[row], length))
    above_diagonal = torch.ones(rolled.shape[-2:], dtype=torch.bool).triu(diagonal=1)
    assert loaded.is_causal == (family != "bert")
    if loaded.is_causal:
        assert (rolled[..., above_diagonal] == 0).all()
    else:
        assert (rolled[..., above_diagonal] > 0).any()


# ------------------------------------------------------------------------------ registry


def test_the_registry_knows_three_readings_and_their_heads():
    assert READINGS.names() == ["weights", "norms", "rollout"]
    assert [READINGS[name].heads(4) for name in READINGS] == [4, 4, 1]
    assert [READINGS[name].rows_sum_to_one for name in READINGS] == [True, False, True]


def test_the_weights_reading_is_the_attention_of_the_pass():
    loaded = load_model(tiny_bert())
    input_ids, attention_mask = padded_batch(loaded)
    reading = READINGS["weights"]
    with reading.attached(loaded):
        weights = reading.read(loaded, as_batch(input_ids, attention_mask))
    torch.testing.assert_close(weights, attention(loaded, input_ids, attention_mask), rtol=0, atol=0)


def test_a_norms_read_leaves_no_hook_behind():
    loaded = load_model(tiny_bert())
    before = sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in loaded.base.modules())
    READINGS["norms"].read(loaded, as_batch(*padded_batch(loaded)))
    assert sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in loaded.base.modules()) == before


def test_an_unknown_reading_lists_the_known_ones():
    with pytest.raises(ProbingError) as error:
        READINGS["flow"]
    assert str(error.value) == "--attention: unknown attention reading 'flow'; use one of: weights, norms, rollout"


# ------------------------------------------------------------------------------ stopping after the last attention


@pytest.mark.parametrize("family", sorted(TINY_FAMILIES))
def test_weights_read_up_to_the_last_attention_equal_the_whole_models(family):
    """A pass that stops once the last layer's attention has run reads exactly the weights the whole
    model returns; a family whose attention modules do not return (output, weights) runs whole.
    (The tap alone, under eager attention; the fused path is checked against it in test_layers.py.)"""
    loaded = load_model(tiny_model(family))
    loaded.attention_path = "eager" if loaded.attention_path == "fused" else loaded.attention_path
    input_ids, attention_mask = padded_batch(loaded)
    whole = torch.stack([layer.float() for layer in _run_stack(loaded, input_ids, attention_mask)], dim=1)
    assert torch.equal(attention(loaded, input_ids, attention_mask), whole)
    if family in ("bert", "mpnet", "llama", "gpt2", "distilbert", "albert"):
        assert loaded.attention_tap is not None


def test_the_last_layers_feed_forward_block_is_never_run():
    loaded = load_model(tiny_bert())
    last = loaded.base.encoder.layer[-1]
    calls = []
    handle = last.intermediate.register_forward_hook(lambda *args: calls.append(1))
    try:
        input_ids, attention_mask = padded_batch(loaded)
        attention(loaded, input_ids, attention_mask)
        assert calls == []
        loaded.attention_tap = None  # what a model that failed the load-time check gets
        attention(loaded, input_ids, attention_mask)
        assert calls == [1]
    finally:
        handle.remove()
