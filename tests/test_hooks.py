"""The one mechanism that changes a running model (probing/model/hooks.py) always gives the model back.

For every kind of change and for each of its clients (the early stop after
the last attention, value-norm capture, the shared prefix, disabled heads,
scoring mode), a block that ends by an error, by ``KeyboardInterrupt`` or by
a stray :class:`StopPass` leaves no hook, no replaced forward, the same
attention implementation in every config and the same training mode in every
module, and the next pass gives what a freshly loaded model gives, bit for
bit. Nested, the clients give the numbers each gives alone.
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from conftest import REPO
from helpers import tiny_model

from probing.engine.readings import READINGS, ValueNorms
from probing.errors import ProbingError
from probing.model.extraction import attention
from probing.model.hooks import (
    AttentionImplementation,
    EvalMode,
    ForwardHook,
    PreForwardHook,
    ReplacedForward,
    StopPass,
    hooked,
    scoring_mode,
    until_stopped,
)
from probing.model.interventions import eager_attention, uniform_heads
from probing.model.layout import find_self_attentions
from probing.model.loading import load_model
from probing.model.prefix import SharedPrefix
from probing.testing import tiny_bert

ENDINGS = {
    "error": RuntimeError("the body failed"),
    "interrupt": KeyboardInterrupt(),
    "stray stop": StopPass(),  # a stop raised where no until_stopped catches it
}


def model_state(model: torch.nn.Module) -> dict:
    """Everything a change could leave behind on a model."""
    modules = list(model.modules())
    configs = {id(module.config): module.config for module in modules if hasattr(module, "config")}
    return {
        "hooks": [(name, len(module._forward_hooks), len(module._forward_pre_hooks))
                  for name, module in model.named_modules() if module._forward_hooks or module._forward_pre_hooks],
        "global hooks": len(torch.nn.modules.module._global_forward_hooks)
        + len(torch.nn.modules.module._global_forward_pre_hooks),
        "forwards": [name for name, module in model.named_modules() if "forward" in module.__dict__],
        "implementations": [config._attn_implementation for config in configs.values()],
        "training": [module.training for module in modules],
    }


def batch(loaded) -> tuple[torch.Tensor, torch.Tensor]:
    input_ids = torch.tensor([[2, 10, 11, 12, 13, 3], [2, 14, 15, 3, 0, 0]])  # [batch, tok]
    return input_ids, (input_ids != 0).long()


def passes(loaded) -> tuple[torch.Tensor, torch.Tensor]:
    """The attention (through the early stop) and the whole model's last hidden state, for one batch."""
    input_ids, attention_mask = batch(loaded)
    with torch.inference_mode():
        hidden = loaded.base(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    return attention(loaded, input_ids, attention_mask), hidden


def assert_as_fresh(loaded, before: dict) -> None:
    assert model_state(loaded.model) == before
    fresh = load_model(tiny_bert())
    for mine, theirs in zip(passes(loaded), passes(fresh)):
        assert torch.equal(mine, theirs)


def eager_copy(module, query, key, value, attention_mask, **kwargs):
    return eager_attention(module)(module, query, key, value, attention_mask, **kwargs)


CHANGES = {
    "forward hook": lambda loaded: ForwardHook(find_self_attentions(loaded)[0][1], lambda *args: None),
    "pre-forward hook": lambda loaded: PreForwardHook(loaded.base, lambda *args: None),
    "replaced forward": lambda loaded: ReplacedForward(loaded.base.encoder.layer[0], loaded.base.encoder.layer[0].forward),
    "attention function": lambda loaded: AttentionImplementation(loaded.base, "probing_test_copy", eager_copy),
    "eval mode": lambda loaded: EvalMode(loaded.base),
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
@pytest.mark.parametrize("kind", sorted(CHANGES))
def test_every_kind_of_change_is_undone_however_the_block_ends(kind, ending):
    loaded = load_model(tiny_bert())
    before = model_state(loaded.model)
    with pytest.raises(type(ENDINGS[ending])):
        with hooked(CHANGES[kind](loaded)):
            assert model_state(loaded.model) != before or kind == "eval mode"  # the change is made
            passes(loaded)  # and runs
            raise ENDINGS[ending]
    assert_as_fresh(loaded, before)


def test_training_modes_come_back_module_by_module():
    """A model in training with a frozen part in eval gets both back (model.train() would not)."""
    loaded = load_model(tiny_bert())
    loaded.base.train()
    loaded.base.embeddings.eval()
    before = model_state(loaded.model)
    with pytest.raises(KeyboardInterrupt), hooked(EvalMode(loaded.base)):
        assert not any(module.training for module in loaded.base.modules())
        raise KeyboardInterrupt
    assert model_state(loaded.model) == before
    assert loaded.base.encoder.training and not loaded.base.embeddings.training


def test_a_change_that_cannot_be_made_undoes_those_made_before_it():
    loaded = load_model(tiny_model("mpnet"))  # computes attention outside transformers' AttentionInterface
    before = model_state(loaded.model)
    hook = ForwardHook(find_self_attentions(loaded)[0][1], lambda *args: None)
    with pytest.raises(ProbingError, match="AttentionInterface"):
        with hooked(hook, ReplacedForward(loaded.base.encoder.layer[0], lambda *args: None),
                    AttentionImplementation(loaded.base, "probing_test_copy", eager_copy)):
            pass
    assert model_state(loaded.model) == before


def test_blocks_nest_and_unwind_inner_first():
    layer = torch.nn.Linear(2, 2)
    outer, inner = (lambda *args: torch.zeros(1)), (lambda *args: torch.ones(1))
    with hooked(ReplacedForward(layer, outer)):
        with hooked(ReplacedForward(layer, inner)):
            assert layer(torch.ones(2)).item() == 1
        assert layer(torch.ones(2)).item() == 0
    assert "forward" not in layer.__dict__ and layer(torch.ones(2)).shape == (2,)


def test_a_finished_attention_function_is_no_longer_reachable():
    """After its block, the registered function is replaced by one that says the block is over, so a
    model left switched to it fails loudly and no closure (a mask, a layer map) stays alive."""
    from transformers import AttentionInterface

    loaded = load_model(tiny_bert())
    with hooked(AttentionImplementation(loaded.base, "probing_test_finished", eager_copy)):
        assert AttentionInterface()["probing_test_finished"] is eager_copy
    with pytest.raises(RuntimeError, match="after the block"):
        AttentionInterface()["probing_test_finished"](None)


def test_until_stopped_ends_a_pass_at_the_stop_and_only_there():
    layer = torch.nn.Linear(2, 2)

    def stop(module, args, output):
        raise StopPass

    with hooked(ForwardHook(layer, stop)):
        assert until_stopped(lambda: layer(torch.ones(2))) is None
    assert until_stopped(lambda: layer(torch.ones(2))).shape == (2,)


# ---------------------------------------------------------------------------- the clients


def interrupted_tapped_pass(loaded):
    """KeyboardInterrupt from inside a pass that stops after the last attention (its hooks must go too)."""
    value = find_self_attentions(loaded)[0][1].self.value

    def interrupt(module, args, output):
        raise KeyboardInterrupt

    assert loaded.attention_tap is not None
    with hooked(ForwardHook(value, interrupt)):
        attention(loaded, *batch(loaded))


def interrupted_norms(loaded):
    with ValueNorms(loaded):
        attention(loaded, *batch(loaded))
        raise KeyboardInterrupt


def interrupted_reuse(loaded):
    prefix = SharedPrefix.find(loaded)
    input_ids, attention_mask = batch(loaded)
    with prefix.recording():
        loaded.base(input_ids=input_ids, attention_mask=attention_mask)
    with prefix.reusing(first_layer=1, copies=2):
        loaded.base(input_ids=input_ids.repeat(2, 1), attention_mask=attention_mask.repeat(2, 1))
        raise KeyboardInterrupt


def interrupted_disabled_heads(loaded):
    with uniform_heads(loaded.base, {(0, 1), (1, 2)}):
        attention(loaded, *batch(loaded))
        raise KeyboardInterrupt


def interrupted_scoring_mode(loaded):
    loaded.base.set_attn_implementation("sdpa")
    loaded.base.train()
    try:
        with scoring_mode(loaded.base):
            attention(loaded, *batch(loaded))
            raise KeyboardInterrupt
    finally:
        assert loaded.base.training and loaded.base.config._attn_implementation == "sdpa"
        loaded.base.set_attn_implementation("eager")
        loaded.base.eval()


CLIENTS = {
    "stop after the last attention": interrupted_tapped_pass,
    "value norms": interrupted_norms,
    "shared prefix": interrupted_reuse,
    "disabled heads": interrupted_disabled_heads,
    "scoring mode": interrupted_scoring_mode,
}


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_every_client_gives_the_model_back_after_an_interrupt(client):
    loaded = load_model(tiny_bert())
    before = model_state(loaded.model)
    with pytest.raises(KeyboardInterrupt):
        CLIENTS[client](loaded)
    assert_as_fresh(loaded, before)


def test_stop_early_norms_and_disabled_heads_in_one_pass_give_what_each_gives_alone():
    loaded = load_model(tiny_bert())
    input_ids, attention_mask = batch(loaded)
    heads = {(0, 1), (1, 2)}
    reading = READINGS["norms"]
    # all three at once: the early stop (the load-time tap), the value-norm hooks, the attention override
    with uniform_heads(loaded.base, heads) as intervention:
        nested = reading.read(loaded, SimpleNamespace(input_ids=input_ids, attention_mask=attention_mask))
    intervention.verify()
    # each alone: the whole model (no early stop) with the heads disabled, and the norms of that pass
    tap, loaded.attention_tap = loaded.attention_tap, None
    with uniform_heads(loaded.base, heads), ValueNorms(loaded) as capture:
        weights = attention(loaded, input_ids, attention_mask)  # [batch, layer, head, query, key]
        norms = capture.take()  # [batch, layer, head, key]
    loaded.attention_tap = tap
    assert torch.equal(nested, weights * norms.unsqueeze(-2))
    intact = attention(loaded, input_ids, attention_mask)
    real = attention_mask.bool()
    uniform = (real[:, None, :] & real[:, :, None]).float() / real.sum(dim=1)[:, None, None]  # [batch, query, key]
    torch.testing.assert_close(weights[:, 0, 1] * real[:, :, None], uniform)
    assert torch.equal(weights[:, 0, 0], intact[:, 0, 0])  # a head left alone keeps its weights bit for bit
    assert not torch.equal(weights[:, 1, 0], intact[:, 1, 0])  # the layer above reads a changed input
    assert model_state(loaded.model) == model_state(load_model(tiny_bert()).model)


# ---------------------------------------------------------------------------- the house rules


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_model_layer_never_imports_the_engine():
    offenders = {path.name: sorted(name for name in imports_of(path) if name.startswith("probing.engine"))
                 for path in (REPO / "probing" / "model").glob("*.py")}
    assert {name: found for name, found in offenders.items() if found} == {}


CHANGING_CALLS = ("register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
                  "set_attn_implementation", "_attn_implementation")


def test_only_the_hooks_module_changes_a_running_model():
    """No other module of the package registers a hook, assigns a forward or switches the attention
    implementation (reading ``config._attn_implementation`` is fine; assigning it is not)."""
    found = []
    for path in (REPO / "probing").rglob("*.py"):
        if path == REPO / "probing" / "model" / "hooks.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CHANGING_CALLS
            assigned = isinstance(node, (ast.Assign, ast.AugAssign)) and any(
                isinstance(target, ast.Attribute) and target.attr in ("forward", "_attn_implementation")
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target]))
            if called or assigned:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []
