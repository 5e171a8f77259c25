"""Every tokenizer and model family, end to end on tiny checkpoints built offline.

Each family's tiny model carries the tokenizer class its real checkpoints ship
(trained on the spot by the ``tokenizers`` package); the hand-made treebank
``helpers.SPLIT_TREEBANK`` splits its long words into several pieces.
A planted attention pattern (every piece of a dependent attends to its head's
first piece, registered through transformers' AttentionInterface) must score
100%, and the causal families' reachable counts must equal a count by hand.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from helpers import (
    TINY_FAMILIES,
    planted_dependency_attention,
    split_treebank_path,
    tiny_bpe_tokenizer,
    tiny_model,
    tiny_slow_bert,
)

from probing.analyses.probe.accumulator import counts_from_result
from probing.analyses.probe.api import run_probe
from probing.analyses.probe.config import ScoreConfig
from probing.analyses.probe.counts import ProbeCounts
from probing.analyses.probe.pairs import PairBatch
from probing.data.relations import relation_pairs
from probing.data.treebank import read_treebank
from probing.errors import ProbingError
from probing.model.alignment import SPECIAL, align_words, check_alignment, encodings
from probing.model.loading import load_model
from probing.model.tokenizers import byte_level_states, load_tokenizer, prefix_space_rule

RELATIONS = ("all", "det", "dobj", "pobj", "poss")

HAND_TOTALS = {"all": 22, "det": 2, "dobj": 2, "pobj": 1, "poss": 1}
"""Pairs of SPLIT_TREEBANK counted by hand: 5 + 7 + 6 + 4 non-root words; det: The, the;
dobj: recommendations, blankets; pobj: families->to; poss: the clitic 's -> recommendations."""

HAND_REACHABLE_CAUSAL = {
    "all": (10, 12),
    "det": (0, 2),
    "dobj": (2, 0),
    "pobj": (1, 0),
    "poss": (0, 1),
}
"""(dep_to_head, head_to_dep) pairs a causal head can reach, counted by hand: a head left of
its dependent for dep_to_head (sentence 1: yesterday, . ; 2: 's, recommendations, carefully, . ;
3: blankets, families, . ; 4: .), a head right of it for head_to_dep (the other twelve)."""

EXPECTED_SPECIALS = {
    # family: (tokens before the words, tokens after), as the tokenizer's own attribute names;
    # "sink" is the BOS the probe prepends to a causal stack without one
    "bert": (["cls_token"], ["sep_token"]),
    "distilbert": (["cls_token"], ["sep_token"]),
    "electra": (["cls_token"], ["sep_token"]),
    "mpnet": (["cls_token"], ["sep_token"]),
    "roberta": (["cls_token"], ["sep_token"]),
    "gpt2": (["sink"], []),
    "xlm-roberta": (["cls_token"], ["sep_token"]),
    "albert": (["cls_token"], ["sep_token"]),
    "deberta-v2": (["cls_token"], ["sep_token"]),
    "t5": ([], ["eos_token"]),
    "llama": (["bos_token"], []),
    "llama3": (["bos_token"], []),
}

CAUSAL = {"gpt2", "llama", "llama3"}
NO_ATTENTION_INTERFACE = {"mpnet", "deberta-v2"}
"""Families whose attention modules do not dispatch through AttentionInterface (no planting)."""


@pytest.fixture(scope="module")
def sentences():
    return list(read_treebank(split_treebank_path()))


@pytest.fixture(scope="module")
def loaded_models():
    cache = {}

    def get(family: str, attention: str | None = None, dtype: str = "float32"):
        key = (family, attention, dtype)
        if key not in cache:
            cache[key] = load_model(tiny_model(family), stack=attention, dtype=dtype)
        return cache[key]

    return get


def score(loaded, *, planted: bool, relations=RELATIONS) -> dict:
    treebank = split_treebank_path()
    config = ScoreConfig.from_fields(
        model=loaded.name_or_path, treebank=str(treebank), relations=relations, bootstrap=0, batch_size=3
    )
    if not planted:
        return run_probe(config, loaded=loaded)
    with planted_dependency_attention(loaded, treebank):
        return run_probe(config, loaded=loaded)


