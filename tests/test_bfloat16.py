"""bfloat16 weights, float32 pooling: the same counts as float32 up to near-ties (docs/scaling.md, "bfloat16").

bfloat16 keeps 8 bits of mantissa, so a bfloat16 model is the float32 model
with every weight rounded: a word whose float32 attention to two candidate
words is within that rounding of a tie may pick the other one. Here every
prediction that moves must be such a near-tie (:data:`NEAR_TIE`), every
count that moves must be explained by moved predictions of its own head and
direction, and pooling must run in float32. The fused path's bfloat16 weights
must match eager bfloat16 attention within the tolerance the load-time check
uses (probing.model.extraction.fused_tolerance).
"""

from __future__ import annotations

import pytest
import torch
from helpers import tiny_model
from test_readings import padded_batch

from probing.analyses.probe.api import run_probe
from probing.analyses.probe.config import ScoreConfig
from probing.data.inputs import InputSource
from probing.engine.accumulator import Accumulator
from probing.engine.options import PassOptions
from probing.engine.passes import run_pass
from probing.model.extraction import _run_stack, each_layer, fused_tolerance
from probing.model.loading import load_model
from probing.naming import DIRECTIONS
from probing.testing import sample_path

FAMILIES = ("bert", "llama")
"""A BERT and a Llama from the tiny families the tests build (probing.testing, tests/helpers.py)."""

NEAR_TIE = 2.0**-9
"""A moved prediction is a near-tie when the float32 word attention to the word float32 chose and to the word
bfloat16 chose differ by at most this: a quarter of a unit of bfloat16 rounding of a weight of 1 (eps is 2**-7). Tiny
random models attend almost uniformly, so many of their predictions are that close (about 40% of the tiny
BERT's are within 2**-11); a trained model's far fewer."""

BATCH_SIZE = 8


class KeptPredictions(Accumulator):
    """Every batch's word attention and predictions, as the probe's counts see them (a test's accumulator)."""

    analysis = "kept"

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[tuple[list[int], torch.Tensor, torch.Tensor, torch.Tensor]] = []

    def update(self, view) -> None:
        self.batches.append((view.batch.indices, view.word_attention.clone(), view.predictions.clone(),
                             view.batch.num_words.clone()))


def kept(family: str, dtype: str) -> KeptPredictions:
    accumulator = KeptPredictions()
    run_pass(load_model(tiny_model(family), dtype=dtype), InputSource.treebank(str(sample_path())), [accumulator],
             PassOptions(batch_size=BATCH_SIZE, prefetch=False))
    return accumulator


def moved_predictions(single: KeptPredictions, half: KeptPredictions) -> tuple[torch.Tensor, list[float]]:
    """long [direction, layer, head]: real words whose prediction moved; and the float32 gap of each move."""
    moved, gaps = None, []
    for (indices, attention, predictions, num_words), (half_indices, _, half_predictions, _) in zip(
            single.batches, half.batches):
        assert indices == half_indices  # the same batches in the same order
        real = torch.arange(predictions.shape[-1])[None, :] < num_words[:, None]  # [batch, word]
        differ = (predictions != half_predictions) & real[:, None, None, None]  # [batch, direction, layer, head, word]
        moved = differ.sum(dim=(0, 4)) if moved is None else moved + differ.sum(dim=(0, 4))
        for row, direction, layer, head, word in differ.nonzero().tolist():
            scores = attention[row, layer, head, word, :] if direction == 0 else attention[row, layer, head, :, word]
            chosen, other = predictions[row, direction, layer, head, word], half_predictions[row, direction, layer, head, word]
            gaps.append(float(scores[chosen] - scores[other]))
    return moved, gaps


@pytest.mark.parametrize("family", FAMILIES)
def test_bfloat16_pools_in_float32_and_moves_predictions_only_at_near_ties(family):
    single, half = kept(family, "float32"), kept(family, "bfloat16")
    assert len(single.batches) == len(half.batches) > 1
    assert all(attention.dtype == torch.float32 for _, attention, _, _ in half.batches)  # pooled in float32
    moved, gaps = moved_predictions(single, half)
    assert len(gaps) == int(moved.sum())
    assert all(0.0 <= gap <= NEAR_TIE for gap in gaps), max(gaps)


@pytest.mark.parametrize("family", FAMILIES)
def test_bfloat16_counts_move_only_with_moved_predictions(family):
    config = ScoreConfig.from_fields(model=tiny_model(family), treebank=str(sample_path()), bootstrap=0, batch_size=BATCH_SIZE)
    single = run_probe(config, loaded=load_model(tiny_model(family)))
    half = run_probe(config, loaded=load_model(tiny_model(family), dtype="bfloat16"))
    assert half["model"]["dtype"] == "bfloat16"
    moved, _ = moved_predictions(kept(family, "float32"), kept(family, "bfloat16"))
    for name, relation in single["relations"].items():
        other = half["relations"][name]
        assert other["total"] == relation["total"]
        assert other["baselines"] == relation["baselines"]  # offsets do not read attention
        for index, direction in enumerate(DIRECTIONS):
            change = (torch.tensor(other["heads"][direction]) - torch.tensor(relation["heads"][direction])).abs()
            assert bool((change <= moved[index]).all()), (name, direction)


@pytest.mark.parametrize("family", ["bert", "llama", "llama3", "gpt2"])
def test_the_fused_path_in_bfloat16_matches_eager_within_its_tolerance(family):
    loaded = load_model(tiny_model(family), dtype="bfloat16")
    assert loaded.attention_path == "fused"  # the load-time check passed at half precision's tolerance
    input_ids, attention_mask = padded_batch(loaded)
    eager = _run_stack(loaded, input_ids, attention_mask)  # eager bfloat16 attention, every layer
    real = attention_mask.bool()[:, None, :, None]  # padded query rows are no word's
    tolerance = fused_tolerance(torch.bfloat16)
    assert tolerance["atol"] == 4 * 2.0**-7  # four units of bfloat16's eps (7 bits after the point)
    seen = []

    def compare(layer: int, weights: torch.Tensor) -> None:
        seen.append(layer)
        assert weights.dtype == torch.float32  # handed on in float32 for pooling
        torch.testing.assert_close(weights * real, eager[layer].float() * real, **tolerance)

    each_layer(loaded, input_ids, attention_mask, compare)
    assert seen == list(range(loaded.num_layers))
