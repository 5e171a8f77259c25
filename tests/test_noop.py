"""The no-op test and sentence views: plain-loop references, a planted sink head, bootstrap, merge, the schema."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from helpers import planted_head_attention, split_treebank_path

from probing.analyses.noop.accumulator import GROUPS, NoopAccumulator, chosen_heads
from probing.analyses.views.accumulator import VALUES, SentenceViews
from probing.data.inputs import InputSource
from probing.data.relations import relation_pairs
from probing.engine.accumulator import Accumulator, BatchView
from probing.engine.options import PassOptions
from probing.engine.passes import run_pass
from probing.engine.token_roles import is_punctuation
from probing.errors import ProbingError
from probing.model.loading import load_model
from probing.results.schema.validation import validate
from probing.stats.bootstrap import poisson_weights
from probing.testing import sample_path, tiny_bert

RELATIONS = ("dobj", "det", "poss", "all")


class Views(Accumulator):
    """Keeps every batch view (batch and token attention) for the plain-loop references."""

    analysis = "keep"

    def __init__(self):
        super().__init__()
        self.views: list[BatchView] = []

    def update(self, view):
        self.views.append(view)


@pytest.fixture(scope="module")
def loaded():
    return load_model(tiny_bert())


def reference_sums(views: list[BatchView], relations, pool_from: str) -> dict:
    """The accumulator's sums by plain loops over units, layers, heads, words and tokens."""
    layers, heads = views[0].attention.shape[1:3]
    dependent = np.zeros((len(relations), 2, layers, heads))
    head_words_sum = np.zeros((len(relations), 2, layers, heads))
    every = np.zeros((2, layers, heads))
    dependents, head_words, words = np.zeros(len(relations)), np.zeros(len(relations)), 0
    for view in views:
        batch = view.batch
        for row, unit in enumerate(batch.units):
            sentence = unit.sentence
            owner = batch.word_of_token[row].tolist()
            length = int(batch.attention_mask[row].sum())
            special = [k for k in range(length) if batch.is_special[row, k]]
            punct = [k for k in range(length)
                     if owner[k] >= 0 and is_punctuation(sentence.words[owner[k]], sentence.upos[owner[k]])]
            queries = [{q for q, _ in relation_pairs(name, sentence)} for name in relations]
            targets = [{h for _, h in relation_pairs(name, sentence) if h >= 0} for name in relations]
            words += len(sentence)
            for r in range(len(relations)):
                dependents[r] += len(queries[r])
                head_words[r] += len(targets[r])
            for word in range(len(sentence)):
                pieces = [t for t in range(length) if owner[t] == word]
                rows = pieces[:1] if pool_from == "first" else pieces
                for layer in range(layers):
                    for head in range(heads):
                        attention = view.attention[row, layer, head]
                        to_special = sum(float(attention[t, k]) for t in rows for k in special) / len(rows)
                        to_punct = sum(float(attention[t, k]) for t in rows for k in punct) / len(rows)
                        every[:, layer, head] += (to_special, to_punct)
                        for r in range(len(relations)):
                            if word in queries[r]:
                                dependent[r, :, layer, head] += (to_special, to_punct)
                            if word in targets[r]:
                                head_words_sum[r, :, layer, head] += (to_special, to_punct)
    return {"dependent_sum": dependent, "head_sum": head_words_sum, "word_sum": every, "dependent_words": dependents,
            "head_words": head_words, "words": words}


@pytest.mark.parametrize("pool_from", ["mean", "first"])
def test_sums_match_a_plain_loop_over_tokens(loaded, pool_from):
    kept = Views()
    noop = NoopAccumulator(RELATIONS, loaded.num_layers, loaded.num_heads, bootstrap=0, seed=0)
    source = InputSource.treebank(str(split_treebank_path()))  # long words split into several pieces
    run_pass(loaded, source, [noop, kept], PassOptions(batch_size=3, pool_from=pool_from))
    reference = reference_sums(kept.views, RELATIONS, pool_from)
    for name, expected in reference.items():
        assert noop.state_tensors[name].numpy() == pytest.approx(np.asarray(expected), abs=1e-5), name
    assert reference["word_sum"][1].max() > 0  # the sentences have punctuation, so that share is tested too


