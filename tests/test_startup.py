"""A run's start: the treebank is read through while the model loads, so that a malformed line, even the
last one, is reported (one line, file:line, exit 2) before a slow model has finished loading."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import real_treebank

from probing.cli import main
from probing.data.inputs import InputSource
from probing.engine.startup import load_while_validating
from probing.testing import sample_path

STUB_SECONDS = 60
"""How long the stub loader takes: far longer than reading any treebank here."""


class SlowLoader:
    """A loader that takes STUB_SECONDS (or until released) and records whether it finished."""

    def __init__(self):
        self.release, self.finished = threading.Event(), threading.Event()

    def __call__(self, *args, **kwargs):
        self.release.wait(STUB_SECONDS)
        self.finished.set()
        raise RuntimeError("the stub loader was not meant to finish before the error")


def broken_at_the_end(source, tmp_path) -> tuple[str, int]:
    """A copy of ``source`` whose last token line has HEAD 'x'; its path and that line's number."""
    lines = source.read_text(encoding="utf-8").splitlines()
    last = max(number for number, line in enumerate(lines) if line and not line.startswith("#"))
    columns = lines[last].split("\t")
    columns[6] = "x"
    lines[last] = "\t".join(columns)
    path = tmp_path / "broken.conllu"
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    return str(path), last + 1


def reported_before_loading(monkeypatch, capsys, where: str, argv: list[str], path: str, line: int) -> None:
    loader = SlowLoader()
    monkeypatch.setattr(where, loader)
    started = time.monotonic()
    try:
        assert main(argv) == 2
        assert not loader.finished.is_set()  # (it may not have started: an earlier abandoned load goes first)
    finally:
        loader.release.set()
    assert time.monotonic() - started < STUB_SECONDS / 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"{path}:{line}: HEAD is not an integer: 'x'" in error, error


def test_score_reports_a_bad_last_line_before_the_model_has_loaded(monkeypatch, capsys, tmp_path):
    path, line = broken_at_the_end(sample_path(), tmp_path)
    reported_before_loading(monkeypatch, capsys, "probing.model.loading.load_model",
                            ["score", "--treebank", path, "--bootstrap", "0"], path, line)


def test_a_held_out_run_reports_a_bad_last_line_of_dev_before_the_model_has_loaded(monkeypatch, capsys, tmp_path):
    path, line = broken_at_the_end(sample_path(), tmp_path)
    reported_before_loading(monkeypatch, capsys, "probing.model.loading.load_model",
                            ["score", "--select-on", path, "--treebank", str(sample_path())], path, line)


def test_every_engine_command_reports_a_bad_last_line_before_the_model_has_loaded(monkeypatch, capsys, tmp_path):
    path, line = broken_at_the_end(sample_path(), tmp_path)
    reported_before_loading(monkeypatch, capsys, "probing.model.loading.load_model",
                            ["surface", "--model", "stub", "--treebank", path], path, line)


@pytest.mark.real_data
def test_a_bad_last_line_of_en_ewt_dev_is_reported_before_the_model_has_loaded(monkeypatch, capsys, tmp_path):
    path, line = broken_at_the_end(real_treebank("en_ewt", "dev"), tmp_path)
    reported_before_loading(monkeypatch, capsys, "probing.model.loading.load_model",
                            ["score", "--treebank", path, "--bootstrap", "0"], path, line)


def test_the_loader_error_comes_after_the_inputs_and_the_inputs_get_their_totals():
    source = InputSource.treebank(str(sample_path()), limit=10)

    def failing_load():
        raise OSError("no such checkpoint")

    with pytest.raises(OSError, match="no such checkpoint"):
        load_while_validating(failing_load, [source], name="stub")
    assert source.units_total == 75 and source.planned_units() == 10
