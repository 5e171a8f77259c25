"""Shared fixtures: real treebanks and checkpoints when they are present, and small hand-made treebanks.

Tests that need a real UD treebank or a real checkpoint are marked
``real_data`` (``pytest -m "not real_data"`` leaves them out) and find their
files through one mechanism:

- treebanks: ``$PROBING_TREEBANKS/<name>/<name>-ud-<split>.conllu``, else the
  project's cache (``probing data fetch en_ewt`` puts them there);
- checkpoints: ``$PROBING_MODELS/<folder>`` (all-MiniLM-L6-v2,
  all-mpnet-base-v2, SmolLM2-135M-Instruct).

When a file is absent the test is skipped with a one-line reason, and the
summary at the end says how many real-data tests did not run. With
``PROBING_REQUIRE_REAL_DATA=1`` (as CI sets) an absent file fails the test
instead, so nothing is skipped quietly there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"

MODEL_FOLDERS = {"minilm": "all-MiniLM-L6-v2", "mpnet": "all-mpnet-base-v2", "smollm2": "SmolLM2-135M-Instruct"}
"""Short name -> the folder a real checkpoint has under $PROBING_MODELS."""

_NOT_RUN: list[str] = []


def _unavailable(what: str, how: str):
    reason = f"real data: {what} is not available ({how})"
    if os.environ.get("PROBING_REQUIRE_REAL_DATA"):
        pytest.fail(reason + "; PROBING_REQUIRE_REAL_DATA is set, so this is a failure")
    _NOT_RUN.append(what)
    pytest.skip(reason)


def real_treebank(name: str, split: str) -> Path:
    """A real UD treebank file, or skip (fail under PROBING_REQUIRE_REAL_DATA)."""
    from probing.data.datasets import cache_dir

    filename = f"{name}-ud-{split}.conllu"
    folder = os.environ.get("PROBING_TREEBANKS")
    for candidate in ([Path(folder) / name / filename] if folder else []) + [cache_dir() / name / filename]:
        if candidate.is_file():
            return candidate
    _unavailable(f"treebank {name}:{split}", f"set PROBING_TREEBANKS or run probing data fetch {name}")


def real_model(short: str) -> str:
    """A real checkpoint folder, or skip (fail under PROBING_REQUIRE_REAL_DATA)."""
    folder = os.environ.get("PROBING_MODELS")
    if folder and (Path(folder) / MODEL_FOLDERS[short] / "config.json").is_file():
        return str(Path(folder) / MODEL_FOLDERS[short])
    _unavailable(f"checkpoint {MODEL_FOLDERS[short]}", "set PROBING_MODELS to a folder holding it")


@pytest.fixture(scope="session")
def minilm() -> str:
    """The real all-MiniLM-L6-v2 checkpoint folder."""
    return real_model("minilm")


@pytest.fixture(scope="session")
def ewt_dev() -> Path:
    return real_treebank("en_ewt", "dev")


def pytest_configure(config):
    config.addinivalue_line("markers", "real_data: needs a real treebank or checkpoint (see tests/conftest.py)")


def pytest_terminal_summary(terminalreporter):
    if _NOT_RUN:
        missing = ", ".join(sorted(set(_NOT_RUN)))
        terminalreporter.write_line(f"{len(_NOT_RUN)} real-data tests did not run: {missing} not available "
                                    "(see tests/conftest.py)", yellow=True)


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