def assert_counts_consistent(result: dict) -> None:
    """correct <= reachable <= total for every head and direction; totals equal the hand count."""
    for name, entry in result["relations"].items():
        assert entry["total"] == HAND_TOTALS[name], name
        for direction, per_layer in entry["heads"].items():
            reachable = entry["reachable"][direction]
            assert 0 <= reachable <= entry["total"]
            correct = torch.tensor(per_layer)
            assert correct.shape == (result["model"]["num_layers"], result["model"]["num_heads"])
            assert bool((correct >= 0).all()) and bool((correct <= reachable).all()), (name, direction)
        assert all(0 <= count <= entry["total"] for count in entry["baselines"].values())


# ---------------------------------------------------------------------------------------- alignment


@pytest.mark.parametrize("family", sorted(TINY_FAMILIES))
def test_alignment_is_exact(family, sentences, loaded_models):
    """Every word gets its own pieces (those it has alone), every piece one word, special tokens -1."""
    loaded = loaded_models(family)
    tokenizer = loaded.tokenizer
    aligned = align_words(tokenizer, [s.words for s in sentences], prepend=loaded.prepend_token_id)
    before, after = EXPECTED_SPECIALS[family]
    split_words = 0
    for sentence, item in zip(sentences, aligned):
        check_alignment(item.word_of_token, len(sentence))
        assert len(item.input_ids) == len(item.word_of_token)
        for w, word in enumerate(sentence.words):
            pieces = [t for t, owner in zip(item.input_ids, item.word_of_token) if owner == w]
            assert pieces == tokenizer(word, add_special_tokens=False)["input_ids"], (family, word)
            split_words += len(pieces) > 1
        special = [t for t, owner in zip(item.input_ids, item.word_of_token) if owner == SPECIAL]
        expected = [_special_id(loaded, name) for name in before + after]
        assert special == expected, family
        assert item.word_of_token[: len(before)] == (SPECIAL,) * len(before)
        assert item.word_of_token[len(item) - len(after) :] == (SPECIAL,) * len(after)
    assert split_words >= 8, "the treebank should exercise words of several pieces"


def _special_id(loaded, name: str) -> int:
    if name == "sink":
        return loaded.prepend_token_id
    return getattr(loaded.tokenizer, f"{name}_id")


@pytest.mark.parametrize("family", sorted(TINY_FAMILIES))
def test_encodings_read_from_the_backend_equal_the_tokenizer_call(family, sentences, loaded_models):
    """The backend's encodings carry what ``tokenizer(...)`` returns, for split words and for running text,
    even where the tokenizer was left set to truncate and pad and a word spells a special token."""
    tokenizer = loaded_models(family).tokenizer
    words = [list(s.words) for s in sentences] + [["a", tokenizer.all_special_tokens[0], "b"]]
    texts = [" ".join(w) for w in words]
    tokenizer.backend_tokenizer.enable_truncation(max_length=3)
    tokenizer.backend_tokenizer.enable_padding(length=40)
    backend_split = encodings(tokenizer, words, split_into_words=True)
    backend_text = encodings(tokenizer, texts, split_into_words=False)
    assert tokenizer.backend_tokenizer.truncation is None and tokenizer.backend_tokenizer.padding is None
    split = tokenizer(words, is_split_into_words=True, add_special_tokens=True, truncation=False)
    text = tokenizer(texts, add_special_tokens=True, truncation=False, return_offsets_mapping=True,
                     return_special_tokens_mask=True)
    assert [e.ids for e in backend_split] == split["input_ids"]
    assert [e.word_ids for e in backend_split] == [split.word_ids(row) for row in range(len(words))]
    assert [e.ids for e in backend_text] == text["input_ids"]
    assert [[tuple(o) for o in e.offsets] for e in backend_text] == [[tuple(o) for o in row]
                                                                     for row in text["offset_mapping"]]
    assert [e.special_tokens_mask for e in backend_text] == text["special_tokens_mask"]