def test_special_share_and_word_attention_make_each_row(loaded):
    """Under the raw weights a word's row sums to 1: its word attention (the probe's) plus what goes to
    special tokens; an identity independent of how the share is computed."""

    class Check(Accumulator):
        analysis = "check"

        def update(self, view):
            from probing.analyses.noop.accumulator import word_shares

            special = word_shares(view)[:, 0]  # [batch, layer, head, word]
            rows = view.word_attention.sum(dim=-1)
            for b, count in enumerate(view.batch.num_words.tolist()):
                total = special[b, ..., :count] + rows[b, ..., :count]
                assert torch.allclose(total, torch.ones_like(total), atol=1e-5)
            self.checked = True

    check = Check()
    run_pass(loaded, InputSource.treebank(str(sample_path()), limit=12), [check], PassOptions(batch_size=4))
    assert check.checked


def test_a_planted_sink_head_sends_every_word_to_special_tokens(loaded):
    noop = NoopAccumulator(RELATIONS, loaded.num_layers, loaded.num_heads, bootstrap=0, seed=0,
                           chosen={name: {"layer": 1, "head": 0, "direction": "dep_to_head", "selection": "planted"}
                                   for name in RELATIONS})
    with planted_head_attention(loaded.model, {0: "last", 1: "first"}):  # the final [SEP]; [CLS]
        run_pass(loaded, InputSource.treebank(str(sample_path()), limit=20), [noop], PassOptions(batch_size=8))
    block = noop.result()["noop"]
    for name in RELATIONS:
        heads = block["relations"][name]["heads"]
        for group in GROUPS:
            special = np.asarray(heads[group]["special"])
            assert special[:, :2] == pytest.approx(1.0, abs=1e-6), (name, group)  # every layer's heads 1 and 2
            assert np.asarray(heads[group]["punctuation"])[:, :2] == pytest.approx(0.0, abs=1e-6)
            assert special[:, 2:].max() < 0.99  # the model's own heads spread their attention
        chosen = block["relations"][name]["chosen"]
        assert chosen["name"] == "2-1 dep->head" and chosen["difference"]["special"]["value"] == pytest.approx(0.0)


@pytest.fixture(scope="module")
def bootstrapped(loaded):
    noop = NoopAccumulator(("det", "all"), loaded.num_layers, loaded.num_heads, bootstrap=40, seed=3,
                           chosen={"det": {"layer": 0, "head": 2, "direction": "dep_to_head", "selection": "given"}})
    kept = Views()
    run_pass(loaded, InputSource.treebank(str(sample_path()), limit=30), [noop, kept], PassOptions(batch_size=8))
    return noop, kept


def test_replicates_reweight_whole_sentences_with_the_probes_poisson_weights(bootstrapped):
    noop, kept = bootstrapped
    units = [unit for view in kept.views for unit in view.batch.units]
    weights = poisson_weights([unit.index for unit in units], replicates=40, seed=3).numpy()  # [B, sentence]
    lengths = np.array([len(unit.words) for unit in units], dtype=float)
    assert noop.state_tensors["boot_words"].numpy() == pytest.approx(weights @ lengths)
    dets = np.array([len(relation_pairs("det", unit.sentence)) for unit in units], dtype=float)
    assert noop.state_tensors["boot_dependent_words"][:, 0].numpy() == pytest.approx(weights @ dets)


def test_chosen_head_intervals_hold_their_estimates(bootstrapped):
    noop, _ = bootstrapped
    chosen = noop.result()["noop"]["relations"]["det"]["chosen"]
    assert chosen["attending"] == "dependents"  # a dep_to_head head reads its dependents' attention
    for group in GROUPS:
        for target in ("special", "punctuation"):
            entry = chosen[group][target]
            low, high = entry["interval"]
            assert low <= entry["share"] <= high and low < high
    difference = chosen["difference"]["special"]
    assert difference["value"] == pytest.approx(chosen["non_dependents"]["special"]["share"]
                                                - chosen["dependents"]["special"]["share"], abs=2e-6)
    assert noop.result()["noop"]["relations"]["all"]["chosen"] is None  # no head was chosen for it


