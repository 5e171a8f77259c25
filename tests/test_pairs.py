"""probing pairs: sentence log-probabilities and BLiMP accuracies against an independent implementation.

The reference is written from the rule alone (docs/minimal-pairs.md): one sentence at a time, no padding,
transformers' own model and tokenizer, the BOS token (else EOS) first, then the plain text's tokens, and
the sum of log_softmax(logits)[t, next token] in float32 with a plain loop.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import HAND_PAIRS, tiny_model
from transformers import AutoModelForCausalLM, AutoTokenizer

from probing.analyses.pairs.accuracy import accuracies
from probing.analyses.pairs.scoring import sentence_log_probs
from probing.data.minimal_pairs import MinimalPair, check_paradigms, paradigm_file, read_pairs
from probing.errors import ProbingError

SENTENCES = HAND_PAIRS["sentences"]  # hand-written, alternately a pair's good and bad sentence

TOLERANCE = 1e-3
"""Nats: float32 sums of a few dozen log-probabilities (about 40 nats a sentence), batched matmuls in another
order; measured differences are below 2e-4."""


def reference_log_prob(model, tokenizer, text: str) -> float:
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    ids = [start] + tokenizer(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0].float()
    log_probs = torch.log_softmax(logits, dim=-1)
    total = 0.0
    for position in range(1, len(ids)):
        total += float(log_probs[position - 1, ids[position]])
    return total


@pytest.fixture(scope="module")
def tiny():
    path = tiny_model("llama")
    return AutoModelForCausalLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


def test_log_probs_equal_the_reference_at_every_batch_size(tiny):
    model, tokenizer = tiny
    expected = [reference_log_prob(model, tokenizer, text) for text in SENTENCES]
    for batch_size in (1, 3, 64):
        found = sentence_log_probs(model, tokenizer, SENTENCES, batch_size=batch_size)
        assert all(math.isfinite(value) and value < 0 for value in found)
        assert max(abs(a - b) for a, b in zip(found, expected)) < TOLERANCE, batch_size


def test_padding_changes_no_right_or_wrong(tiny):
    model, tokenizer = tiny
    pairs = [MinimalPair("p", "syntax", good, bad) for good, bad in zip(SENTENCES[0::2], SENTENCES[1::2])]
    decisions = []
    for batch_size in (1, 3, 64):
        scores = sentence_log_probs(model, tokenizer, [t for p in pairs for t in (p.good, p.bad)], batch_size=batch_size)
        decisions.append(accuracies(pairs, scores[0::2], scores[1::2], bootstrap=0)["paradigms"]["p"]["right"])
    assert decisions[0] == decisions[1] == decisions[2]


def test_the_plain_tokenizer_is_read_with_the_models_load_options(monkeypatch):
    # the one tokenizer loader: the model's revision, and its own code only where the load trusted it
    from types import SimpleNamespace

    from probing.model.tokenizers import plain_tokenizer

    seen = []
    monkeypatch.setattr(AutoTokenizer, "from_pretrained", lambda name, **options: seen.append((name, options)))
    for trusted in (True, False):
        plain_tokenizer(SimpleNamespace(name_or_path="folder", revision="v1", trust_remote_code=trusted))
    assert seen == [("folder", {"revision": "v1", "trust_remote_code": True}),
                    ("folder", {"revision": "v1", "trust_remote_code": False})]


def test_overall_is_the_mean_of_paradigm_accuracies_and_a_tie_is_wrong():
    pairs = [MinimalPair("a", "syntax", "", "")] * 3 + [MinimalPair("b", "semantics", "", "")]
    result = accuracies(pairs, [-1.0, -2.0, -3.0, -5.0], [-2.0, -2.0, -1.0, -6.0], bootstrap=200, seed=1)
    assert result["paradigms"]["a"]["right"] == [True, False, False]  # the tie (-2 vs -2) is wrong
    assert result["overall"]["accuracy"] == pytest.approx((1 / 3 + 1) / 2)
    assert result["fields"]["syntax"]["accuracy"] == pytest.approx(1 / 3)
    low, high = result["overall"]["interval"]
    assert low <= result["overall"]["accuracy"] <= high
    again = accuracies(pairs, [-1.0, -2.0, -3.0, -5.0], [-2.0, -2.0, -1.0, -6.0], bootstrap=200, seed=1)
    assert again["overall"]["interval"] == result["overall"]["interval"]  # seeded


def test_masked_lm_is_refused_in_one_line():
    from probing.analyses.pairs.api import check_causal_lm
    from probing.testing import tiny_bert

    with pytest.raises(ProbingError, match="masked LM"):
        check_causal_lm(tiny_bert())


def test_a_file_that_is_not_the_pinned_one_is_refused(tmp_path):
    (tmp_path / "anaphor_gender_agreement.jsonl").write_text(json.dumps(
        {"sentence_good": "a", "sentence_bad": "b", "field": "morphology", "UID": "anaphor_gender_agreement"}) + "\n")
    with pytest.raises(ProbingError, match="sha256 mismatch"):
        paradigm_file("anaphor_gender_agreement", str(tmp_path))
    with pytest.raises(ProbingError, match="unknown BLiMP paradigm"):
        check_paradigms(["no_such_paradigm"])


@pytest.mark.real_data
def test_phenomena_choose_their_paradigms_and_an_unknown_one_is_refused():
    blimp = os.environ.get("PROBING_BLIMP")
    if not blimp:
        pytest.skip("real data: BLiMP is not available (set PROBING_BLIMP)")
    from probing.data.minimal_pairs import PARADIGMS, paradigms_of, phenomenon_of

    terms = {uid: phenomenon_of(uid, blimp) for uid in PARADIGMS}
    assert set(terms) == set(PARADIGMS) and len(set(terms.values())) == 13
    chosen = paradigms_of(["subject_verb_agreement"], blimp)
    assert len(chosen) == 6 and all(terms[uid] == "subject_verb_agreement" for uid in chosen)
    with pytest.raises(ProbingError, match="--phenomena"):
        paradigms_of(["subject_verb_agreemen"], blimp)


@pytest.mark.real_data
def test_the_phenomenon_of_a_paradigm_is_what_its_file_says():
    blimp = os.environ.get("PROBING_BLIMP")
    if not blimp:
        pytest.skip("real data: BLiMP is not available (set PROBING_BLIMP)")
    from probing.data.minimal_pairs import PARADIGMS, phenomenon_of

    for uid in PARADIGMS:
        first = json.loads((Path(blimp) / f"{uid}.jsonl").read_text(encoding="utf-8").split("\n", 1)[0])
        assert (first["UID"], first["linguistics_term"]) == (uid, phenomenon_of(uid, blimp))


@pytest.mark.real_data
def test_bfloat16_weights_and_a_device_map_score_the_same_pairs_in_float32():
    """--dtype bfloat16 keeps the log-probabilities in float32 (within bfloat16's rounding of the weights), and
    --device-map auto (here every layer on the CPU) gives the same scores as a plain load."""
    blimp = os.environ.get("PROBING_BLIMP")
    if not blimp:
        pytest.skip("real data: BLiMP is not available (set PROBING_BLIMP)")
    pytest.importorskip("accelerate", reason="--device-map needs accelerate (the multi-gpu extra)")
    from probing.analyses.pairs.api import score_pairs

    model, options = tiny_model("llama"), {"paradigms": ["wh_island"], "limit": 4, "blimp": blimp, "bootstrap": 10}
    runs = {name: score_pairs(model, **options, **extra)["pairs"]["paradigms"]["wh_island"] for name, extra in
            {"plain": {}, "mapped": {"device_map": "auto"}, "half": {"dtype": "bfloat16"}}.items()}
    assert runs["mapped"]["log_p_good"] == runs["plain"]["log_p_good"]
    good = np.array(runs["half"]["log_p_good"], dtype=np.float64)
    assert np.allclose(good, runs["plain"]["log_p_good"], atol=0.5)
    assert not np.array_equal(good, runs["plain"]["log_p_good"])  # the weights really were rounded


def test_a_failed_download_says_how_to_do_without_it(tmp_path, monkeypatch):
    monkeypatch.delenv("PROBING_BLIMP", raising=False)
    monkeypatch.delenv("PROBING_MINIMAL_PAIRS", raising=False)
    monkeypatch.setenv("PROBING_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PROBING_BLIMP_BASE_URL", "http://127.0.0.1:9")  # the discard port: nothing answers
    with pytest.raises(ProbingError, match="download failed.*--blimp DIR or set PROBING_BLIMP"):
        paradigm_file("wh_island")


def test_the_download_fills_the_cache_checked_by_sha256(tmp_path, monkeypatch):
    """A local server in place of BLiMP's home: the right file is cached, a wrong one never is."""
    import functools
    import http.server
    import threading

    blimp = os.environ.get("PROBING_BLIMP")
    if not blimp or not (Path(blimp) / "anaphor_gender_agreement.jsonl").is_file():
        pytest.skip("real data: BLiMP is not available (set PROBING_BLIMP)")
    served = tmp_path / "served" / "alexwarstadt" / "blimp"
    from probing.data.minimal_pairs import COMMIT

    (served / COMMIT / "data").mkdir(parents=True)
    good = Path(blimp) / "anaphor_gender_agreement.jsonl"
    (served / COMMIT / "data" / good.name).write_bytes(good.read_bytes())
    (served / COMMIT / "data" / "adjunct_island.jsonl").write_text("{}\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "served"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.delenv("PROBING_BLIMP")
        monkeypatch.delenv("PROBING_MINIMAL_PAIRS", raising=False)
        monkeypatch.setenv("PROBING_CACHE", str(tmp_path / "cache"))
        monkeypatch.setenv("PROBING_BLIMP_BASE_URL", f"http://127.0.0.1:{server.server_port}")
        path = paradigm_file("anaphor_gender_agreement")
        assert path.read_bytes() == good.read_bytes()
        with pytest.raises(ProbingError, match="sha256 mismatch"):
            paradigm_file("adjunct_island")
        assert not any(p.name == "adjunct_island.jsonl" for p in (tmp_path / "cache").rglob("*"))
    finally:
        server.shutdown()


@pytest.mark.slow  # a real checkpoint over a whole treebank split: well over 10 s
@pytest.mark.real_data
def test_smollm2_on_two_paradigms_equals_the_reference():
    from conftest import real_model

    from probing.analyses.pairs.api import score_pairs

    blimp = os.environ.get("PROBING_BLIMP")
    if not blimp:
        pytest.skip("real data: BLiMP is not available (set PROBING_BLIMP)")
    path = real_model("smollm2")
    paradigms = ["anaphor_gender_agreement", "determiner_noun_agreement_2"]
    result = score_pairs(path, paradigms=paradigms, limit=20, blimp=blimp, batch_size=7, bootstrap=100)
    model, tokenizer = AutoModelForCausalLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
    pairs, _ = read_pairs(paradigms, blimp, 20)
    for uid in paradigms:
        entry = result["pairs"]["paradigms"][uid]
        mine = [p for p in pairs if p.uid == uid]
        good = [reference_log_prob(model, tokenizer, p.good) for p in mine]
        bad = [reference_log_prob(model, tokenizer, p.bad) for p in mine]
        assert max(abs(a - b) for a, b in zip(entry["log_p_good"], good)) < TOLERANCE
        assert entry["right"] == [g > b for g, b in zip(good, bad)]
        assert entry["accuracy"] == sum(g > b for g, b in zip(good, bad)) / len(mine)
    from probing.results.schema.validation import validate

    validate(result)


def test_the_blimp_board_quotes_the_published_figures_and_no_masked_lm():
    from probing.analyses.pairs.report import PUBLISHED, leaderboard_table

    pairs = [MinimalPair("a", "syntax", "", "")] * 2
    block = accuracies(pairs, [-1.0, -3.0], [-2.0, -2.0], bootstrap=0)
    result = {"analysis": "pairs", "model": {"name": "m", "name_or_path": "m", "architecture": "x"},
              "config": {"limit": 2}, "pairs": block}
    table = leaderboard_table([result])
    quoted = {row.model: row.cells["overall"].accuracy for row in table.rows if row.kind == "reference"}
    assert quoted == {f"{name} [W20]": value for name, value in PUBLISHED.items()}
    assert table.rows[0].cells["overall"].accuracy == 0.5 and "first 2 pairs" in table.rows[0].treebank


def test_a_board_without_blimp_rows_carries_no_blimp_reference_note():
    """The [W20] note explains the published BLiMP rows: a CLAMS-only board has neither; a board with a BLiMP row has
    both (the note once)."""
    from probing.analyses.pairs.report import W20_NOTE, leaderboard_table

    block = accuracies([MinimalPair("a", "morphology", "", "")] * 2, [-1.0, -3.0], [-2.0, -2.0], bootstrap=0)

    def result(pair_set: str) -> dict:
        return {"analysis": "pairs", "model": {"name": "m", "name_or_path": "m", "architecture": "x"},
                "config": {"limit": 2}, "input": {"pair_set": pair_set}, "pairs": block}

    clams = leaderboard_table([result("clams-de")])
    assert not any("[W20]" in note for note in clams.notes)
    assert [row.kind for row in clams.rows] == ["model"]
    mixed = leaderboard_table([result("clams-de"), result("blimp")])
    assert mixed.notes.count(W20_NOTE) == 1 and sum(row.kind == "reference" for row in mixed.rows) == 3


def test_the_committed_blimp_board_comes_out_byte_for_byte():
    from probing.report.board import leaderboard_from_files
    from probing.report.renderers import render

    folder = Path(__file__).resolve().parents[1] / "leaderboards" / "blimp"
    results = sorted(str(path) for path in (folder / "results").glob("*.json"))
    if not results:
        pytest.skip("no committed BLiMP results")
    board = leaderboard_from_files(results)
    for fmt, suffix in (("md", "md"), ("csv", "csv"), ("json", "json")):
        assert render(board, fmt) == (folder / f"blimp.{suffix}").read_text(encoding="utf-8")


def test_the_committed_blimp_results_name_the_token_they_prepended():
    """Every committed BLiMP result and part says, in model.prepended_token, the context token it was scored after
    (leaderboards/repair_prepended_token.py rewrote the field of those made before the fix)."""
    folder = Path(__file__).resolve().parents[1] / "leaderboards" / "blimp"
    paths = sorted(folder.glob("results/*.json")) + sorted(folder.glob("parts/*/part-0-of-*.json"))
    if not paths:
        pytest.skip("no committed BLiMP results")
    for path in paths:
        result = json.loads(path.read_text(encoding="utf-8"))
        assert result["model"]["prepended_token"] == result["pairs"]["context_token"], path.name
