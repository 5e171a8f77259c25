"""The one model loader: a checkpoint, its tokenizer, and the facts every result records.

``load_model`` reads the weights once, with eager attention (the fused SDPA
and flash kernels never materialise the attention matrix), in eval mode.
``head`` asks for a task head as well: ``"masked_lm"``, ``"causal_lm"`` or
``"sequence_classification"``; the head's weights must be in the checkpoint
(a head drawn at random would make every number meaningless). Attention is
always read from the base model inside, so a task head costs nothing in
attention passes.

What differs between model families is settled here, once, at load time and
from the model itself (docs/families.md has the table):

- which self-attention is scored (``stack``): the only one of an encoder or
  a decoder-only model; the encoder of an encoder-decoder model, or its
  decoder with ``stack="decoder"``; a checkpoint whose config names an
  encoder-only class (``T5EncoderModel``) loads as that class;
- whether that stack is causal: measured on a short probe sentence (no
  attention above the diagonal in any head), not guessed from a name;
- the attention sink of a causal stack: when the tokenizer puts no special
  token first, its BOS token is prepended as a pseudo-word;
- byte-level BPE tokenizers get ``add_prefix_space=True`` (only they, only
  when they lack it), so each pre-split word is tokenised as in running text.

Every loaded model carries a ``fingerprint`` of its weights (sha256 of the
weight files, the hub commit, or the random-init recipe; probing.model.fingerprint):
resume, merge and held-out selection refuse to combine numbers of different
weights, even when two folders share a name.

The seams are modules of their own: where the files are (``hub``), task heads
and the weights loaded with them (``heads``), tokenizers (``tokenizers``), the
fingerprint, and the one mechanism that changes a running model (``hooks``).

>>> from probing.testing import tiny_bert
>>> loaded = load_model(tiny_bert())
>>> loaded.num_layers, loaded.num_heads, loaded.stack, loaded.is_causal, loaded.fingerprint[:7]
(2, 4, 'encoder', False, 'sha256:')
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cached_property

import torch

from probing.errors import ProbingError
from probing.model.alignment import SPECIAL, align_words, alignment_method
from probing.model.choices import DEVICE_MAPS, DTYPE_NAMES, STACKS
from probing.model.extraction import PROBE_WORDS, read_shape_and_causality
from probing.model.fingerprint import weights_fingerprint
from probing.model.heads import HEADS, LANGUAGE_MODEL, MissingHead, language_model_head, load_weights
from probing.model.hooks import scoring_mode, use_eager_attention
from probing.model.hub import check_location, default_model_path, display_name, explained_load_errors
from probing.model.tokenizers import (
    lacks_prefix_space,
    load_tokenizer,
    prefix_space_rule,
    prepend_space_to_words,
    quiet_about_long_inputs,
)

DTYPES = {name: getattr(torch, name) for name in DTYPE_NAMES}

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
"""The name tables and plots give the packaged default (the same weights from a folder get the folder's name)."""


@dataclass
class LoadedModel:
    """A model ready for attention passes, with the facts a result file records.

    ``model`` is what was loaded (with its task head, if one was asked for);
    ``base`` is the transformer inside it that attention passes run.
    ``prepend_token_id`` is the attention-sink token put before every unit
    (None when the tokenizer's own first special token plays that part).
    """

    model: torch.nn.Module
    tokenizer: object
    name_or_path: str
    name: str
    revision: str | None
    commit: str | None
    fingerprint: str
    architecture: str
    num_layers: int = 0
    num_heads: int = 0
    dtype: str = "float32"
    device: str = "cpu"
    is_causal: bool = False
    random_init: bool = False
    stack: str = "encoder"
    prepend_token_id: int | None = None
    is_encoder_decoder: bool = False
    head: str | None = None
    position_limit: int | None = None
    extra: dict = field(default_factory=dict)
    attention_tap: object = None
    """Where a pass can take each layer's weights and stop once the last layer's are made
    (probing.model.extraction.AttentionTap, decided at load); None: every pass runs the whole model."""
    attention_path: str = "returned"
    """How attention is read: a key of probing.model.extraction.ATTENTION_PATHS (settled at load time)."""
    spread_over: tuple[str, ...] = ()
    """The devices a model loaded with a device map spans, in layer order (``device`` is the first, where inputs
    go); empty when the whole model is on ``device``."""
    trust_remote_code: bool = False
    """Whether the checkpoint's own code was trusted at load; a later read of its files (the plain tokenizer of
    probing.model.tokenizers) trusts it exactly as far."""

    @property
    def base(self) -> torch.nn.Module:
        """The transformer without its task head (what attention passes run)."""
        return getattr(self.model, "base_model", self.model)

    @cached_property
    def producer_tokenizer(self) -> object:
        """A copy of the tokenizer for the thread that batches ahead of the model.

        A fast tokenizer changes its own padding and truncation settings while
        it encodes, and accumulators may decode with :attr:`tokenizer`
        meanwhile. One copy per loaded model serves every pass in turn (a
        pass's batching thread ends with the pass); copying costs about 0.1 s.
        """
        return copy.deepcopy(self.tokenizer)

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

    @classmethod
    def from_live(cls, model: torch.nn.Module, tokenizer, *, name: str | None = None, step: int | None = None,
                  stack: str | None = None) -> "LoadedModel":
        """A model already in memory (one being trained), ready for attention passes; nothing is read
        from disk and the model is not copied.

        The load-time probe runs as for :func:`load_model` (layers, heads,
        causality, sink token), inside :func:`scoring_mode`; passes over the
        result must run inside ``scoring_mode(model)`` as well, since only
        eager attention returns the weights. The ``fingerprint`` is
        ``live:NAME@STEP``: it names a training run's state, not the bytes of
        its weights. A byte-level BPE tokenizer without a space before each
        word gets one on a copy, never on the tokenizer given.

        >>> from transformers import AutoModelForMaskedLM, AutoTokenizer
        >>> from probing.testing import tiny_bert
        >>> model = AutoModelForMaskedLM.from_pretrained(tiny_bert(), attn_implementation="sdpa").train()
        >>> loaded = LoadedModel.from_live(model, AutoTokenizer.from_pretrained(tiny_bert()), name="tiny", step=3)
        >>> loaded.num_layers, loaded.num_heads, loaded.fingerprint, model.training, model.config._attn_implementation
        (2, 4, 'live:tiny@3', True, 'sdpa')
        """
        if stack is not None and stack not in STACKS:
            raise ProbingError(f"unknown stack {stack!r}; use one of {', '.join(STACKS)}", source="stack")
        if not getattr(tokenizer, "is_fast", False) and not callable(getattr(tokenizer, "tokenize", None)):
            raise ProbingError(f"{type(tokenizer).__name__} is not a tokenizer; give the model's tokenizer",
                               source="tokenizer")
        if lacks_prefix_space(tokenizer):
            tokenizer = copy.deepcopy(tokenizer)
            prepend_space_to_words(tokenizer)
        quiet_about_long_inputs(tokenizer)
        config = model.config
        name = name or getattr(model, "name_or_path", None) or getattr(config, "name_or_path", None) or type(model).__name__
        parameter = next(model.parameters())
        is_encoder_decoder = bool(getattr(config, "is_encoder_decoder", False)) and not type(model).__name__.endswith(
            "EncoderModel")
        loaded = cls(
            model=model,
            tokenizer=tokenizer,
            name_or_path=str(name),
            name=display_name(str(name)),
            revision=None,
            commit=None,
            fingerprint=f"live:{name}" + ("" if step is None else f"@{step}"),
            architecture=type(model).__name__,
            dtype=next((key for key, value in DTYPES.items() if value == parameter.dtype), str(parameter.dtype)),
            device=str(parameter.device),
            stack=(stack or "encoder") if is_encoder_decoder else "encoder",
            is_encoder_decoder=is_encoder_decoder,
            position_limit=_position_limit(config),
        )
        with scoring_mode(model):
            return _probed(loaded, stack, trust_remote_code=True)

    def max_length(self, requested: int | None = None) -> int:
        """The longest unit (special tokens included) a pass may give this model; checked against
        what its position embeddings allow, so a run never crashes on a long sentence midway."""
        if requested is not None:
            if requested < 2:
                raise ProbingError(f"must be at least 2, got {requested}", source="--max-length")
            if self.position_limit is not None and requested > self.position_limit:
                raise ProbingError(
                    f"{requested} is more than {self.name} can read ({self.position_limit} tokens)", source="--max-length"
                )
            return requested
        limit = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(limit, int) and 0 < limit < 1_000_000:
            return limit if self.position_limit is None else min(limit, self.position_limit)
        if self.position_limit is None:
            raise ProbingError(f"{self.name} states no maximum length; pass one", source="--max-length")
        return self.position_limit


def load_model(
    name_or_path: str | None = None,
    *,
    revision: str | None = None,
    device: str = "cpu",
    dtype: str = "float32",
    random_init: bool = False,
    seed: int = 0,
    trust_remote_code: bool = False,
    stack: str | None = None,
    head: str | None = None,
    head_optional: bool = False,
    device_map: str | None = None,
) -> LoadedModel:
    """Load tokenizer and model (eager attention, eval mode) from the hub or a folder.

    ``name_or_path`` None is the packaged all-MiniLM-L6-v2. ``random_init``
    keeps the architecture and tokenizer but draws the weights afresh from
    ``seed``: the untrained control. ``stack`` picks the self-attention of an
    encoder-decoder model (default: its encoder). ``head`` adds a trained task
    head (see :data:`HEADS`; ``"lm"`` is the model's own LM head, causal or
    masked). With ``head_optional``, a checkpoint without that head's weights
    loads anyway with ``head`` None (its base model is complete), and
    ``extra["no_head"]`` says why. ``device_map="auto"`` lets accelerate
    spread the layers over every visible GPU (then the CPU) in this one
    process, in place of ``device``: inputs go to the device of the first
    module, and each layer's attention stays where the layer ran.
    """
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    packaged = name_or_path is None
    name_or_path = default_model_path() if packaged else str(name_or_path)
    _check_load_options(dtype=dtype, stack=stack, head=head, device=device, device_map=device_map,
                        random_init=random_init)
    local = check_location(name_or_path, revision)
    common = {"revision": revision, "trust_remote_code": trust_remote_code}
    placement = {"device_map": device_map} if device_map else {}
    config, tokenizer, model, head, no_head = _read_checkpoint(
        name_or_path, common, dtype=dtype, random_init=random_init, seed=seed, head=head, head_optional=head_optional,
        placement=placement)
    use_eager_attention(model)
    model.eval()
    spread_over = placed_devices(model) if device_map else ()
    if device_map:
        device = spread_over[0]
    else:
        model.to(device)
    # an encoder-only class of an encoder-decoder family (T5EncoderModel) has no decoder to run
    is_encoder_decoder = bool(getattr(config, "is_encoder_decoder", False)) and not type(model).__name__.endswith(
        "EncoderModel")
    loaded = LoadedModel(
        model=model,
        tokenizer=tokenizer,
        name_or_path=name_or_path,
        name=DEFAULT_MODEL_NAME if packaged else display_name(name_or_path),
        revision=revision,
        commit=getattr(config, "_commit_hash", None) if not local else None,
        fingerprint=weights_fingerprint(name_or_path, config, local=local, random_init=random_init, seed=seed),
        architecture=(config.architectures or [type(model).__name__])[0] if head is None else type(model).__name__,
        dtype=dtype,
        device=device,
        random_init=random_init,
        stack=(stack or "encoder") if is_encoder_decoder else "encoder",
        is_encoder_decoder=is_encoder_decoder,
        head=head,
        position_limit=_position_limit(config),
        spread_over=spread_over if len(spread_over) > 1 else (),
        trust_remote_code=trust_remote_code,
    )
    if no_head:
        loaded.extra["no_head"] = no_head
    return _probed(loaded, stack, trust_remote_code)


def _check_load_options(*, dtype: str, stack: str | None, head: str | None, device: str, device_map: str | None,
                        random_init: bool) -> None:
    """The options of a load that need no file: refused before any file is read."""
    if dtype not in DTYPES:
        raise ProbingError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}", source="--dtype")
    if stack is not None and stack not in STACKS:
        raise ProbingError(f"unknown stack {stack!r}; use one of {', '.join(STACKS)}", source="--stack")
    if head is not None and head != LANGUAGE_MODEL:
        HEADS[head]  # an unknown head is the registry's one-line error
    check_device_map(device_map, device=device, random_init=random_init)  # before --device: it replaces it
    check_device(device)


