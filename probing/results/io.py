"""Result files: provenance blocks, and writing and reading them through the schema.

Every analysis result starts with the same blocks (probing.results.schema.blocks): what ran
(``tool``), on which weights (``model`` with its fingerprint), on what text
(``input`` with its sha256), with which options (``config``), where
(``environment``), how long (``timing``) and when (``created``). A result is
validated before it is written and whenever it is read, so a bad file is one
line that names the file and the field.

>>> from probing.results.schema import SCHEMA_VERSION
>>> tool_block()["name"], SCHEMA_VERSION
('probing', '3')
"""

from __future__ import annotations

import datetime as _dt
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from probing.atomic import result_of, write_json_atomic
from probing.errors import ProbingError
from probing.results.identity import model_identity as _identity_of_block
from probing.results.schema import SCHEMA_VERSION
from probing.results.schema.bounds import MAX_RESULT_BYTES, parse_json
from probing.results.schema.validation import validate
from probing.version import __version__

PACKAGES = ("torch", "transformers", "tokenizers", "numpy", "scikit-learn")
"""The packages whose versions every result records."""


def provenance(analysis: str, loaded, source, stats, config: dict) -> dict:
    """The common blocks of a result, from the live model, input and pass statistics."""
    return {
        "schema_version": SCHEMA_VERSION,
        "analysis": analysis,
        "tool": tool_block(),
        "model": model_block(loaded),
        "input": input_block(source, stats),
        "config": {**config, "max_length": stats.max_length},
        "environment": environment_block(),
        "timing": timing_block(stats),
        "created": now_iso(),
    }


def tool_block() -> dict:
    """The ``tool`` object of every file the tool writes."""
    return {"name": "probing", "version": __version__, "git_commit": git_commit()}


def model_block(loaded) -> dict:
    """The ``model`` object of a :class:`~probing.model.loading.LoadedModel`."""
    return {
        "name_or_path": loaded.name_or_path,
        "name": loaded.name,
        "revision": loaded.revision,
        "commit": loaded.commit,
        "fingerprint": loaded.fingerprint,
        "architecture": loaded.architecture,
        "num_layers": loaded.num_layers,
        "num_heads": loaded.num_heads,
        "dtype": loaded.dtype,
        "device": ",".join(loaded.spread_over) or loaded.device,
        "attention_path": loaded.attention_path,
        "is_causal": loaded.is_causal,
        "random_init": loaded.random_init,
        "stack": loaded.stack,
        "prepended_token": loaded.prepended_token,
        "tokenizer": loaded.tokenizer_facts(),
    }


def model_identity(loaded) -> dict:
    """What identifies a live model's weights and how they ran (probing.results.identity, from the model block)."""
    return _identity_of_block(model_block(loaded))


def input_block(source, stats) -> dict:
    """The ``input`` object: the file, its sha256, and what the pass read of it."""
    return {
        **source.describe(),
        "limit": source.limit,
        "units_total": stats.units_total,
        "units_used": stats.units_used,
        "words": stats.words,
        "skipped": {"too_long": stats.too_long},
        "unk_substituted_words": stats.unk_substituted_words,
        **apart_count(stats),
    }


def apart_count(stats) -> dict:
    """``{"tokenized_apart_words": n}`` when running text made n words share a piece with a neighbour, so that
    they were tokenized on their own (probing.model.alignment); nothing when none did."""
    count = getattr(stats, "tokenized_apart_words", 0)
    return {"tokenized_apart_words": count} if count else {}


def timing_block(stats) -> dict:
    seconds = round(stats.seconds_total, 3)
    return {
        "seconds_total": seconds,
        "seconds_model": round(stats.seconds_model, 3),
        "seconds_waiting_for_input": round(stats.seconds_waiting_for_input, 3),
        "units_per_second": round(stats.units_used / stats.seconds_total, 2) if stats.seconds_total else None,
    }


def environment_block(packages: tuple[str, ...] = PACKAGES) -> dict:
    """Python, platform and the versions of the packages that decide the numbers."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": {name: package_version(name) for name in packages},
    }


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def write_result(result: dict, path: str | Path, *, follow_symlinks: bool = False) -> Path:
    """Validate, then write JSON atomically: a complete new file replaces the old one, or nothing changes. An
    existing file there must be a result of the same analysis (probing.atomic.check_output_path), so that no
    command, whatever it checked before its run, replaces a treebank or a model's file with a result."""
    try:
        validate(result, source="result about to be written")
    except ProbingError as error:  # probing built this result from checked inputs: a bug, never the user's (exit 2)
        raise RuntimeError(f"probing built a result it cannot write ({error})") from None
    return write_json_atomic(result, path, follow_symlinks=follow_symlinks, replaces=result_of(result["analysis"]))


def read_result_text(path: Path) -> str:
    """The text of a result (or reference) file, refused in one line when it is too large or not UTF-8."""
    if path.stat().st_size > MAX_RESULT_BYTES:
        raise ProbingError(f"is larger than any result file ({MAX_RESULT_BYTES >> 30} GiB)", source=str(path))
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ProbingError("not a JSON result file (not UTF-8 text)", source=str(path)) from None


def read_result(path: str | Path, *, analysis: str | tuple[str, ...] | None = None) -> dict:
    """Load and validate a result file; ``analysis`` names the kind(s) the caller can use."""
    path = Path(path)
    if not path.exists():
        raise ProbingError("result file not found", source=str(path))
    if not path.is_file():
        raise ProbingError("is not a regular file", source=str(path))
    result = validate(parse_json(read_result_text(path), source=str(path)), source=str(path))
    wanted = (analysis,) if isinstance(analysis, str) else analysis
    if wanted and result["analysis"] not in wanted:
        raise ProbingError(
            f"is a result of {result['analysis']!r}, not of {' or '.join(repr(w) for w in wanted)}", source=str(path)
        )
    return result


def package_version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def git_commit() -> str | None:
    """The commit of the source checkout this package runs from, if any."""
    root = Path(__file__).resolve().parents[2]  # probing/results/io.py -> the checkout
    if not (root / ".git").exists():
        return None
    try:
        output = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return output.stdout.strip() or None
