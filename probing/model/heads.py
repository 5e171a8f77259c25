"""Task heads a model can be loaded with, and loading the weights (with a head's weights checked).

A task head (``masked_lm``, ``causal_lm``, ``sequence_classification``) must
come with trained weights: a head drawn at random would make every number
meaningless, so a checkpoint that lacks one is refused (or, where the head is
optional, loaded without it). Attention is always read from the base model
inside, so a head costs nothing in attention passes.

>>> HEADS.names()
['masked_lm', 'causal_lm', 'sequence_classification']
>>> HEADS["causal_lm"].auto_class
'AutoModelForCausalLM'
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from probing.model.hub import display_name
from probing.registry import Registry


@dataclass(frozen=True)
class TaskHead:
    """A task head ``load_model(head=...)`` can add: its Auto class and the weight names that make it."""

    auto_class: str
    weight_prefixes: tuple[str, ...]
    what: str


HEADS: Registry[TaskHead] = Registry("task head")
HEADS.register("masked_lm", TaskHead("AutoModelForMaskedLM", ("cls.", "lm_head", "predictions", "generator_"), "masked-LM"))
HEADS.register("causal_lm", TaskHead("AutoModelForCausalLM", ("lm_head",), "causal-LM"))
HEADS.register(
    "sequence_classification",
    TaskHead("AutoModelForSequenceClassification", ("classifier", "score"), "sequence-classification"),
)


LANGUAGE_MODEL = "lm"
"""``head="lm"``: the model's own language-model head, causal or masked, whichever it was trained with."""


def language_model_head(config) -> str:
    """``causal_lm`` for a decoder-only checkpoint, else ``masked_lm``."""
    names = " ".join(config.architectures or [])
    if "CausalLM" in names or "LMHeadModel" in names:
        return "causal_lm"
    if "MaskedLM" in names or getattr(config, "is_encoder_decoder", False):
        return "masked_lm"
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    return "masked_lm" if getattr(config, "model_type", "") in MODEL_FOR_MASKED_LM_MAPPING_NAMES else "causal_lm"


def model_class(config, task: TaskHead | None, trust_remote_code: bool):
    """The class to load: the task head's Auto class, an encoder-only class the config names
    (``T5EncoderModel``), or AutoModel."""
    import transformers

    if task is not None:
        return getattr(transformers, task.auto_class)
    for name in config.architectures or ():
        if name.endswith("EncoderModel") and hasattr(transformers, name):
            return getattr(transformers, name)
    return transformers.AutoModel


def load_weights(name_or_path: str, config, common: dict, dtype: torch.dtype, random_init: bool, seed: int,
                  task: TaskHead | None):
    """The model with eager attention; random weights for the control; a task head's weights checked."""
    from transformers.utils import logging as hf_logging

    cls = model_class(config, task, common["trust_remote_code"])
    if random_init:
        torch.manual_seed(seed)
        return cls.from_config(config, attn_implementation="eager", dtype=dtype, trust_remote_code=common["trust_remote_code"])
    verbosity = hf_logging.get_verbosity()
    # A checkpoint saved with a task head loads into the base model with "unexpected" head
    # weights: transformers' long report of those is noise; missing ones are handled below.
    hf_logging.set_verbosity_error()
    try:
        try:
            model, info = cls.from_pretrained(
                name_or_path, attn_implementation="eager", dtype=dtype, output_loading_info=True, **common
            )
        except (ValueError, TypeError) as error:
            if "attn_implementation" not in str(error) and "eager" not in str(error):
                raise
            # A model's own code may refuse to be told its attention implementation; the
            # load-time probe checks that it still returns weights.
            model, info = cls.from_pretrained(name_or_path, dtype=dtype, output_loading_info=True, **common)
    finally:
        hf_logging.set_verbosity(verbosity)
    missing = sorted(key for key in info.get("missing_keys", ()) if "pooler" not in key)
    if task is not None:
        untrained = [key for key in missing if any(part in key for part in task.weight_prefixes)]
        if untrained:
            raise MissingHead(
                f"{display_name(name_or_path)} has no trained {task.what} head: {len(untrained)} of its weights are "
                f"not in the checkpoint ({', '.join(untrained[:3])}{', ...' if len(untrained) > 3 else ''}). "
                "Sentence-embedding checkpoints such as all-MiniLM-L6-v2 keep only the encoder",
                model,
            )
        missing = [key for key in missing if key not in untrained]
    if missing:
        warnings.warn(
            f"{display_name(name_or_path)}: {len(missing)} weights are not in the checkpoint and were drawn at "
            f"random ({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''})",
            stacklevel=3,
        )
    return model


class MissingHead(Exception):
    """A checkpoint loaded into a task-head class lacks the head's weights (the base model is complete)."""

    def __init__(self, message: str, model):
        super().__init__(message)
        self.model = model


def folder_language_model(folder: str | Path) -> str | None:
    """``causal_lm`` or ``masked_lm`` for a local checkpoint folder, from its config.json alone (nothing loads, so
    a metric that needs the other kind is refused before any model time); None when the folder has no readable
    config.json (a hub id, a folder that does not exist: the loader reports those).

    >>> import json, tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "config.json").write_text(json.dumps({"architectures": ["BertModel"], "model_type": "bert"}))
    >>> folder_language_model(folder), folder_language_model(folder / "nowhere")
    ('masked_lm', None)
    """
    import json
    from types import SimpleNamespace

    try:
        config = json.loads((Path(folder).expanduser() / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict):
        return None
    return language_model_head(SimpleNamespace(architectures=config.get("architectures"),
                                               is_encoder_decoder=config.get("is_encoder_decoder", False),
                                               model_type=config.get("model_type", "")))


def folder_has_head(folder: str | Path, head: str) -> bool | None:
    """Whether a local folder's safetensors files hold weights of task head ``head`` (see :data:`HEADS`), read
    from their headers alone (a few KB); None when that cannot be told without loading (no safetensors file)."""
    import json
    import struct

    files = sorted(Path(folder).expanduser().glob("*.safetensors"))
    if not files:
        return None
    prefixes = HEADS[head].weight_prefixes
    for path in files:
        try:
            with path.open("rb") as stream:
                size = struct.unpack("<Q", stream.read(8))[0]
                names = json.loads(stream.read(min(size, 1 << 26)))
        except (OSError, ValueError, struct.error):
            return None
        if any(part in name for name in names for part in prefixes):
            return True
    return False
