"""Norm-based attention of all-MiniLM-L6-v2 (a real BERT) by an independent route.

The reference computation for BERT-family encoders: hook each layer's value
projection (the value vectors, bias included) and its attention output dense
layer (its weight, and its output as a check), run the model as transformers
runs it, and compute f_h(x_j) = W_O^h v_h(x_j) head by head in float64. No code
of ``probing.engine.readings`` is used on this route. Three checks on real sentences
of en_ewt dev:

1. the f_h add up to what the dense layer really outputs (minus its bias):
   sum_h sum_j alpha_h[i, j] f_h(x_j) + b_O, so they are each head's true
   contribution;
2. the norms reading equals alpha * ||f_h(x_j)||;
3. Kobayashi et al.'s finding holds: the tokens [CLS] and [SEP] get a smaller
   share of a row under norms than under the weights.
"""

from __future__ import annotations

import pytest
import torch

from probing.data.inputs import open_input
from probing.engine.batching import batches_of_chunk
from probing.engine.readings import READINGS
from probing.model.loading import load_model
from probing.results.pass_statistics import BatchStats

SENTENCES = 12

pytestmark = pytest.mark.real_data


@pytest.fixture(scope="module")
def loaded(minilm):
    return load_model(minilm)


@pytest.fixture(scope="module")
def batch(loaded, ewt_dev):
    """The first sentences of en_ewt dev in one padded batch, as the engine makes it."""
    units = list(open_input(str(ewt_dev), limit=SENTENCES).units())
    (only,) = batches_of_chunk(units, loaded.tokenizer, batch_size=SENTENCES, max_length=loaded.max_length(),
                               stats=BatchStats())
    return only


@pytest.fixture(scope="module")
def reference(loaded, batch):
    """(weights [batch, layer, head, query, key], f [batch, layer, head, key, hidden],
    dense outputs [batch, layer, query, hidden]), float64, from hooks on transformers' own modules."""
    values, dense_outputs, handles = [], [], []
    for layer in loaded.base.encoder.layer:
        handles.append(layer.attention.self.value.register_forward_hook(lambda m, args, out: values.append(out)))
        handles.append(layer.attention.output.dense.register_forward_hook(lambda m, args, out: dense_outputs.append(out)))
    try:
        with torch.no_grad():
            output = loaded.base(input_ids=batch.input_ids, attention_mask=batch.attention_mask, output_attentions=True)
    finally:
        for handle in handles:
            handle.remove()
    heads = loaded.base.config.num_attention_heads
    transformed = []
    for layer, value in zip(loaded.base.encoder.layer, values):
        weight = layer.attention.output.dense.weight.double()  # [hidden, heads*d]
        head_dim = weight.shape[1] // heads
        per_head = [
            value[..., h * head_dim : (h + 1) * head_dim].double() @ weight[:, h * head_dim : (h + 1) * head_dim].T
            for h in range(heads)
        ]
        transformed.append(torch.stack(per_head, dim=1))  # [batch, head, key, hidden]
    weights = torch.stack([a.double() for a in output.attentions], dim=1)
    return weights, torch.stack(transformed, dim=1), torch.stack([d.double() for d in dense_outputs], dim=1)


def test_each_heads_f_h_is_its_share_of_the_attention_output(loaded, batch, reference):
    weights, transformed, dense_outputs = reference
    mixed = torch.einsum("blhqk,blhkd->blqd", weights, transformed)  # [batch, layer, query, hidden]
    biases = torch.stack([layer.attention.output.dense.bias.double() for layer in loaded.base.encoder.layer])
    real = batch.attention_mask.bool()  # [batch, query]: compare the real rows, [row, layer, hidden]
    expected = dense_outputs - biases[None, :, None, :]
    torch.testing.assert_close(mixed.transpose(1, 2)[real], expected.transpose(1, 2)[real], rtol=1e-5, atol=1e-5)


def test_the_norms_reading_equals_the_reference(loaded, batch, reference):
    weights, transformed, _ = reference
    reading = READINGS["norms"]
    with reading.attached(loaded):
        norm_based = reading.read(loaded, batch)  # [batch, layer, head, query, key]
    expected = weights * transformed.norm(dim=-1).unsqueeze(-2)  # [batch, layer, head, query, key]
    real = batch.attention_mask.bool()  # [batch, query]: compare the real rows, [row, layer, head, key]
    assert norm_based.shape == expected.shape
    rows = (0, 3, 1, 2, 4)
    torch.testing.assert_close(norm_based.double().permute(rows)[real], expected.permute(rows)[real], rtol=1e-4, atol=1e-6)


def test_cls_and_sep_get_less_under_norms_than_under_weights(loaded, batch, reference):
    """Kobayashi et al. (2020), section 4: BERT's weights favour [CLS] and [SEP], whose
    transformed values are small, so their norm-based share of a row is smaller."""
    weights, transformed, _ = reference
    norm_based = weights * transformed.norm(dim=-1).unsqueeze(-2)
    ids = batch.input_ids
    special = (ids == loaded.tokenizer.cls_token_id) | (ids == loaded.tokenizer.sep_token_id)  # [batch, tok]
    real = batch.attention_mask.bool()

    def share(maps):  # the specials' part of each real row, averaged over rows: [layer, head]
        part = (maps * special[:, None, None, None, :]).sum(-1) / maps.sum(-1)  # [batch, layer, head, query]
        return part.permute(0, 3, 1, 2)[real].mean(dim=0)

    by_weights, by_norms = share(weights), share(norm_based)
    assert by_weights.mean() > 2 * by_norms.mean()
    assert (by_norms < by_weights).float().mean() > 0.8  # in most heads, not only on average
