"""Tiny-BERT results shared by the held-out, leaderboard and plot tests (computed once per session).

The sample treebank is cut into a DEV file (first 40 sentences) and a TEST
file (the rest); ``probing score`` then runs on them as a user would.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

from probing.cli import main
from probing.testing import sample_path, tiny_bert

RELATIONS = ("dobj", "det", "pobj", "all", "nsubj")
REPLICATES = 40


@functools.lru_cache(maxsize=None)
def split_sample() -> tuple[Path, Path]:
    blocks = [b for b in sample_path().read_text(encoding="utf-8").split("\n\n") if b.strip()]
    folder = Path(tempfile.mkdtemp(prefix="probing-heldout-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    dev, test = folder / "dev_part.conllu", folder / "test_part.conllu"
    dev.write_text("\n\n".join(blocks[:40]) + "\n\n", encoding="utf-8")
    test.write_text("\n\n".join(blocks[40:]) + "\n\n", encoding="utf-8")
    return dev, test


@functools.lru_cache(maxsize=None)
def result_paths() -> dict[str, Path]:
    """``dev`` (no bootstrap), ``test`` (in-sample, with bootstrap) and ``heldout`` result files."""
    dev, test = split_sample()
    paths = {name: dev.parent / f"{name}.json" for name in ("dev", "test", "heldout")}
    common = ["score", "--quiet", "--model", tiny_bert(), "--relations", *RELATIONS]
    runs = {
        "dev": ["--treebank", str(dev), "--bootstrap", "0"],
        "test": ["--treebank", str(test), "--bootstrap", str(REPLICATES)],
        "heldout": ["--treebank", str(test), "--select-on", str(dev), "--bootstrap", str(REPLICATES)],
    }
    for name, args in runs.items():
        if main([*common, *args, "--output", str(paths[name])]) != 0:
            raise RuntimeError(f"probing score failed for the {name} run")
    return paths


def results() -> dict[str, dict]:
    """Fresh copies of the three results (tests may modify them)."""
    return {name: json.loads(path.read_text()) for name, path in result_paths().items()}
