"""Attention one layer at a time: the fused path against eager attention, and counts unchanged.

Every family the tests build, plus two with sliding windows (Gemma 3's
alternating local and global layers, Mistral's window on every layer), both
with grouped key-value heads and rotary positions: each layer's weights as the
pass reads them (fused where the load-time check chose it) equal eager
attention's, on a right-padded batch longer than the windows. A pass that
reads one layer at a time gives the probe and surface exactly the counts of
one that holds every layer's attention.
"""

from __future__ import annotations

import pytest
import torch
from helpers import TINY_FAMILIES, _llama_tokenizer, tiny_model
from test_readings import padded_batch

from probing.analyses.probe.accumulator import ProbeAccumulator
from probing.analyses.surface.accumulator import SurfaceAccumulator
from probing.data.inputs import InputSource, sample_treebank_path
from probing.data.relations import relation_pairs  # noqa: F401  (the relations' registry, filled on import)
from probing.engine.options import PassOptions
from probing.engine.passes import run_pass
from probing.model.extraction import ATTENTION_PATHS, _run_stack, each_layer
from probing.model.loading import load_model
from probing.testing import scratch_folder, tiny_bert

WINDOW = 3
"""Sliding window of the windowed tiny models, shorter than the padded batch's sentences."""


def _windowed(kind: str) -> str:
    """A tiny causal checkpoint with a sliding window, grouped key-value heads (4 heads, 2 groups) and rope."""
    import transformers

    tokenizer = _llama_tokenizer()
    common = dict(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=128,
                  sliding_window=WINDOW, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                  pad_token_id=tokenizer.eos_token_id)
    if kind == "gemma3":
        config = transformers.Gemma3TextConfig(layer_types=["sliding_attention", "full_attention"], **common)
        model_class = transformers.Gemma3ForCausalLM
    else:
        config = transformers.MistralConfig(**common)
        model_class = transformers.MistralForCausalLM
    torch.manual_seed(0)
    folder = scratch_folder() / f"{kind}-window{WINDOW}"
    model_class(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


FAMILIES = sorted(TINY_FAMILIES) + ["gemma3-windowed", "mistral-windowed"]


def _load(family: str):
    path = _windowed(family.split("-")[0]) if family.endswith("-windowed") else tiny_model(family)
    return load_model(path)


@pytest.mark.parametrize("family", FAMILIES)
def test_each_layer_equals_eager_attention(family):
    loaded = _load(family)
    assert loaded.attention_path in ATTENTION_PATHS
    if family in ("bert", "llama", "llama3", "gpt2", "gemma3-windowed", "mistral-windowed"):
        assert loaded.attention_path == "fused"  # these run transformers' attention functions
    input_ids, attention_mask = padded_batch(loaded)
    eager = _run_stack(loaded, input_ids, attention_mask)  # eager attention, every layer as the model returns it
    seen = []
    real = attention_mask.bool()[:, None, :, None]  # padded query rows are no word's: nothing reads them

    def compare(layer: int, weights: torch.Tensor) -> None:
        seen.append(layer)
        assert weights.dtype == torch.float32
        torch.testing.assert_close(weights * real, eager[layer].float() * real, rtol=1e-4, atol=1e-6)

    each_layer(loaded, input_ids, attention_mask, compare)
    assert seen == list(range(loaded.num_layers))
    if family.endswith("-windowed"):
        # the window is really applied: in a windowed layer a query never reaches WINDOW tokens back
        first = eager[0][0]  # [head, query, key] of the longest sentence
        assert bool((first.tril(diagonal=-WINDOW) == 0).all()) and bool((first.tril(diagonal=-1) > 0).any())


def test_the_fused_path_runs_the_fused_kernel():
    """The forward pass calls scaled_dot_product_attention once per layer (not eager attention's matmuls)."""
    loaded = _load("llama")
    assert loaded.attention_path == "fused"
    calls = []
    original = torch.nn.functional.scaled_dot_product_attention

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    torch.nn.functional.scaled_dot_product_attention = counted
    try:
        each_layer(loaded, *padded_batch(loaded), lambda layer, weights: None)
    finally:
        torch.nn.functional.scaled_dot_product_attention = original
    assert len(calls) == loaded.num_layers
    assert loaded.base.config._attn_implementation == "eager"  # switched back after the batch


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_the_added_mask_gives_the_weights_that_filling_gives(dtype):
    """The fused path adds a boolean mask as 0 / float32's minimum instead of filling masked scores with their
    dtype's minimum: the same weights bit for bit, padded keys, a causal triangle and a row masked throughout
    (uniform either way) included."""
    from probing.model.fused import weights_from_queries_and_keys

    generator = torch.Generator().manual_seed(0)
    query, key = (torch.randn(3, 4, 7, 8, generator=generator).mul(4).to(dtype) for _ in range(2))
    keep = torch.ones(3, 1, 7, 7, dtype=torch.bool).tril()  # [batch, 1, query, key]: causal
    keep[1, :, :, 5:] = False  # padded keys
    keep[2, :, 3] = False  # one query row masked throughout
    module = type("Layer", (torch.nn.Module,), {"is_causal": True})()
    scores = torch.matmul(query, key.transpose(2, 3)) * 8 ** -0.5
    filled = torch.nn.functional.softmax(scores.masked_fill(~keep, torch.finfo(dtype).min), dim=-1,
                                         dtype=torch.float32).to(dtype)
    added = weights_from_queries_and_keys(module, query, key, keep, 8 ** -0.5)
    assert added.dtype == dtype and torch.equal(added, filled)
    assert torch.equal(added[2, :, 3].float(), torch.full((4, 7), 1 / 7).to(dtype).float())  # uniform


class _WholeProbe(ProbeAccumulator):
    """The probe as it read attention before: every layer's token attention at once."""

    reads = "attention"


class _WholeSurface(SurfaceAccumulator):
    reads = "attention"


@pytest.mark.parametrize("family", ["bert", "llama", "gpt2", "mpnet", "t5", "gemma3-windowed"])
def test_counts_by_layer_equal_counts_of_the_whole_attention(family):
    loaded = _load(family)
    source = InputSource.treebank(str(sample_treebank_path()), limit=12)
    relations = ("all", "det", "nsubj")

    def accumulators(probe_class, surface_class):
        probe = probe_class.create(relations, loaded.num_layers, loaded.num_heads, offsets=(-1, 1), bootstrap=5,
                                   seed=1, causal=loaded.is_causal)
        return [probe, surface_class(loaded.num_layers, loaded.num_heads, causal=loaded.is_causal)]

    by_layer = accumulators(ProbeAccumulator, SurfaceAccumulator)
    run_pass(loaded, source, by_layer, PassOptions(batch_size=4))
    path = loaded.attention_path
    loaded.attention_path = "eager" if path == "fused" else path  # and today's path: eager, all layers held
    whole = accumulators(_WholeProbe, _WholeSurface)
    run_pass(loaded, source, whole, PassOptions(batch_size=4))
    mine, theirs = by_layer[0].state(), whole[0].state()
    assert mine.keys() == theirs.keys()
    for name in mine:
        assert torch.equal(mine[name], theirs[name]), name
    assert int(mine["total"].sum()) > 0
    for name, tensor in by_layer[1].state().items():
        torch.testing.assert_close(tensor, whole[1].state()[name], rtol=1e-5, atol=1e-9)


def _switches_during(loaded, monkeypatch) -> list:
    """The attention implementations the model is switched to while the test runs, in order."""
    switches = []
    model_class = type(loaded.base)
    switch = model_class.set_attn_implementation

    def recorded(model, name, *args, **kwargs):
        switches.append(name)
        return switch(model, name, *args, **kwargs)

    monkeypatch.setattr(model_class, "set_attn_implementation", recorded)
    return switches


def test_a_pass_holds_the_fused_path_once_and_leaves_the_model_as_loaded(monkeypatch):
    """A probe pass of several batches switches to the fused function once and back once, not around every
    batch, and the model runs eager attention again afterwards."""
    from probing.analyses.probe.api import run_probe
    from probing.analyses.probe.config import ScoreConfig
    from probing.model.fused import FUSED

    loaded = load_model(tiny_bert())
    assert loaded.attention_path == "fused"
    switches = _switches_during(loaded, monkeypatch)
    result = run_probe(ScoreConfig.from_fields(model=tiny_bert(), limit=40, batch_size=8, bootstrap=0), loaded=loaded)
    assert result["treebank"]["sentences_scored"] == 40  # five batches
    assert switches == [FUSED, "eager"]
    assert loaded.base.config._attn_implementation == "eager"
