"""Surface statistics (Clark et al. sec. 3): hand computations, a plain-loop reference, a planted model, the CLI."""

from __future__ import annotations

import json
import math

import pytest
import torch
from helpers import planted_head_attention

import probing
from probing.analyses.heads.accumulator import HeadsAccumulator
from probing.analyses.surface.accumulator import STATISTICS, SurfaceAccumulator, visible_keys
from probing.cli import main
from probing.data.datasets.cache import sha256_of
from probing.data.inputs import InputSource
from probing.engine.passes import run_pass
from probing.engine.token_roles import TokenRoles
from probing.model.loading import load_model
from probing.results.schema import SCHEMA_VERSION
from probing.testing import sample_path, tiny_bert


def hand_batch():
    """Two units, 1 layer x 1 head: [CLS] w , [SEP] and [CLS] w [SEP] + one padding token."""
    attention = torch.tensor(
        [
            [[0, 0, 0, 1], [1, 0, 0, 0], [0, 0.5, 0.5, 0], [0.25, 0.25, 0.25, 0.25]],
            [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 0], [1, 0, 0, 0]],  # last row: a padding query
        ]
    ).view(2, 1, 1, 4, 4)  # [batch, layer, head, query, key]
    real = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]])
    special = torch.tensor([[1, 0, 0, 1], [1, 0, 1, 0]])
    punctuation = torch.tensor([[0, 0, 1, 0], [0, 0, 0, 0]])
    return attention, TokenRoles.from_masks(real, special, punctuation)


# Worked by hand from hand_batch(): 7 real queries, 2 separator queries, 5 other queries.
HAND = {
    "first_special": (1 + 0.25) / 7,  # unit 1: query 1 all on [CLS], query 3 a quarter
    "separator": (1 + 0.25 + 1 + 1) / 7,
    "punctuation": (0.5 + 0.25) / 7,
    "self": (0.5 + 0.25 + 1) / 7,
    "previous": (1 + 0.5 + 0.25) / 7,  # i -> i-1: unit 1 queries 1, 2, 3
    "next": (1 + 1) / 7,  # i -> i+1: unit 2 queries 0, 1
    "separator_to_separator": (0.25 + 1) / 2,
    "other_to_separator": (1 + 1) / 5,
    "entropy": (math.log(2) + math.log(4)) / 7,
    "first_special_entropy": 0.0,
}


@pytest.mark.parametrize("name", sorted(HAND))
def test_each_statistic_matches_the_hand_computation(name):
    attention, roles = hand_batch()
    stats = SurfaceAccumulator(1, 1)
    stats.add(attention, roles)
    assert stats.means()[name].item() == pytest.approx(HAND[name], abs=1e-6)


def test_uniform_baselines_and_counts_by_hand():
    attention, roles = hand_batch()
    stats = SurfaceAccumulator(1, 1)
    stats.add(attention, roles)
    result = stats.result()["surface"]
    assert result["uniform_entropy"]["entropy"] == pytest.approx((4 * math.log(4) + 3 * math.log(3)) / 7, abs=1e-6)
    assert result["uniform_entropy"]["first_special_entropy"] == pytest.approx((math.log(4) + math.log(3)) / 2, abs=1e-6)
    assert result["queries"] == {"real": 7, "first": 2, "separator": 2, "other": 5, "punctuation": 1}
    assert result["units"] == 2


def test_tokens_never_seen_are_not_measured_and_only_a_leading_special_token_is_first():
    # A T5-like unit: its only special token closes it, so it is a separator, and nothing is "first".
    attention = torch.full((1, 1, 1, 3, 3), 1 / 3)
    roles = TokenRoles.from_masks(torch.ones(1, 3), torch.tensor([[0, 0, 1]]), torch.zeros(1, 3))
    stats = SurfaceAccumulator(1, 1)
    stats.add(attention, roles)
    means = stats.means()
    assert means["first_special"] is None and means["first_special_entropy"] is None
    assert means["punctuation"] is None
    assert means["separator"].item() == pytest.approx(1 / 3)
    assert stats.result()["surface"]["heads"]["first_special"] is None


def test_causal_models_see_only_earlier_keys():
    real = torch.tensor([[1.0, 1.0, 1.0, 0.0]])
    assert visible_keys(real, causal=True).tolist() == [[1, 2, 3, 0]]
    assert visible_keys(real, causal=False).tolist() == [[3, 3, 3, 0]]


