"""probing ablate --metric minimal-pairs: BLiMP accuracy under disabled heads, scored as probing pairs scores it."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
import torch
from helpers import HAND_PAIRS, hand_blimp, record_chunks, tiny_model

import probing.analyses.ablation.accumulator as ablation
from probing.analyses.ablation.conditions import INTACT, Condition
from probing.analyses.ablation.metrics import LOGIT_CELLS, MinimalPairAccuracy
from probing.analyses.ablation.minimal_pairs import disabled_heads, encoded_pairs
from probing.analyses.pairs.accuracy import accuracies, paradigm_draws
from probing.analyses.pairs.scoring import sentence_log_probs
from probing.data.minimal_pairs import MinimalPair
from probing.engine.pair_passes import pair_batches, run_pair_pass
from probing.errors import ProbingError
from probing.model.loading import load_model
from probing.model.pair_rows import PairScoring, batch_log_probs
from probing.model.tokenizers import plain_tokenizer
from probing.stats.intervals import percentile_interval

GOOD_BAD = [tuple(pair) for pair in HAND_PAIRS["good_bad"]]  # hand-written (tests/data/hand_pairs.json)
PAIRS = ([MinimalPair("p1", "syntax", g, b, "island_effects") for g, b in GOOD_BAD[:3]]
         + [MinimalPair("p2", "morphology", g, b, "subject_verb_agreement") for g, b in GOOD_BAD[3:6]]
         + [MinimalPair("p3", "morphology", g, b, "anaphor_agreement") for g, b in GOOD_BAD[6:]])
CONDITIONS = [INTACT, Condition("1-1", ((0, 0),)), Condition("2-3,2-4", ((1, 2), (1, 3))),
              Condition("layer 1", tuple((0, h) for h in range(4)))]


@pytest.fixture(scope="module")
def llama():
    return load_model(tiny_model("llama"), head="causal_lm")


def ablated(loaded, pairs=PAIRS, conditions=CONDITIONS, batch_size=3, bootstrap=50):
    metric = MinimalPairAccuracy.of_pairs(pairs)
    metric.setup(loaded)
    accumulator = ablation.AblationAccumulator(metric, conditions, loaded.num_layers, loaded.num_heads,
                                               bootstrap=bootstrap, causal=True)
    run_pair_pass(loaded, encoded_pairs(loaded, pairs), [accumulator], pairs_per_batch=batch_size, by_length=False)
    return accumulator


def sentence_scores(loaded, batch, mask, share: bool = False) -> torch.Tensor:
    """log p [copy, sentence] of a batch's stacked copies under the heads ``mask`` disabled, as the metric scores
    them (its prefixes shared only with ``share``)."""
    scoring = PairScoring(split=True, share=share, cells=LOGIT_CELLS)
    return batch_log_probs(loaded.model, batch.pairs, scoring, loaded.device, copies=len(mask) // len(batch),
                           around=disabled_heads(loaded, mask))


def test_the_intact_condition_equals_probing_pairs_on_the_same_pairs(llama):
    accumulator = ablated(llama)
    result = accumulator.result()
    tokenizer = plain_tokenizer(llama)
    scores = sentence_log_probs(llama.model, tokenizer, [t for p in PAIRS for t in (p.good, p.bad)], batch_size=5)
    expected = accuracies(PAIRS, scores[0::2], scores[1::2], bootstrap=50, seed=0)
    right = [bit for uid in ("p1", "p2", "p3") for bit in expected["paradigms"][uid]["right"]]
    assert accumulator.state_tensors["right"][0].tolist() == [int(bit) for bit in right]
    baseline = result["baseline"]
    assert baseline["overall"]["value"] == pytest.approx(expected["overall"]["accuracy"])
    # the intact row's interval is the percentile bootstrap its paired changes are drawn on (probing pairs' own
    # intervals are Wilson's): the mean of the paradigm accuracies over the draws of probing pairs
    bits = [np.asarray(expected["paradigms"][uid]["right"], dtype=float) for uid in ("p1", "p2", "p3")]
    draws = [right[paradigm_draws(len(right), 50, 0, index)].mean(axis=1) for index, right in enumerate(bits)]
    assert baseline["overall"]["interval"] == pytest.approx(percentile_interval(np.mean(draws, axis=0)))
    for field in ("syntax", "morphology"):
        assert baseline[f"field:{field}"]["value"] == pytest.approx(expected["fields"][field]["accuracy"])
    # a phenomenon of one paradigm is that paradigm
    assert baseline["phenomenon:anaphor_agreement"]["value"] == pytest.approx(expected["paradigms"]["p3"]["accuracy"])
    assert list(baseline) == ["overall", "field:syntax", "field:morphology", "phenomenon:island_effects",
                              "phenomenon:subject_verb_agreement", "phenomenon:anaphor_agreement"]


def test_a_disabled_layer_changes_the_scores_it_measures(llama):
    """Not a constant: disabling all of layer 1's heads moves some sentence's log-probability."""
    batch = next(pair_batches(encoded_pairs(llama, PAIRS), pairs_per_batch=8, by_length=False))
    mask = torch.zeros(2 * len(batch), llama.num_layers, llama.num_heads, dtype=torch.bool)
    mask[len(batch):, 0] = True  # the second copy without layer 1
    with torch.inference_mode():
        scores = sentence_scores(llama, batch, mask)
    assert scores.shape == (2, 16) and not torch.allclose(scores[0], scores[1])


def test_stacked_conditions_equal_separate_runs(llama, monkeypatch):
    stacked = ablated(llama).state_tensors["right"]
    monkeypatch.setattr(ablation, "CONDITION_CELLS", 1)
    monkeypatch.setattr(ablation, "SHARE_PREFIX", False)
    separate = ablated(llama).state_tensors["right"]
    assert torch.equal(stacked, separate)
    one_at_a_time = torch.stack([ablated(llama, conditions=[INTACT, c]).state_tensors["right"][1]
                                 for c in CONDITIONS[1:]])
    assert torch.equal(stacked[1:], one_at_a_time)


def test_the_batch_size_changes_no_score(llama):
    first = ablated(llama, batch_size=1)
    for batch_size in (2, 8):
        other = ablated(llama, batch_size=batch_size)
        assert torch.equal(first.state_tensors["right"], other.state_tensors["right"]), batch_size
        np.testing.assert_array_equal(first.scores()[0], other.scores()[0])


def test_padding_changes_no_log_probability_under_disabled_heads(llama):
    """A pair alone in its batch and the same pair padded beside longer ones: the same log-probabilities (the
    uniform attention of a disabled head spreads over the keys a token may see, never over padding)."""
    def scores(batch_size: int) -> torch.Tensor:
        found = []
        for batch in pair_batches(encoded_pairs(llama, PAIRS), pairs_per_batch=batch_size, by_length=False):
            mask = torch.zeros(2 * len(batch), llama.num_layers, llama.num_heads, dtype=torch.bool)
            mask[len(batch):, 0, :2] = True  # copy 2: heads 1-1 and 1-2 disabled
            with torch.inference_mode():
                found.append(sentence_scores(llama, batch, mask))
        return torch.cat(found, dim=1)  # [copy, sentence]

    alone, padded = scores(1), scores(8)
    assert not torch.allclose(alone[0], alone[1])  # the disabled heads matter
    torch.testing.assert_close(alone, padded, rtol=0, atol=1e-3)


def test_the_bootstrap_is_paired_and_resamples_within_paradigms(llama):
    values, replicates, _ = ablated(llama, bootstrap=200).scores()
    assert replicates.shape == (200, len(CONDITIONS), 6)
    # a one-paradigm phenomenon of 2 pairs resamples those 2 pairs only: its replicates are 0, 1/2 or 1
    halves = replicates[:, :, 5] * 2  # phenomenon:anaphor_agreement
    assert np.allclose(halves, np.round(halves))
    assert np.all(np.abs(values - replicates.mean(axis=0)) < 0.25)


def test_a_model_without_a_causal_lm_head_is_refused_naming_the_metric():
    from probing.testing import tiny_bert

    loaded = load_model(tiny_bert(), head=None)
    with pytest.raises(ProbingError, match="minimal pairs need a trained causal LM head") as error:
        MinimalPairAccuracy.of_pairs(PAIRS).setup(loaded)
    assert error.value.source == "--metric minimal-pairs"


def test_blimp_options_belong_to_the_minimal_pairs_metric(tmp_path, capsys):
    from probing.cli import main

    common = ["ablate", "--model", tiny_model("llama"), "--heads", "1-1", "--bootstrap", "5"]
    assert main([*common, "--metric", "lm", "--paradigms", "wh_island", "--limit", "2"]) == 2
    assert "--paradigms" in capsys.readouterr().err
    assert main([*common, "--metric", "minimal-pairs", "--treebank", "en_ewt:dev"]) == 2
    assert "--treebank" in capsys.readouterr().err
    assert main([*common, "--metric", "minimal-pairs", "--paradigms", "no_such_paradigm"]) == 2
    assert "--paradigms" in capsys.readouterr().err
    assert main([*common, "--metric", "lm", "--phenomena", "island_effects"]) == 2
    assert "--phenomena" in capsys.readouterr().err


def test_an_unknown_phenomenon_is_refused_naming_the_option(capsys):
    blimp = os.environ.get("PROBING_BLIMP")
    if not blimp:  # which phenomena exist is read from BLiMP's own files
        pytest.skip("real data: BLiMP is not available (set PROBING_BLIMP)")
    from probing.cli import main

    common = ["ablate", "--model", tiny_model("llama"), "--heads", "1-1", "--bootstrap", "5", "--blimp", blimp]
    assert main([*common, "--metric", "minimal-pairs", "--phenomena", "no_such_phenomenon"]) == 2
    assert "--phenomena" in capsys.readouterr().err


def test_minimal_pairs_refuse_torchrun_where_every_rank_would_score_every_pair(monkeypatch, capsys):
    from probing.cli import main

    monkeypatch.setenv("WORLD_SIZE", "2")
    assert main(["ablate", "--model", tiny_model("llama"), "--heads", "1-1", "--bootstrap", "5",
                 "--metric", "minimal-pairs", "--paradigms", "wh_island"]) == 2
    assert "torchrun" in capsys.readouterr().err


def test_ablate_minimal_pairs_from_the_command_line_equals_probing_pairs(tmp_path, capsys):
    blimp = os.environ.get("PROBING_BLIMP")
    if not blimp:
        pytest.skip("real data: BLiMP is not available (set PROBING_BLIMP)")
    from probing.analyses.pairs.api import score_pairs
    from probing.cli import main
    from probing.results.io import read_result

    model, paradigms = tiny_model("llama"), ["regular_plural_subject_verb_agreement_1", "wh_island"]
    output = tmp_path / "ablate.json"
    assert main(["ablate", "--quiet", "--model", model, "--metric", "minimal-pairs", "--paradigms", *paradigms,
                 "--limit", "6", "--blimp", blimp, "--heads", "1-1", "--bootstrap", "40", "--output", str(output)]) == 0
    table = capsys.readouterr().out
    assert "phenomenon:subject_verb_agreement" in table and "field:syntax" in table
    result = read_result(output)
    pairs = score_pairs(model, paradigms=paradigms, limit=6, blimp=blimp, bootstrap=40)["pairs"]
    assert result["baseline"]["overall"]["value"] == pytest.approx(pairs["overall"]["accuracy"])
    assert result["input"]["kind"] == "minimal_pairs" and result["input"]["units_used"] == 12


def test_chosen_heads_on_minimal_pairs_give_a_versus_block_per_phenomenon(tmp_path, capsys):
    blimp = os.environ.get("PROBING_BLIMP")
    if not blimp:
        pytest.skip("real data: BLiMP is not available (set PROBING_BLIMP)")
    from probing.cli import main
    from probing.results.io import read_result

    model, dev, output = tiny_model("llama"), tmp_path / "dev.json", tmp_path / "ablate.json"
    assert main(["score", "--quiet", "--model", model, "--limit", "12", "--relations", "nsubj", "--bootstrap", "0",
                 "--output", str(dev)]) == 0
    assert main(["ablate", "--quiet", "--model", model, "--metric", "minimal-pairs", "--blimp", blimp, "--limit", "5",
                 "--paradigms", "regular_plural_subject_verb_agreement_1", "wh_island", "--chosen", "nsubj",
                 "--k", "2", "--random", "3", "--select-on", str(dev), "--bootstrap", "30",
                 "--output", str(output)]) == 0
    assert "phenomenon:subject_verb_agreement" in capsys.readouterr().out
    block = read_result(output)["versus"]
    assert set(block["parts"]) == {"overall", "field:morphology", "field:syntax", "phenomenon:subject_verb_agreement",
                                   "phenomenon:island_effects"}
    row = block["parts"]["phenomenon:subject_verb_agreement"]["nsubj@2"]
    assert row["random"]["draws"] == min(3, row["space"]) and 0 < row["p_value"] <= 1  # a smaller space: all of it
    assert row["exact"] == (row["space"] <= 3)
    assert row["chosen"]["effect"] * 5 == pytest.approx(round(row["chosen"]["effect"] * 5))  # 5 pairs: steps of 1/5


def test_a_minimal_pairs_run_stopped_half_way_resumes_to_the_uninterrupted_result(tmp_path, capsys, monkeypatch):
    """--checkpoint/--resume: a run stopped after 4 of the 8 pairs (Ctrl-C, exit 130) keeps their bits, and the
    resumed run scores the other 4 only and writes the very result of an uninterrupted run; another run's
    checkpoint is refused by what differs."""
    from probing.cli import main
    from probing.results.io import read_result

    blimp = hand_blimp(tmp_path / "blimp", monkeypatch)
    whole, stopped, checkpoint = tmp_path / "whole.json", tmp_path / "stopped.json", tmp_path / "run.checkpoint"
    common = ["ablate", "--quiet", "--model", tiny_model("llama"), "--metric", "minimal-pairs", "--blimp", blimp,
              "--paradigms", "anaphor_gender_agreement", "--heads", "1-1", "--heads", "2-3,2-4", "--bootstrap", "30",
              "--batch-size", "2", "--checkpoint-every", "0"]
    assert main([*common, "--output", str(whole)]) == 0
    scored = record_chunks(monkeypatch, stop_after=4)
    assert main([*common, "--output", str(stopped), "--checkpoint", str(checkpoint)]) == 130
    assert checkpoint.is_file() and not stopped.exists() and scored == [0, 1, 2, 3]
    from probing.engine.checkpointing import load, progress

    assert load(checkpoint)["passes"]["0"]["stats"]["seconds_model"] > 0  # the model's time so far is kept too
    assert re.fullmatch(r"pass 1: 4 of 8 units in \d+ s", progress(checkpoint))  # as a grid's plan says it
    capsys.readouterr()
    assert main([*common, "--limit", "6", "--output", str(stopped), "--checkpoint", str(checkpoint), "--resume"]) == 2
    assert "checkpoint is of another run" in capsys.readouterr().err and checkpoint.is_file()
    scored = record_chunks(monkeypatch)
    assert main([*common, "--output", str(stopped), "--checkpoint", str(checkpoint), "--resume"]) == 0
    assert "resuming" in capsys.readouterr().err and scored == [4, 5, 6, 7] and not checkpoint.exists()
    first, second = read_result(whole), read_result(stopped)
    for block in ("baseline", "conditions", "state", "input"):
        assert first[block] == second[block], block
    assert first["config"]["max_length"] == second["config"]["max_length"]


def test_a_checkpoint_of_other_heads_under_the_same_labels_is_another_run():
    """A --chosen run's labels (det@1:chosen) name heads that --select-on chose: a resume with another DEV, whose
    choice differs, must not add its bits to the saved ones, so the heads are part of what a checkpoint checks."""
    from probing.engine.checkpointing import describe_difference

    def identity(head):
        conditions = [INTACT, Condition("det@1:chosen", (head,))]
        return ablation.AblationAccumulator(MinimalPairAccuracy.of_pairs(PAIRS), conditions, 2, 4, bootstrap=5,
                                            causal=True).identity()

    assert describe_difference(identity((0, 1)), identity((0, 1))) is None
    assert describe_difference(identity((0, 1)), identity((1, 2))).startswith("heads is ")


@pytest.mark.parametrize("family", ["llama", "gemma"])
def test_shared_prefixes_under_disabled_heads_and_reused_layers_give_the_whole_sentences_scores(family):
    """A pair's prefix computed once per condition, composed with the intact model's reused lower layers
    (probing.model.prefix): the same log-probabilities as every sentence whole, intact and ablated."""
    from helpers import tiny_gemma

    from probing.model.prefix import SharedPrefix

    loaded = load_model(tiny_model("llama", num_layers=3) if family == "llama" else tiny_gemma(), head="causal_lm")
    metric = MinimalPairAccuracy.of_pairs(PAIRS)
    metric.setup(loaded)
    prefix = SharedPrefix.find(loaded)
    assert metric.scoring.share and prefix is not None
    layers, heads = loaded.num_layers, loaded.num_heads
    with torch.inference_mode():
        for batch in pair_batches(encoded_pairs(loaded, PAIRS), pairs_per_batch=4, by_length=False):
            intact = torch.zeros(len(batch), layers, heads, dtype=torch.bool)
            group = torch.zeros(2 * len(batch), layers, heads, dtype=torch.bool)  # two conditions in the top layer
            group[: len(batch), layers - 1, 0] = True
            group[len(batch) :, layers - 1] = True
            with prefix.recording():
                shared_intact = sentence_scores(loaded, batch, intact, share=True)
            with prefix.reusing(layers - 1, copies=2):  # every layer below the top one is the intact pass's
                shared_group = sentence_scores(loaded, batch, group, share=True)
            whole_intact = sentence_scores(loaded, batch, intact)
            whole_group = sentence_scores(loaded, batch, group)
            assert not torch.allclose(whole_group[0], whole_group[1])  # the disabled heads matter
            torch.testing.assert_close(shared_intact, whole_intact, rtol=0, atol=1e-4)
            torch.testing.assert_close(shared_group, whole_group, rtol=0, atol=1e-4)


def test_sharing_prefixes_changes_no_right_or_wrong_of_an_ablation(llama, monkeypatch):
    shared = ablated(llama).state_tensors["right"]
    whole = PairScoring(split=True, share=False, cells=LOGIT_CELLS)
    monkeypatch.setattr(MinimalPairAccuracy, "setup", lambda self, loaded: setattr(self, "scoring", whole))
    assert torch.equal(shared, ablated(llama).state_tensors["right"])
