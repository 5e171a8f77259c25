"""Counts -> versioned JSON with provenance (spec/results.md), and back.

A result file is the only thing leaderboards, plots and merges read. Counts
are stored, not only accuracies, so parts merge by addition and anyone can
re-check a figure. Bootstrap replicate counts, which are large, are stored as
zlib-compressed little-endian int64 arrays in base64 beside their shape.

>>> best_head([[3, 9], [9, 1]], [[0, 9], [2, 2]], total=10)
{'layer': 0, 'head': 1, 'direction': 'dep_to_head', 'accuracy': 0.9}
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import platform
import subprocess
import zlib
from importlib import metadata
from pathlib import Path

import numpy as np
import torch

from . import __version__
from .atomic import write_json_atomic
from .errors import ProbingError
from .scoring.counts import BootstrapSpec, ProbeCounts
from .scoring.predictions import DIRECTIONS

SCHEMA_VERSION = "1"
_PACKAGES = ("torch", "transformers", "tokenizers", "conllu", "numpy")


def build_result(run) -> dict:
    """The JSON object of a finished :class:`~probing.pipeline.ProbeRun`."""
    counts, model, stats = run.counts, run.model, run.stats
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": tool_block(),
        "model": model_block(model),
        "treebank": {
            "path": str(run.treebank_path),
            "sha256": run.treebank_sha256,
            "sentences_total": stats.sentences_total,
            "sentences_scored": counts.sentences,
            "words_scored": counts.words,
            "skipped": {"too_long": stats.too_long},
            "unk_substituted_words": stats.unk_substituted_words,
        },
        "config": {
            **run.config.as_result_dict(),
            "max_length": run.max_length,
            # docs/families.md: the self-attention scored, and the sink token put before each sentence
            "attention": model.stack,
            "prepended_token": model.prepended_token,
        },
        "relations": relations_summary(counts),
        "bootstrap": encode_bootstrap(counts),
        "timing": {
            "seconds_total": round(stats.seconds_total, 3),
            "seconds_model": round(stats.seconds_model, 3),
            "sentences_per_second": round(counts.sentences / stats.seconds_total, 2) if stats.seconds_total else None,
        },
        "environment": {**environment_block(), "seed": run.config.seed},
        "created": now_iso(),
    }


def tool_block() -> dict:
    """The ``tool`` object of every file the tool writes."""
    return {"name": "probing", "version": __version__, "git_commit": git_commit()}


def model_block(model) -> dict:
    """The ``model`` object (spec/results.md) of a :class:`~probing.extraction.LoadedModel`."""
    return {
        "name_or_path": model.name_or_path,
        "revision": model.revision,
        "commit": model.commit,
        "architecture": model.architecture,
        "num_layers": model.num_layers,
        "num_heads": model.num_heads,
        "dtype": model.dtype,
        "device": model.device,
        "is_causal": model.is_causal,
        "random_init": model.random_init,
        "tokenizer": model.tokenizer_facts(),
    }


def environment_block(packages: tuple[str, ...] = _PACKAGES) -> dict:
    """Python, platform and the versions of the packages that decide the numbers."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": {name: package_version(name) for name in packages},
    }


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def relations_summary(counts: ProbeCounts) -> dict:
    """The ``relations`` object: counts, the best head and the best offset per relation."""
    summary = {}
    for r, name in enumerate(counts.relations):
        total = int(counts.total[r])
        heads = {direction: counts.heads[r, d].tolist() for d, direction in enumerate(DIRECTIONS)}
        baselines = {str(offset): int(counts.baselines[r, o]) for o, offset in enumerate(counts.offsets)}
        reachable = {direction: int(counts.reachable[r, d]) for d, direction in enumerate(DIRECTIONS)}
        summary[name] = {
            "total": total,
            "heads": heads,
            "baselines": baselines,
            "best": best_head(heads["dep_to_head"], heads["head_to_dep"], total),
            "best_baseline": best_baseline(baselines, total),
            "reachable": reachable,
            "best_reachable": best_reachable_head(heads, reachable),
        }
    return summary


def best_head(dep_to_head, head_to_dep, total: int) -> dict | None:
    """The most accurate (layer, head, direction); ties: lower layer, lower head,
    ``dep_to_head`` first. None when the relation has no pair."""
    if total == 0:
        return None
    stacked = np.stack([np.asarray(dep_to_head), np.asarray(head_to_dep)], axis=-1)  # [layer, head, direction]
    layer, head, direction = np.unravel_index(int(np.argmax(stacked)), stacked.shape)  # first maximum in that order
    return {
        "layer": int(layer),
        "head": int(head),
        "direction": DIRECTIONS[direction],
        "accuracy": float(stacked[layer, head, direction]) / total,
    }


