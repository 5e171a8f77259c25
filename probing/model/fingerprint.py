"""What identifies a model's weights: resume, merge and held-out selection compare it.

>>> import tempfile
>>> from pathlib import Path
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "model.safetensors").write_bytes(b"weights")
>>> len(folder_digest(folder))
64
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from probing.errors import ProbingError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack")
READ_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
              "vocab.txt", "vocab.json", "merges.txt", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model")
"""Besides the weights, the files that decide how a folder's model reads text: two folders that differ in any
of them are different models, even with the same weights."""


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