def reference(attention, real, special, punctuation):
    """A plain loop over units, heads and queries: the definition, written the slow way."""
    sums = {name: torch.zeros(attention.shape[1:3], dtype=torch.float64) for name in STATISTICS}
    counts = {"real": 0, "first": 0, "separator": 0, "other": 0}
    for b in range(attention.shape[0]):
        n = int(real[b].sum())
        specials = [i for i in range(n) if special[b, i]]
        first, separators = specials[:1], specials[1:]
        punct = [i for i in range(n) if punctuation[b, i] and i not in specials]
        counts["real"] += n
        counts["first"] += len(first)
        counts["separator"] += len(separators)
        counts["other"] += n - len(separators)
        for layer in range(attention.shape[1]):
            for head in range(attention.shape[2]):
                a = attention[b, layer, head].double()
                for i in range(n):
                    row = a[i, :n]
                    entropy = -sum(float(p) * math.log(float(p)) for p in row if p > 0)
                    values = {
                        "first_special": sum(row[j] for j in first),
                        "separator": sum(row[j] for j in separators),
                        "punctuation": sum(row[j] for j in punct),
                        "self": row[i],
                        "previous": row[i - 1] if i > 0 else 0.0,
                        "next": row[i + 1] if i + 1 < n else 0.0,
                        "entropy": entropy,
                    }
                    if i in separators:
                        values["separator_to_separator"] = sum(row[j] for j in separators)
                    else:
                        values["other_to_separator"] = sum(row[j] for j in separators)
                    if i in first:
                        values["first_special_entropy"] = entropy
                    for name, value in values.items():
                        sums[name][layer, head] += float(value)
    return {name: sums[name] / counts[STATISTICS[name].queries] for name in STATISTICS}


def test_vectorised_statistics_equal_a_plain_loop_on_random_attention():
    generator = torch.Generator().manual_seed(3)
    batch, layers, heads, tokens = 3, 2, 3, 6
    lengths = torch.tensor([6, 4, 5])
    real = (torch.arange(tokens).unsqueeze(0) < lengths.unsqueeze(1)).long()
    scores = torch.randn(batch, layers, heads, tokens, tokens, generator=generator)
    scores = scores.masked_fill(real.view(batch, 1, 1, 1, tokens) == 0, float("-inf"))
    attention = scores.softmax(dim=-1)  # padding keys get 0, padding queries are garbage rows
    special = torch.zeros(batch, tokens, dtype=torch.long)
    for b, n in enumerate(lengths.tolist()):
        special[b, 0] = special[b, n - 1] = 1
    special[0, 3] = 1  # a pair: a separator in the middle too
    punctuation = torch.zeros(batch, tokens, dtype=torch.long)
    punctuation[0, 2] = punctuation[2, 1] = 1
    stats = SurfaceAccumulator(layers, heads)
    stats.add(attention, TokenRoles.from_masks(real, special, punctuation))
    expected = reference(attention, real, special, punctuation)
    for name, value in stats.means().items():
        assert torch.allclose(value, expected[name], atol=1e-5), name


def test_merge_of_halves_equals_one_pass():
    attention, roles = hand_batch()
    whole = SurfaceAccumulator(1, 1)
    whole.add(attention, roles)
    halves = [SurfaceAccumulator(1, 1), SurfaceAccumulator(1, 1)]
    for index, part in enumerate(halves):
        masks = (getattr(roles, f)[index : index + 1] for f in ("real", "first", "separator", "punctuation"))
        part.add(attention[index : index + 1], TokenRoles(*masks))
    merged = halves[0].merge(halves[1])
    assert merged.result()["surface"] == whole.result()["surface"]


@pytest.fixture(scope="module")
def planted_surface():
    loaded = load_model(tiny_bert())
    source = InputSource.treebank(str(sample_path()), limit=12)
    heads = HeadsAccumulator(loaded.num_layers, loaded.num_heads)
    with planted_head_attention(loaded.model, {0: "previous", 1: "last", 2: "uniform"}):
        run_pass(loaded, source, [heads])
    return heads.surface, heads.divergence


