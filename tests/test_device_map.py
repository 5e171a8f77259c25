"""``--device-map auto``: one model spread over the GPUs of one process by accelerate (docs/scaling.md).

This machine has no GPU, so what is tested here is what a CPU allows: the
option reaches from_pretrained and accelerate's dispatch, the counts are
those of a plain load, the devices a spread model spans are read in the
order inputs need them, and every combination that cannot work is one line
with exit status 2. That layers on two GPUs give the same counts is left to
a machine that has two.
"""

from __future__ import annotations

import json

import pytest
import torch
from helpers import split_treebank_path, tiny_model
from test_cli import assert_one_line_error

from probing.cli import main
from probing.engine.distributed import Ranks
from probing.errors import ProbingError
from probing.model.loading import load_model, placed_devices


@pytest.mark.parametrize("family", ["bert", "llama"])
def test_a_device_map_gives_the_counts_of_a_plain_load(family, tmp_path, capsys):
    pytest.importorskip("accelerate", reason="the multi-gpu extra is not installed")
    common = ["score", "--model", tiny_model(family), "--treebank", str(split_treebank_path()), "--bootstrap", "20",
              "--quiet"]
    assert main([*common, "--output", str(tmp_path / "plain.json")]) == 0
    assert main([*common, "--device-map", "auto", "--output", str(tmp_path / "spread.json")]) == 0
    capsys.readouterr()
    plain, spread = (json.loads((tmp_path / name).read_text()) for name in ("plain.json", "spread.json"))
    assert spread["relations"] == plain["relations"]  # every count and bootstrap replicate
    assert spread["model"]["device"] == "cpu"  # a CPU-only machine: accelerate keeps it all on the CPU


def test_the_loader_hands_the_device_map_to_from_pretrained(monkeypatch):
    from transformers import BertForMaskedLM

    seen = {}
    original = BertForMaskedLM.from_pretrained.__func__

    def spy(cls, *args, **kwargs):
        seen.update(kwargs)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(BertForMaskedLM, "from_pretrained", classmethod(spy))
    loaded = load_model(tiny_model("bert"), device_map="auto", head="masked_lm")
    assert seen.get("device_map") == "auto"
    assert loaded.device == "cpu" and loaded.spread_over == ()


def test_a_spread_model_lists_its_devices_inputs_first():
    model = torch.nn.Module()
    model.embeddings = torch.nn.Embedding(4, 2)
    model.get_input_embeddings = lambda: model.embeddings
    model.hf_device_map = {"embeddings": "cpu", "encoder.layer.0": 0, "encoder.layer.1": 1, "pooler": 1}
    assert placed_devices(model) == ("cpu", "cuda:0", "cuda:1")
    model.hf_device_map["encoder.layer.1"] = "disk"
    with pytest.raises(ProbingError, match="offload layers to disk"):
        placed_devices(model)


@pytest.mark.parametrize("extra, fragment", [
    (["--device-map", "auto", "--device", "cuda"], "leave out --device"),
    (["--device-map", "auto", "--random-init"], "--random-init draws them"),
    (["--device-map", "everywhere"], "invalid choice"),
])
def test_a_device_map_that_cannot_work_is_one_line(extra, fragment, tmp_path, capsys):
    code = main(["score", "--model", tiny_model("bert"), "--treebank", str(split_treebank_path()), *extra,
                 "--output", str(tmp_path / "r.json")])
    captured = capsys.readouterr()
    assert_one_line_error(code, captured.out, captured.err, fragment)
    assert list(tmp_path.iterdir()) == []


def test_a_device_map_under_torchrun_is_refused():
    from argparse import Namespace

    from probing.commands.common import device_map_of

    assert device_map_of(Namespace(device_map="auto"), Ranks()) == "auto"
    with pytest.raises(ProbingError, match="under torchrun") as refused:
        device_map_of(Namespace(device_map="auto"), Ranks(rank=0, world_size=2))
    assert refused.value.source == "--device-map"
