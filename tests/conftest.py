"""Shared fixtures: where ../shared lives, and small hand-made treebanks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

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