def result_of(noop: NoopAccumulator, units: int = 30) -> dict:
    """A noop accumulator's payload inside the common blocks a command writes."""
    model = {"name_or_path": "tiny", "fingerprint": "sha256:0", "architecture": "BertModel",
             "num_layers": noop.num_layers, "num_heads": noop.num_heads, "dtype": "float32", "device": "cpu",
             "is_causal": False, "random_init": False, "revision": None, "commit": None}
    return {"schema_version": "2", "analysis": "noop", "tool": {"name": "probing", "version": "0", "git_commit": None},
            "model": model, "input": {"path": "x", "sha256": "0", "kind": "treebank", "units_total": units,
                                      "units_used": units, "skipped": {}},
            "config": {}, "environment": {"python": "3", "platform": "x", "packages": {}},
            "timing": {"seconds_total": 0.0, "seconds_model": 0.0}, "created": "now", **noop.result()}


def test_result_validates_and_rebuilds_the_accumulator(bootstrapped):
    noop, _ = bootstrapped
    result = validate(result_of(noop))
    rebuilt = NoopAccumulator.from_result(result)
    assert rebuilt.identity() == noop.identity() and rebuilt.chosen["det"] == noop.chosen["det"]
    for name, tensor in noop.state_tensors.items():
        assert torch.equal(rebuilt.state_tensors[name], tensor), name
    broken = copy.deepcopy(result)
    broken["noop"]["relations"]["det"]["words"]["non_heads"] += 1
    with pytest.raises(ProbingError, match="noop.relations.det.words: heads .* do not add up"):
        validate(broken, source="n.json")


@pytest.mark.parametrize(("spoil", "where"), [
    (lambda block: block["layers"]["dependents"]["special"][0].__setitem__("share", 1.4),
     r"noop.relations.det.layers.dependents.special\[0\].share: expected a number between 0 and 1"),
    (lambda block: block["layers"]["heads"]["punctuation"][1].__setitem__("interval", [0.3, 0.1]),
     r"noop.relations.det.layers.heads.punctuation\[1\].interval: \[0.3, 0.1\] is not an interval"),
    (lambda block: block["layers"]["non_heads"]["special"].pop(),
     r"noop.relations.det.layers.non_heads.special: has 1 layers, the model 2"),
    (lambda block: block["chosen"]["difference"]["special"].__setitem__("value", -1.5),
     r"noop.relations.det.chosen.difference.special.value: expected a number between -1 and 1"),
], ids=["a layer share above 1", "a reversed layer interval", "a layer too few", "a difference below -1"])
def test_the_per_layer_means_and_the_chosen_difference_are_validated(bootstrapped, spoil, where):
    noop, _ = bootstrapped
    broken = copy.deepcopy(result_of(noop))
    assert broken["noop"]["relations"]["det"]["chosen"] is not None
    spoil(broken["noop"]["relations"]["det"])
    with pytest.raises(ProbingError, match=f"^n.json: {where}"):
        validate(broken, source="n.json")


def test_shards_merge_into_the_whole_run_and_disagreeing_choices_are_dropped(loaded, bootstrapped):
    whole, _ = bootstrapped
    parts = []
    for index in range(2):
        choice = {"layer": index, "head": 2, "direction": "dep_to_head", "selection": "in-sample best"}
        part = NoopAccumulator(("det", "all"), loaded.num_layers, loaded.num_heads, bootstrap=40, seed=3,
                               chosen={"det": choice})
        run_pass(loaded, InputSource.treebank(str(sample_path()), limit=30), [part],
                 PassOptions(batch_size=8, shard=(index, 2)))
        parts.append(part)
    merged = parts[0].merge(parts[1])
    for name, tensor in whole.state_tensors.items():
        # float32 attention summed: other batches move the fused kernel's rounding in the last bits
        assert merged.state_tensors[name].numpy() == pytest.approx(tensor.numpy(), rel=1e-6, abs=1e-9), name
    assert merged.chosen["det"] is None  # the parts chose different heads: none is reported
    with pytest.raises(ProbingError, match="other options"):
        merged.merge(NoopAccumulator(("det",), loaded.num_layers, loaded.num_heads, bootstrap=40, seed=3))