def test_slow_tokenizer_falls_back_to_one_word_at_a_time(sentences, loaded_models):
    """A tokenizer with no fast version aligns each word on its own, exactly as word_ids() does."""
    slow = load_model(tiny_slow_bert())
    fast = loaded_models("bert")
    assert not slow.tokenizer.is_fast and slow.tokenizer_facts()["alignment"] == "per_word"
    words = [s.words for s in sentences] + [("a", "\u200b", "b")]  # a zero-width space gives no piece
    slow_aligned, fast_aligned = align_words(slow.tokenizer, words), align_words(fast.tokenizer, words)
    assert slow_aligned == fast_aligned
    assert slow_aligned[-1].unk_substituted == 1
    assert score(slow, planted=False)["relations"] == score(fast, planted=False)["relations"]


def test_slow_tokenizer_that_cannot_place_its_special_tokens_is_an_error():
    class NoMask:
        is_fast = False
        unk_token, unk_token_id = "[UNK]", 1

        def __call__(self, word, add_special_tokens):
            return {"input_ids": [ord(c) for c in word]}

        def build_inputs_with_special_tokens(self, ids):
            return [0, *ids, 0]

        def get_special_tokens_mask(self, ids, already_has_special_tokens=False):
            raise NotImplementedError("no mask")

    with pytest.raises(ProbingError, match="no fast version.*tokenizer.json"):
        align_words(NoMask(), [("ab", "c")])


def test_an_alignment_that_loses_a_word_is_an_error():
    with pytest.raises(ProbingError, match="word 1 of 3 no piece"):
        check_alignment([SPECIAL, 0, 0, 2, SPECIAL], 3)
    with pytest.raises(ProbingError, match="out of word order"):
        check_alignment([1, 0], 2)


# ---------------------------------------------------------------------------------------- byte-level BPE


def test_prefix_space_is_passed_at_load_time_only_to_byte_level_tokenizers(loaded_models):
    for family in ("gpt2", "roberta"):
        tokenizer = loaded_models(family).tokenizer
        assert tokenizer.init_kwargs.get("add_prefix_space") is True
        assert [state["add_prefix_space"] for state in byte_level_states(tokenizer)] == [True]
        assert prefix_space_rule(tokenizer) == "add_prefix_space"
    for family in ("bert", "xlm-roberta", "t5"):
        tokenizer = loaded_models(family).tokenizer
        assert byte_level_states(tokenizer) == [] and prefix_space_rule(tokenizer) is None
    assert "add_prefix_space" not in loaded_models("bert").tokenizer.init_kwargs
    # a generic fast tokenizer ignores the option: a normaliser prepends the space instead
    assert prefix_space_rule(loaded_models("llama3").tokenizer) == "normalizer"


def test_pre_split_words_are_tokenised_as_in_running_text(loaded_models):
    for family in ("gpt2", "roberta", "llama3"):
        tokenizer = loaded_models(family).tokenizer
        words = ["Researchers", "examined", "the", "blankets"]
        split = tokenizer(words, is_split_into_words=True, add_special_tokens=False)["input_ids"]
        running = tokenizer(" ".join(words), add_special_tokens=False)["input_ids"]
        assert split == running, family
        assert tokenizer.convert_ids_to_tokens(split)[0].startswith("Ġ")  # the first word too


def test_a_byte_level_tokenizer_that_has_the_prefix_space_is_loaded_once(tmp_path, monkeypatch):
    from transformers import AutoTokenizer, GPT2Tokenizer

    base = tiny_bpe_tokenizer("gpt2")
    GPT2Tokenizer(vocab=base.get_vocab(), merges=base._merges, add_prefix_space=True).save_pretrained(tmp_path)
    calls = []
    original = AutoTokenizer.from_pretrained
    monkeypatch.setattr(AutoTokenizer, "from_pretrained", lambda *a, **k: calls.append(k) or original(*a, **k))
    tokenizer = load_tokenizer(str(tmp_path), {"revision": None, "trust_remote_code": False})
    assert len(calls) == 1 and "add_prefix_space" not in calls[0]
    assert prefix_space_rule(tokenizer) == "add_prefix_space"


# ---------------------------------------------------------------------------------------- planted pattern


