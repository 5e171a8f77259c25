"""The fixed mmap threshold that keeps peak memory flat over a long treebank (probing.engine.heap); the ratio
itself is measured by ``python benchmarks/run.py`` (section 3), never in a timed test."""

from __future__ import annotations

import platform
import sys

import pytest

from probing.engine import heap


@pytest.fixture
def undecided(monkeypatch):
    """A process in which the threshold has not been decided yet."""
    monkeypatch.setattr(heap, "_held", [])
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="mallopt's mmap threshold is glibc's")
def test_held_on_glibc(undecided):
    assert heap.hold_mmap_threshold() is True


def test_the_users_own_setting_wins(undecided, monkeypatch):
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    assert heap.hold_mmap_threshold() is False


def test_decided_once_per_process(undecided, monkeypatch):
    first = heap.hold_mmap_threshold()
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")  # a later change of mind is not applied halfway
    assert heap.hold_mmap_threshold() is first


def test_every_model_load_holds_it(undecided):
    from probing.data.inputs import InputSource, sample_treebank_path
    from probing.engine.startup import load_while_validating

    load_while_validating(lambda: None, [InputSource.treebank(str(sample_treebank_path()))], name="nothing")
    assert heap._held, "load_while_validating decided the threshold before loading"
