"""What identifies a model's weights, from their bytes: resume, merge and held-out selection compare it.

A folder's fingerprint is the sha256 of its weight files and of the files
that decide how it reads text (config and tokenizer), names and bytes, read
in full on every load. Nothing is remembered between runs: a digest cached
under a file's size and modification time would accept other weights copied
in with both kept (``cp -p``, ``rsync -t``, an archive extracted twice). The
price, measured on a 2-core development machine with the files in the page
cache: 0.43 s for all-mpnet-base-v2's 439 MB on an idle core (about 1 GB/s),
1.1 s while other jobs kept both cores busy, against about 5 s to load that
model. The bytes come from disk once either way: loading reads them right
after, from the page cache the hash filled.

A hub model is named by its commit, a model drawn at random by its recipe
(architecture config and seed).

>>> import tempfile
>>> from pathlib import Path
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "model.safetensors").write_bytes(b"weights")
>>> digest = folder_digest(folder)
>>> _ = (folder / "model.safetensors").write_bytes(b"Weights")  # the same size
>>> folder_digest(folder) == digest, len(digest)
(False, 64)
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from probing.errors import ProbingError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack")
READ_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
              "vocab.txt", "vocab.json", "merges.txt", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model")
"""Besides the weights, the files that decide how a folder's model reads text: two folders that differ in any
of them are different models, even with the same weights."""

BLOCK = 1 << 22
"""Bytes hashed per read (4 MiB): large enough that the per-call cost vanishes, small enough to keep no copy."""


def weights_fingerprint(name_or_path: str, config, *, local: bool, random_init: bool, seed: int) -> str:
    """What identifies the weights: ``sha256:`` of a folder's weight files, ``hub:`` commit, or the
    ``random-init:`` recipe (architecture config and seed)."""
    if random_init:
        recipe = json.dumps(architecture_of(config), sort_keys=True, default=str).encode()
        return f"random-init:seed={seed}:config={hashlib.sha256(recipe).hexdigest()[:16]}"
    if not local:
        commit = getattr(config, "_commit_hash", None)
        return f"hub:{name_or_path}@{commit}" if commit else f"hub:{name_or_path}"
    return "sha256:" + folder_digest(Path(name_or_path).expanduser())


NOT_ARCHITECTURE = ("transformers_version", "_name_or_path", "_commit_hash")
"""Fields of a config's dict that say which library wrote it or where it was read from, not what network it
describes: a random init's recipe leaves them out, or the same seed and architecture would name other weights
after a transformers release or from another folder."""


def architecture_of(config) -> dict:
    """A config's dict without :data:`NOT_ARCHITECTURE`.

    >>> from transformers import BertConfig
    >>> recipe = architecture_of(BertConfig(num_hidden_layers=2))
    >>> recipe["num_hidden_layers"], "transformers_version" in recipe
    (2, False)
    """
    return {key: value for key, value in config.to_dict().items() if key not in NOT_ARCHITECTURE}


def folder_digest(folder: Path) -> str:
    """sha256 over a checkpoint folder's weight, config and tokenizer files: each file's path inside the
    folder, then its bytes, in path order (so the same files in another folder give the same digest)."""
    weights = sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES))
    if not weights:
        raise ProbingError(f"{folder} holds no weight file ({', '.join(WEIGHT_SUFFIXES)})", source="--model")
    files = sorted(weights + [folder / name for name in READ_FILES if (folder / name).is_file()])
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with path.open("rb") as stream:
            for block in iter(lambda: stream.read(BLOCK), b""):
                digest.update(block)
    return digest.hexdigest()