def read_config(name_or_path: str, *, revision: str | None = None, trust_remote_code: bool = False):
    """A checkpoint's config alone (no tokenizer, no weights), any failure one line naming the model: what
    every checkpoint of a training run's folder is checked with before the first is scored."""
    from transformers import AutoConfig

    with explained_load_errors(name_or_path):
        return AutoConfig.from_pretrained(name_or_path, revision=revision, trust_remote_code=trust_remote_code)


def _read_checkpoint(name_or_path: str, common: dict, *, dtype: str, random_init: bool, seed: int, head: str | None,
                     head_optional: bool, placement: dict):
    """(config, tokenizer, model, head, why there is no head): the head ``"lm"`` resolved to the checkpoint's own,
    and with ``head_optional`` a checkpoint without the head's weights read without it (head None). ``placement``
    is ``{"device_map": ...}`` for accelerate's dispatch over several devices, else empty."""
    with explained_load_errors(name_or_path):
        config = read_config(name_or_path, **common)
        if head == LANGUAGE_MODEL:
            head = language_model_head(config)
        task = HEADS[head] if head is not None else None
        tokenizer = load_tokenizer(name_or_path, common)
        try:
            model = load_weights(name_or_path, config, {**common, **placement}, DTYPES[dtype], random_init, seed, task)
        except MissingHead as missing:
            if not head_optional:
                raise ProbingError(str(missing), source="--model") from None
            return config, tokenizer, missing.model, None, str(missing)
    return config, tokenizer, model, head, None