def best_reachable_head(heads: dict, reachable: dict) -> dict | None:
    """The best (layer, head, direction) by accuracy over the pairs its direction can reach
    (docs/families.md); ties as in :func:`best_head`. None when no pair is reachable.

    >>> best_reachable_head({"dep_to_head": [[2, 4]], "head_to_dep": [[3, 1]]}, {"dep_to_head": 4, "head_to_dep": 3})
    {'layer': 0, 'head': 0, 'direction': 'head_to_dep', 'accuracy': 1.0}
    """
    denominators = np.array([reachable[direction] for direction in DIRECTIONS], dtype=float)
    if not denominators.any():
        return None
    correct = np.stack([np.asarray(heads[direction], dtype=float) for direction in DIRECTIONS], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        accuracy = np.where(denominators > 0, correct / denominators, -1.0)  # [layer, head, direction]
    layer, head, direction = np.unravel_index(int(np.argmax(accuracy)), accuracy.shape)
    return {
        "layer": int(layer),
        "head": int(head),
        "direction": DIRECTIONS[direction],
        "accuracy": float(accuracy[layer, head, direction]),
    }


def best_baseline(baselines: dict[str, int], total: int) -> dict | None:
    """The most accurate offset; ties go to the offset listed first."""
    if total == 0:
        return None
    offset = max(baselines, key=lambda key: (baselines[key], -list(baselines).index(key)))
    return {"offset": int(offset), "accuracy": baselines[offset] / total}


def encode_bootstrap(counts: ProbeCounts) -> dict | None:
    if counts.bootstrap is None:
        return None
    return {
        "replicates": counts.bootstrap.replicates,
        "seed": counts.bootstrap.seed,
        "method": "poisson",
        "encoding": "base64(zlib(int64 little-endian, C order))",
        "arrays": {name: _encode_array(getattr(counts, name)) for name in ("boot_total", "boot_heads", "boot_baselines")},
    }


def counts_from_result(result: dict) -> ProbeCounts:
    """Rebuild the running counts of a result file (for merges and bootstrap reports)."""
    model, relations = result["model"], result["relations"]
    boot = result.get("bootstrap")
    spec = BootstrapSpec(boot["replicates"], boot["seed"]) if boot else None
    counts = ProbeCounts(
        list(relations),
        model["num_layers"],
        model["num_heads"],
        offsets=result["config"]["offsets"],
        bootstrap=spec,
        causal=bool(model.get("is_causal", False)),
    )
    for r, name in enumerate(relations):
        entry = relations[name]
        counts.total[r] = entry["total"]
        for d, direction in enumerate(DIRECTIONS):
            counts.heads[r, d] = torch.tensor(entry["heads"][direction])
        counts.baselines[r] = torch.tensor([entry["baselines"][str(o)] for o in counts.offsets])
        if "reachable" not in entry:
            raise ProbingError(f"relation {name!r} has no reachable counts (written by an older probing); score again")
        counts.reachable[r] = torch.tensor([entry["reachable"][direction] for direction in DIRECTIONS])
    if boot:
        for name, encoded in boot["arrays"].items():
            getattr(counts, name).copy_(_decode_array(encoded))
    counts.sentences = result["treebank"]["sentences_scored"]
    counts.words = result["treebank"]["words_scored"]
    return counts


def write_result(result: dict, path: str | Path) -> Path:
    """Write JSON atomically: a complete new file replaces the old one, or nothing changes."""
    return write_json_atomic(result, path)


def read_result(path: str | Path) -> dict:
    """Load a result file, checking that it is one this version understands."""
    path = Path(path)
    if not path.is_file():
        raise ProbingError("result file not found", source=str(path))
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ProbingError(f"not a JSON result file ({error})", source=str(path)) from None
    if not isinstance(result, dict) or result.get("schema_version") != SCHEMA_VERSION:
        found = result.get("schema_version") if isinstance(result, dict) else None
        raise ProbingError(f"not a probing result of schema {SCHEMA_VERSION} (found {found!r})", source=str(path))
    return result


def _encode_array(tensor: torch.Tensor) -> dict:
    array = tensor.numpy().astype("<i8")
    # level 1: 7x faster than 6 on the 5.6 MiB replicate array of a 6 x 12 model, 7% larger (benchmarks/)
    return {"shape": list(array.shape), "data": base64.b64encode(zlib.compress(array.tobytes(), 1)).decode("ascii")}


def _decode_array(encoded: dict) -> torch.Tensor:
    raw = zlib.decompress(base64.b64decode(encoded["data"]))
    return torch.from_numpy(np.frombuffer(raw, dtype="<i8").reshape(encoded["shape"]).copy())


def package_version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def git_commit() -> str | None:
    """The commit of the source checkout this package runs from, if any."""
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        output = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return output.stdout.strip() or None