PLANTABLE = sorted(set(TINY_FAMILIES) - NO_ATTENTION_INTERFACE)


@pytest.mark.parametrize("family", PLANTABLE)
def test_planted_pattern_scores_every_reachable_pair(family, loaded_models):
    loaded = loaded_models(family)
    result = score(loaded, planted=True)
    assert_counts_consistent(result)
    entry = result["relations"]["all"]
    reachable = entry["reachable"]
    if family in CAUSAL:
        assert result["model"]["is_causal"] and result["config"]["stack"] == "decoder"
        assert (reachable["dep_to_head"], reachable["head_to_dep"]) == HAND_REACHABLE_CAUSAL["all"]
        assert entry["best"]["accuracy"] == pytest.approx(10 / 22)
    else:
        assert not result["model"]["is_causal"] and result["config"]["stack"] == "encoder"
        assert reachable == {"dep_to_head": 22, "head_to_dep": 22}
        assert entry["best"] == {"layer": 0, "head": 0, "direction": "dep_to_head", "accuracy": 1.0}
    # every head of every layer was planted: each finds every reachable head
    assert entry["heads"]["dep_to_head"] == [[reachable["dep_to_head"]] * loaded.num_heads] * loaded.num_layers
    assert entry["best_reachable"] == {"layer": 0, "head": 0, "direction": "dep_to_head", "accuracy": 1.0}


@pytest.mark.parametrize("family", sorted(NO_ATTENTION_INTERFACE))
def test_families_without_attention_interface_count_consistently(family, loaded_models):
    result = score(loaded_models(family), planted=False)
    assert_counts_consistent(result)
    assert all(entry["reachable"] == {"dep_to_head": entry["total"], "head_to_dep": entry["total"]}
               for entry in result["relations"].values())


# ---------------------------------------------------------------------------------------- causal


@pytest.mark.parametrize("family", sorted(CAUSAL))
def test_causal_reachable_counts_match_the_hand_count(family, loaded_models):
    result = score(loaded_models(family), planted=False)
    assert_counts_consistent(result)
    for name, (dep_to_head, head_to_dep) in HAND_REACHABLE_CAUSAL.items():
        assert result["relations"][name]["reachable"] == {"dep_to_head": dep_to_head, "head_to_dep": head_to_dep}


def test_the_first_token_sink_is_a_special_token(loaded_models):
    gpt2 = loaded_models("gpt2")
    assert gpt2.prepended_token == "<|endoftext|>"  # GPT-2 adds no BOS: the probe prepends it
    assert score(gpt2, planted=False)["config"]["prepended_token"] == "<|endoftext|>"
    llama = loaded_models("llama")
    assert llama.prepend_token_id is None  # its tokenizer puts <s> first already
    assert score(llama, planted=False)["config"]["prepended_token"] is None
    for family in ("bert", "roberta", "t5"):
        assert loaded_models(family).prepend_token_id is None  # bidirectional: no sink rule


def test_a_pair_a_causal_head_cannot_see_is_never_correct():
    """The last word's column is all zeros on a causal stack, so head_to_dep's tie-break picks
    word 0; when word 0 is that word's head the pair is still not counted (it is unreachable)."""
    predictions = torch.zeros(1, 2, 1, 1, 2, dtype=torch.long)  # [batch, direction, layer, head, word]
    pairs = PairBatch(*(torch.tensor([v]) for v in (0, 1, 0, 0)))  # word 1's head is word 0
    bidirectional, causal = ProbeCounts(("all",), 1, 1), ProbeCounts(("all",), 1, 1, causal=True)
    for counts in (bidirectional, causal):
        counts.update(predictions, pairs, sentence_indices=[0], num_words=[2])
    assert bidirectional.heads[0, :, 0, 0].tolist() == [1, 1]
    assert causal.heads[0, :, 0, 0].tolist() == [1, 0] and causal.reachable[0].tolist() == [1, 0]


def test_reachable_counts_survive_a_result_file_and_a_merge(loaded_models):
    result = score(loaded_models("gpt2"), planted=False)
    counts = counts_from_result(json.loads(json.dumps(result)))
    assert counts.causal and "reachable" in counts.tensor_names()
    doubled = counts_from_result(result).merge(counts)
    assert doubled.reachable[0].tolist() == [20, 24]
    with pytest.raises(ProbingError, match="cannot merge"):
        counts.merge(counts_from_result(score(loaded_models("bert"), planted=False)))