def test_planted_heads_give_the_planted_statistics(planted_surface):
    surface, _ = planted_surface
    means = surface.means()
    tokens, units = surface.queries["real"], surface.units
    # Head 0 looks at the previous token, except the first token of each unit (no previous: itself).
    assert means["previous"][:, 0].tolist() == pytest.approx([(tokens - units) / tokens] * 2, abs=1e-6)
    # Head 1 looks at the last token, the [SEP] of a single sentence.
    assert means["separator"][:, 1].tolist() == pytest.approx([1.0, 1.0], abs=1e-6)
    assert means["separator_to_separator"][:, 1].tolist() == pytest.approx([1.0, 1.0], abs=1e-6)
    assert means["entropy"][:, :2].abs().max().item() < 1e-5
    # Head 2 is uniform: its entropy is the uniform baseline exactly.
    uniform = surface.result()["surface"]["uniform_entropy"]["entropy"]
    assert means["entropy"][:, 2].tolist() == pytest.approx([uniform] * 2, abs=1e-5)


def test_surface_command_writes_json_and_figures(tmp_path, capsys):
    status = main(["surface", "--model", tiny_bert(), "--treebank", str(sample_path()), "--limit", "6", "--pairs",
                   "--output", str(tmp_path / "surface.json"), "--quiet"])
    assert status == 0
    result = json.loads((tmp_path / "surface.json").read_text())
    assert result["analysis"] == "surface" and result["schema_version"] == SCHEMA_VERSION == "3"
    assert result["input"]["sha256"] == sha256_of(sample_path())
    assert result["input"]["pairs"] is True and result["input"]["units_used"] == 6
    assert len(result["surface"]["heads"]["previous"]) == 2 and len(result["surface"]["heads"]["previous"][0]) == 4
    assert result["surface"]["queries"]["separator"] == 12  # two [SEP] per pair
    assert result["token_names"] == {"first_special": "[CLS]", "separator": "[SEP]"}
    for name in ("surface-surface.png", "surface-entropy.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
    assert "[SEP]->[SEP] %" in capsys.readouterr().out


def test_report_writes_one_folder_with_a_summary(tmp_path):
    status = main(["report", "--model", tiny_bert(), "--treebank", str(sample_path()), "--limit", "5",
                   "--output", str(tmp_path), "--quiet"])
    assert status == 0
    summary = (tmp_path / "README.md").read_text()
    for name in ("surface-surface.png", "surface-entropy.png", "heads-heads.png", "gradients-gradients.png",
                 "probe.json"):
        assert f"]({name})" in summary
        assert (tmp_path / name).is_file()
    probe = json.loads((tmp_path / "probe.json").read_text())
    assert probe["treebank"]["sentences_scored"] == 5  # the probe saw the analyses' sentences
    heads = json.loads((tmp_path / "heads.json").read_text())
    assert heads["heads"]["probe"] == "probe.json" and heads["heads"]["probe_marks"]
    # one config builder: the report's probe is described as probing score describes the same run
    scored = probing.score(tiny_bert(), str(sample_path()), limit=5)
    described = {name: value for name, value in scored.data["config"].items() if name != "options"}  # score's own
    assert probe["config"] == described and list(probe["config"]) == list(described)
    assert probe["relations"] == scored.data["relations"]


def test_unknown_input_is_a_clean_error(capsys):
    assert main(["surface", "--model", tiny_bert(), "--text", "no-such-file.txt", "--quiet"]) == 2
    assert "no-such-file.txt" in capsys.readouterr().err


def test_plain_text_pairs_never_cross_a_document(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("The cat sat.\nIt slept.\nThen it left.\n\nA new story begins.\n", encoding="utf-8")
    loaded = load_model(tiny_bert())
    source = InputSource.text(str(text), pairs=True)
    surface = SurfaceAccumulator(loaded.num_layers, loaded.num_heads)
    stats = run_pass(loaded, source, [surface])
    assert source.describe()["kind"] == "text" and stats.units_used == 3  # (1, 2), (3,), (4,)
    assert surface.queries["first"] == 3 and surface.queries["separator"] == 4  # one pair has two [SEP]


def test_report_of_paired_treebank_says_why_there_is_no_probe(tmp_path):
    # the probe scores single sentences; a paired treebank is still a treebank, so "plain text" would mislead
    status = main(["report", "--model", tiny_bert(), "--treebank", str(sample_path()), "--pairs", "--limit", "3",
                   "--output", str(tmp_path), "--quiet"])
    assert status == 0
    summary = (tmp_path / "README.md").read_text()
    assert not (tmp_path / "probe.json").exists()
    assert "--pairs joins two sentences" in summary and "plain text" not in summary
