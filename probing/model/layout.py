"""Where a model's attention is: the scored stack, its self-attention modules, and their layers.

Every reader of a model's inside (the early stop after the last attention,
norm-based attention, disabled heads, the shared prefix of ablation) finds
the modules here, by their structure, never by a family's name.

>>> from probing.model.loading import load_model
>>> from probing.testing import tiny_bert
>>> loaded = load_model(tiny_bert())
>>> [(name, layout.value) for name, _, layout in find_self_attentions(loaded)]
[('encoder.layer.0.attention', 'self.value'), ('encoder.layer.1.attention', 'self.value')]
>>> sorted(set(attention_layers(loaded.base, loaded.num_layers).values()))
[0, 1]
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from probing.errors import ProbingError


@dataclass(frozen=True)
class AttentionLayout:
    """Where one family's self-attention module keeps its value and output projections.

    ``value`` and ``output`` are submodule paths inside the attention module.
    ``fused`` marks a projection that computes queries, keys and values side
    by side (GPT-2's ``c_attn``); the values are its last third.
    """

    value: str
    output: str
    fused: bool = False


LAYOUTS: tuple[AttentionLayout, ...] = (
    AttentionLayout("self.value", "output.dense"),  # BERT, RoBERTa, XLM-R, ELECTRA (and MiniLM)
    AttentionLayout("self.value_proj", "output.dense"),  # DeBERTa-v2 and -v3
    AttentionLayout("v_lin", "out_lin"),  # DistilBERT
    AttentionLayout("value", "dense"),  # ALBERT: one attention module, shared by every layer
    AttentionLayout("v", "o"),  # MPNet, T5 (no biases)
    AttentionLayout("v_proj", "o_proj"),  # Llama, Mistral, Qwen2: grouped-query attention
    AttentionLayout("c_attn", "c_proj", fused=True),  # GPT-2: Conv1D, queries, keys and values fused
)
"""Tried in this order on every module of the scored stack; the first that fits wins and the
module's own submodules are not searched again. A new family is one line here."""

CROSS_ATTENTION_NAMES = frozenset({"EncDecAttention", "encoder_attn", "crossattention", "cross_attn"})
"""Module names of cross-attention (a decoder reading its encoder): never scored, never hooked."""


def scored_stack(loaded) -> torch.nn.Module:
    """The module that runs the scored self-attention stack (an encoder-decoder's encoder or decoder)."""
    base = loaded.base  # the transformer without a task head
    if loaded.is_encoder_decoder:
        return base.get_encoder() if loaded.stack == "encoder" else base.get_decoder()
    return base


def find_self_attentions(loaded) -> list[tuple[str, torch.nn.Module, AttentionLayout]]:
    """Every self-attention module of the scored stack, in module order, with its layout."""
    found: list[tuple[str, torch.nn.Module, AttentionLayout]] = []
    for name, module in scored_stack(loaded).named_modules():
        if found and name.startswith(found[-1][0] + "."):
            continue  # inside the attention just found (modules come depth first)
        if CROSS_ATTENTION_NAMES.intersection(name.split(".")):
            continue
        layout = next((layout for layout in LAYOUTS if _has(module, layout.value) and _has(module, layout.output)), None)
        if layout is not None:
            found.append((name, module, layout))
    return found


def _has(module: torch.nn.Module, path: str) -> bool:
    """Whether ``module`` has the submodule ``path`` (a walk of child dicts: get_submodule's
    exceptions would make attaching cost milliseconds)."""
    for part in path.split("."):
        module = module._modules.get(part)
        if module is None:
            return False
    return True


def recorded_attentions(loaded) -> tuple[tuple[torch.nn.Module, ...], int]:
    """The modules transformers itself records attentions from (``_can_record_outputs``) in the scored stack,
    and where their outputs hold the weights; no modules when the model declares none."""
    recorded = (getattr(loaded.base, "_can_record_outputs", None) or {}).get("attentions")
    target, index = getattr(recorded, "target_class", recorded), getattr(recorded, "index", 1)
    if not isinstance(target, type):
        return (), index
    modules = tuple(module for name, module in scored_stack(loaded).named_modules()
                    if isinstance(module, target) and not CROSS_ATTENTION_NAMES.intersection(name.split(".")))
    return modules, index


def attention_layers(model: torch.nn.Module, num_layers: int) -> dict[torch.nn.Module, int]:
    """Every module that may call the attention function, with its layer (from 0).

    transformers' attention modules carry their ``layer_idx``; a model whose
    modules do not is read by position in its list of ``num_layers`` layers.
    """
    found = {module: module.layer_idx for module in model.modules() if isinstance(getattr(module, "layer_idx", None), int)}
    if found:
        return found
    for module in model.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == num_layers:
            return {sub: index for index, layer in enumerate(module) for sub in layer.modules()}
    raise ProbingError(f"cannot find the {num_layers} attention layers of {type(model).__name__}", source="--model")


def text_config(model: torch.nn.Module):
    """The config of a model's text stack (a multimodal config keeps it apart)."""
    config = model.config
    return config.get_text_config() if hasattr(config, "get_text_config") else config