# ---------------------------------------------------------------------------------------- encoder-decoder


def test_t5_scores_its_encoder_by_default_and_its_decoder_on_request(loaded_models):
    encoder, decoder = loaded_models("t5"), loaded_models("t5", attention="decoder")  # --stack decoder
    assert (encoder.stack, encoder.is_causal, encoder.prepend_token_id) == ("encoder", False, None)
    assert (decoder.stack, decoder.is_causal, decoder.prepended_token) == ("decoder", True, "<pad>")
    result = score(decoder, planted=True)
    assert result["config"]["stack"] == result["model"]["stack"] == "decoder" and result["model"]["is_causal"]
    entry = result["relations"]["all"]
    assert (entry["reachable"]["dep_to_head"], entry["reachable"]["head_to_dep"]) == HAND_REACHABLE_CAUSAL["all"]
    assert entry["best_reachable"]["accuracy"] == 1.0


def test_stack_option_is_only_for_encoder_decoder_models(loaded_models):
    with pytest.raises(ProbingError, match="--stack"):
        load_model(tiny_model("bert"), stack="decoder")
    with pytest.raises(ProbingError, match="--stack"):
        load_model(tiny_model("t5"), stack="cross")
    assert load_model(tiny_model("gpt2"), stack="decoder").stack == "decoder"


def test_an_encoder_only_t5_checkpoint_loads_as_its_own_class(tmp_path):
    """A T5EncoderModel folder (the text encoder of many diffusion pipelines) has no decoder weights."""
    from transformers import T5EncoderModel

    folder = tmp_path / "t5-encoder"
    T5EncoderModel.from_pretrained(tiny_model("t5")).save_pretrained(folder)
    for path in Path(tiny_model("t5")).glob("*"):
        if not path.name.startswith(("model", "config")):
            shutil.copy(path, folder)
    loaded = load_model(str(folder))
    assert type(loaded.model).__name__ == "T5EncoderModel" and loaded.architecture == "T5EncoderModel"
    assert (loaded.stack, loaded.is_causal, loaded.is_encoder_decoder) == ("encoder", False, False)
    reference = load_model(tiny_model("t5"))
    config = ScoreConfig.from_fields(model=str(folder), treebank=str(split_treebank_path()), relations=RELATIONS, bootstrap=0)
    assert run_probe(config, loaded=loaded)["relations"] == run_probe(config, loaded=reference)["relations"]


# ---------------------------------------------------------------------------------------- dtype


@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_bfloat16_runs_on_cpu_and_pools_in_float32(family, loaded_models):
    loaded = loaded_models(family, dtype="bfloat16")
    assert next(loaded.model.parameters()).dtype == torch.bfloat16
    result = score(loaded, planted=True)
    assert result["model"]["dtype"] == "bfloat16"
    assert_counts_consistent(result)
    assert result["relations"]["all"]["best_reachable"]["accuracy"] == 1.0
    unplanted = score(loaded, planted=False)
    assert_counts_consistent(unplanted)


# ---------------------------------------------------------------------------------------- no attention


MODEL_CODE = '''
import torch
from transformers import PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import BaseModelOutput


class NoAttentionConfig(PretrainedConfig):
    model_type = "probing-no-attention"

    def __init__(self, vocab_size=400, hidden_size=8, window=0, **kwargs):
        self.vocab_size, self.hidden_size, self.window = vocab_size, hidden_size, window
        super().__init__(**kwargs)


class NoAttentionModel(PreTrainedModel):
    """Returns hidden states and no attention weights, or (``window`` > 0) weights over a
    window of keys only, as windowed-attention models do."""

    config_class = NoAttentionConfig

    def __init__(self, config):
        super().__init__(config)
        self.embed = torch.nn.Embedding(config.vocab_size, config.hidden_size)
        self.post_init()

    def get_input_embeddings(self):
        return self.embed

    def forward(self, input_ids=None, attention_mask=None, output_attentions=None, **kwargs):
        batch, tokens = input_ids.shape
        window = self.config.window
        attentions = (torch.full((batch, 1, tokens, window), 1.0 / window),) if window else None
        return BaseModelOutput(last_hidden_state=self.embed(input_ids), attentions=attentions)
'''