def _probed(loaded: LoadedModel, stack: str | None, trust_remote_code: bool) -> LoadedModel:
    """The load-time probe of every model, from disk or live: layers, heads, whether the scored
    stack is causal, and the sink token a causal stack gets."""
    if loaded.is_encoder_decoder and loaded.stack == "decoder":
        loaded.prepend_token_id = _decoder_start(loaded.model.config)
    read_shape_and_causality(loaded, trust_remote_code)
    if not loaded.is_encoder_decoder:
        loaded.stack = "decoder" if loaded.is_causal else "encoder"
        if stack is not None and stack != loaded.stack:
            kind = "causal decoder" if loaded.is_causal else "bidirectional encoder"
            raise ProbingError(
                f"{loaded.name} has a single self-attention stack, a {kind}; --stack chooses between the two "
                "stacks of an encoder-decoder model",
                source="--stack",
            )
        if loaded.is_causal:
            loaded.prepend_token_id = _sink_token(loaded.tokenizer, loaded.model.config)
    return loaded


def check_device(device: str) -> None:
    """cpu, cuda[:N] or mps, and only where it is present."""
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError):
        raise ProbingError(f"not a device: {device!r} (use cpu, cuda or cuda:N)", source="--device") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ProbingError("CUDA was asked for but no GPU is visible", source="--device")
    if parsed.type == "mps" and not torch.backends.mps.is_available():
        raise ProbingError("mps was asked for but this machine has no Apple GPU", source="--device")
    if parsed.type not in ("cpu", "cuda", "mps"):
        raise ProbingError(f"cannot run on {parsed.type!r} (use cpu, cuda or cuda:N)", source="--device")
    if parsed.type in ("cpu", "mps") and parsed.index not in (None, 0):  # torch accepts cpu:9 and runs on the CPU
        raise ProbingError(f"there is one {parsed.type} device; give {parsed.type}, not {device}", source="--device")
    if parsed.type == "cuda" and parsed.index is not None and parsed.index >= torch.cuda.device_count():
        raise ProbingError(f"{device} does not exist: {torch.cuda.device_count()} GPU(s) visible, from cuda:0",
                           source="--device")


