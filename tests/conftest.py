"""Shared fixtures: where ../shared lives, and small hand-made treebanks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROBING_SHARED", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def shared() -> Path:
    """The ../shared folder beside the checkout (treebanks, spec, get-model)."""
    if not (SHARED / "spec" / "scoring.md").is_file():
        pytest.fail(f"../shared is missing at {SHARED}: tests read the spec and treebanks from there")
    return SHARED


@pytest.fixture(scope="session")
def minilm(shared) -> str:
    """The real all-MiniLM-L6-v2 checkpoint folder, put in place by get-model."""
    output = subprocess.run(
        [str(shared / "models" / "get-model"), "minilm"], capture_output=True, text=True, check=True
    )
    return output.stdout.strip().splitlines()[-1]


@pytest.fixture
def write_conllu(tmp_path):
    """Write CoNLL-U text (rows of space-free fields joined by tabs) to a file."""

    def write(text: str, name: str = "t.conllu") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


def conllu_rows(*rows: str) -> str:
    """Rows written with single spaces between the ten fields -> tab-separated CoNLL-U."""
    return "\n".join("\t".join(row.split()) if not row.startswith("#") else row for row in rows) + "\n\n"


@pytest.fixture
def one_thread():
    """Tiny models gain nothing from threads, and a busy shared CPU makes spinning threads slow.
    Modules that run many tiny-model passes use it with pytest.mark.usefixtures."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def counts_of(result: dict) -> dict:
    """Everything in a result that is a count of the data (not when, how long or on how many processes)."""
    return {key: result[key] for key in ("relations", "bootstrap", "treebank", "config")}
