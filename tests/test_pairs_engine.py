"""probing pairs in the engine: the one pass over pairs, shared with the ablation's minimal-pair metric, and the
run every analysis starts (checkpoints and resume included). tests/test_pair_scoring_homes.py checks the same
homes from the source."""

from __future__ import annotations

import json

import pytest
from helpers import HAND_PAIRS, record_chunks, tiny_model

import probing.engine.pair_passes as pair_passes
import probing.model.token_scores as token_scores
from probing.analyses.ablation.options import AblationOptions
from probing.analyses.ablation.run import ablation
from probing.analyses.pairs.api import pairs
from probing.analyses.pairs.options import PairsOptions
from probing.engine.options import PassOptions
from probing.engine.specs import InputSpec, ModelSpec


@pytest.fixture
def pair_file(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({"sentence_good": good, "sentence_bad": bad, "UID": "mine"}) + "\n"
                            for good, bad in HAND_PAIRS["good_bad"]), encoding="utf-8")
    return str(path)


def test_pairs_and_the_ablation_metric_run_the_one_pass_and_the_one_token_scorer(pair_file, monkeypatch):
    passes, scored = [], []
    one_pass, one_scorer = pair_passes.run_pair_pass, token_scores.token_log_probs

    def recorded_pass(loaded, encoded, accumulators, **options):
        passes.append([type(accumulator).__name__ for accumulator in accumulators])
        return one_pass(loaded, encoded, accumulators, **options)

    def recorded_scorer(head, states, wanted, cells=token_scores.LOGIT_CELLS):
        scored.append(len(wanted))
        return one_scorer(head, states, wanted, cells)

    monkeypatch.setattr(pair_passes, "run_pair_pass", recorded_pass)
    monkeypatch.setattr(token_scores, "token_log_probs", recorded_scorer)
    model = ModelSpec(model=tiny_model("llama"))
    result = pairs(model, InputSpec(), PassOptions(batch_size=4), PairsOptions(pairs_file=pair_file, bootstrap=0))
    assert passes == [["PairScores"]] and scored  # every log p of the run came through the one scorer
    scored.clear()
    ablated = ablation(model, InputSpec(), PassOptions(batch_size=4),
                       AblationOptions(metric="minimal-pairs", pairs_file=pair_file, heads=["1-1"], bootstrap=10))
    assert passes == [["PairScores"], ["AblationAccumulator"]] and scored
    right = result["pairs"]["paradigms"]["mine"]["right"]
    assert ablated["baseline"]["overall"]["value"] == pytest.approx(sum(right) / len(right))


def test_a_pairs_run_stopped_half_way_resumes_to_the_uninterrupted_result(pair_file, tmp_path, capsys, monkeypatch):
    """probing pairs takes --checkpoint/--resume as every long command does: a run stopped after 4 of the 8 pairs
    keeps their log-probabilities, and the resumed run scores the other 4 only, to the very numbers of one run."""
    from probing.cli import main
    from probing.results.io import read_result

    whole, stopped, checkpoint = tmp_path / "whole.json", tmp_path / "stopped.json", tmp_path / "run.checkpoint"
    common = ["pairs", "--quiet", "--model", tiny_model("llama"), "--pairs-file", pair_file, "--batch-size", "4",
              "--checkpoint-every", "0"]
    assert main([*common, "--output", str(whole)]) == 0
    scored = record_chunks(monkeypatch, stop_after=4)
    assert main([*common, "--output", str(stopped), "--checkpoint", str(checkpoint)]) == 130
    assert checkpoint.is_file() and not stopped.exists() and len(scored) == 4
    first_part = set(scored)
    scored = record_chunks(monkeypatch)
    capsys.readouterr()
    assert main([*common, "--output", str(stopped), "--checkpoint", str(checkpoint), "--resume"]) == 0
    assert "resuming" in capsys.readouterr().err and not checkpoint.exists()
    assert first_part.isdisjoint(scored) and len(scored) == 4  # the batches after the stop, and only those
    assert read_result(whole)["pairs"] == read_result(stopped)["pairs"]


def test_one_head_check_decides_how_pairs_are_scored_and_refuses_the_lm_metrics_a_capped_model():
    """probing.model.token_scores.exact_head: pairs score a soft-capped model from its whole logits, the ablation's
    LM metrics (which read the head's chunks only) refuse it in one line; an uncapped model is exact for both."""
    from helpers import tiny_gemma

    from probing.analyses.ablation.metrics import check_causal_lm_head
    from probing.errors import ProbingError
    from probing.model.loading import load_model
    from probing.model.token_scores import exact_head

    capped, plain = (load_model(tiny_gemma(softcap=softcap), head="causal_lm") for softcap in (1.0, None))
    assert not exact_head(capped.model) and exact_head(plain.model)
    with pytest.raises(ProbingError, match="beyond its LM head"):
        check_causal_lm_head(capped, "--metric lm", otherwise="use --metric mlm")
    check_causal_lm_head(plain, "--metric lm", otherwise="use --metric mlm")