def check_device_map(device_map: str | None, *, device: str, random_init: bool) -> None:
    """A device map is one of :data:`DEVICE_MAPS`, needs accelerate, and replaces ``--device``."""
    if device_map is None:
        return
    if device_map not in DEVICE_MAPS:
        raise ProbingError(f"unknown device map {device_map!r}; use {', '.join(DEVICE_MAPS)}", source="--device-map")
    if device != "cpu":
        raise ProbingError(f"places the model itself; leave out --device {device}", source="--device-map")
    if random_init:
        raise ProbingError("spreads a checkpoint's weights as they load; --random-init draws them instead",
                           source="--device-map")
    try:
        import accelerate  # noqa: F401  (from_pretrained dispatches through it)
    except ImportError:
        raise ProbingError("needs the accelerate package: pip install accelerate (from a clone: pip install -e '.[multi-gpu]')",
                          source="--device-map") from None


def placed_devices(model: torch.nn.Module) -> tuple[str, ...]:
    """The devices accelerate put the model on, the input embeddings' first (inputs go there), then in the
    order the device map lists its modules; "disk" and "meta" offload is refused (attention passes would crawl).

    >>> placed_devices(torch.nn.Embedding(3, 2))
    ('cpu',)
    """
    placement = getattr(model, "hf_device_map", None) or {}
    if any(where in ("disk", "meta") for where in placement.values()):
        raise ProbingError("the model does not fit in GPU and CPU memory together (accelerate would offload layers "
                           "to disk)", source="--device-map")
    found = [str(torch.device(_as_device(where))) for where in placement.values()]
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    first = str(next((embeddings or model).parameters()).device)
    return tuple(dict.fromkeys([first, *found]))


def _as_device(where) -> str:
    """A device map's entry (an int GPU index, "cpu", "cuda:1", "disk") as a device name."""
    return f"cuda:{where}" if isinstance(where, int) else str(where)


def _position_limit(config) -> int | None:
    """Longest input the position embeddings allow (RoBERTa-style models reserve pad_token_id + 1);
    None for relative positions (T5) or when the config states none."""
    positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if not isinstance(positions, int):
        return None
    if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert", "mpnet"):
        positions -= (getattr(config, "pad_token_id", 1) or 1) + 1
    return positions


def _sink_token(tokenizer, config) -> int | None:
    """The token put before every unit of a causal stack, or None.

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


def _decoder_start(config) -> int:
    start = getattr(config, "decoder_start_token_id", None)
    if start is None:
        start = getattr(getattr(config, "get_text_config", lambda **_: config)(decoder=True), "decoder_start_token_id", None)
    if not isinstance(start, int):
        raise ProbingError("the model states no decoder_start_token_id to start its decoder with", source="--stack")
    return start