def test_a_head_to_dep_head_is_tested_on_the_head_words(bootstrapped):
    noop, _ = bootstrapped
    noop = copy.copy(noop)
    noop.chosen = {"det": {"layer": 1, "head": 3, "direction": "head_to_dep", "selection": "given"}}
    chosen = noop.result()["noop"]["relations"]["det"]["chosen"]
    assert chosen["attending"] == "heads"
    assert chosen["difference"]["special"]["value"] == pytest.approx(
        chosen["non_heads"]["special"]["share"] - chosen["heads"]["special"]["share"], abs=2e-6)
    assert chosen["difference_dependents"]["special"]["value"] == pytest.approx(
        chosen["non_dependents"]["special"]["share"] - chosen["dependents"]["special"]["share"], abs=2e-6)


def test_chosen_heads_come_from_dev_in_a_heldout_result():
    best = {"layer": 1, "head": 2, "direction": "head_to_dep", "accuracy": 0.5}
    dev = {"layer": 4, "head": 0, "direction": "dep_to_head", "accuracy": 0.4, "ties": 1}
    probe = {"relations": {"det": {"best": best}}, "heldout": {"relations": {"det": {"dev": {"head": dev}}}}}
    assert chosen_heads(probe)["det"] == {"layer": 4, "head": 0, "direction": "dep_to_head",
                                          "selection": "chosen on dev"}
    del probe["heldout"]
    assert chosen_heads(probe)["det"]["layer"] == 1


def test_norm_based_rows_are_shares_of_what_arrives(loaded):
    noop = NoopAccumulator(("all",), loaded.num_layers, loaded.num_heads, bootstrap=0, seed=0)
    run_pass(loaded, InputSource.treebank(str(sample_path()), limit=10), [noop],
             PassOptions(batch_size=5, attention="norms"))
    shares = noop.state_tensors["word_sum"] / noop.state_tensors["words"]
    assert 0.0 < float(shares.min()) and float(shares.sum(dim=0).max()) <= 1.0 + 1e-6


# ---------------------------------------------------------------------------- sentence views


def test_views_keep_the_first_short_units_and_the_probes_predictions(loaded):
    views = SentenceViews(loaded.num_layers, loaded.num_heads, sentences=3, max_words=12)
    kept = Views()
    source = InputSource.treebank(str(sample_path()), limit=20)
    run_pass(loaded, source, [views, kept], PassOptions(batch_size=4))
    units = {unit.index: (view, row) for view in kept.views for row, unit in enumerate(view.batch.units)}
    expected = sorted(index for index, (view, row) in units.items()
                      if 2 <= len(view.batch.units[row].words) <= 12)[:3]
    assert views.kept() == expected
    for slot, index in enumerate(expected):
        view, row = units[index]
        count = int(view.batch.num_words[row])
        word_attention = view.word_attention[row, ..., :count, :count].clone()  # [layer, head, word, word]
        word_attention.diagonal(dim1=-2, dim2=-1).fill_(-1.0)  # a word never predicts itself
        values = views.state_tensors["values"][slot, ..., :count]  # [layer, head, value, word]
        to_head = values[:, :, VALUES.index("dep_to_head")].long()
        assert torch.equal(to_head, word_attention.argmax(dim=-1))
        from_dependent = values[:, :, VALUES.index("head_to_dep")].long()
        assert torch.equal(from_dependent, word_attention.argmax(dim=-2))
        weight = values[:, :, VALUES.index("dep_to_head_weight")]
        assert torch.allclose(weight, word_attention.max(dim=-1).values, atol=1e-6)


def test_views_merge_keeps_the_smallest_indices_like_one_run(loaded):
    def run(shard):
        views = SentenceViews(loaded.num_layers, loaded.num_heads, sentences=4)
        run_pass(loaded, InputSource.treebank(str(sample_path()), limit=16), [views],
                 PassOptions(batch_size=4, shard=shard))
        return views

    whole, parts = run(None), [run((i, 3)) for i in range(3)]
    merged = parts[2].fresh().merge(parts[2]).merge(parts[0]).merge(parts[1])
    assert merged.kept() == whole.kept()
    assert torch.allclose(merged.state_tensors["values"], whole.state_tensors["values"], atol=1e-6)