def _own_code_model(folder: Path, window: int = 0) -> str:
    """A checkpoint folder whose model class comes with it (``auto_map``), as hub code does."""
    import importlib.util

    folder.mkdir()
    (folder / "modeling_noattn.py").write_text(MODEL_CODE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"modeling_noattn_{folder.name}", folder / "modeling_noattn.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.NoAttentionModel(module.NoAttentionConfig(window=window)).save_pretrained(folder)
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {"AutoConfig": "modeling_noattn.NoAttentionConfig", "AutoModel": "modeling_noattn.NoAttentionModel"}
    (folder / "config.json").write_text(json.dumps(config))
    for path in Path(tiny_model("gpt2")).glob("tokenizer*"):
        shutil.copy(path, folder)
    return str(folder)


def test_a_model_that_returns_no_attention_stops_with_the_option_to_use(tmp_path):
    folder = _own_code_model(tmp_path / "no-attention-model")
    with pytest.raises(ProbingError, match="pass --trust-remote-code"):
        load_model(folder)
    with pytest.raises(ProbingError, match="returned no attention weights.*no option"):
        load_model(folder, trust_remote_code=True)


def test_windowed_attention_is_an_error_not_a_misread(tmp_path):
    folder = _own_code_model(tmp_path / "windowed-model", window=3)
    with pytest.raises(ProbingError, match="not \\[batch, head, token, token\\]"):
        load_model(folder, trust_remote_code=True)


# ---------------------------------------------------------------------------------------- real checkpoints


@pytest.mark.slow  # a real checkpoint over a whole treebank split: well over 10 s
@pytest.mark.real_data
@pytest.mark.parametrize("name", ["minilm", "mpnet"])
def test_real_checkpoints_align_exactly_and_count_consistently(name):
    from conftest import real_model, real_treebank

    treebank = real_treebank("en_ewt", "dev")
    limit = 50
    loaded = load_model(real_model(name))
    tokenizer = loaded.tokenizer
    assert (loaded.stack, loaded.is_causal, loaded.prepend_token_id) == ("encoder", False, None)
    sentences = [s for s, _ in zip(read_treebank(treebank), range(limit))]
    for sentence, item in zip(sentences, align_words(tokenizer, [s.words for s in sentences])):
        check_alignment(item.word_of_token, len(sentence))
        specials = [t for t, owner in zip(item.input_ids, item.word_of_token) if owner == SPECIAL]
        assert specials == [tokenizer.cls_token_id, tokenizer.sep_token_id]
        assert item.word_of_token[0] == item.word_of_token[-1] == SPECIAL
        for w, word in enumerate(sentence.words):
            pieces = [t for t, owner in zip(item.input_ids, item.word_of_token) if owner == w]
            assert pieces == tokenizer(word, add_special_tokens=False)["input_ids"] or pieces == [tokenizer.unk_token_id]
    config = ScoreConfig.from_fields(model=loaded.name_or_path, treebank=str(treebank), relations=RELATIONS, limit=limit, bootstrap=0)
    result = run_probe(config, loaded=loaded)
    assert result["treebank"]["sentences_scored"] == limit and result["treebank"]["skipped"]["too_long"] == 0
    for relation, entry in result["relations"].items():
        hand = sum(len(relation_pairs(relation, s)) for s in sentences)
        assert entry["total"] == hand and entry["reachable"] == {"dep_to_head": hand, "head_to_dep": hand}
        correct = torch.tensor([entry["heads"]["dep_to_head"], entry["heads"]["head_to_dep"]])
        assert correct.shape == (2, loaded.num_layers, loaded.num_heads)
        assert bool((correct <= hand).all()) and bool((correct >= 0).all())
        if hand:
            assert entry["best_reachable"] == entry["best"]
    assert result["relations"]["all"]["total"] > 400
