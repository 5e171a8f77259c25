"""Hostile input, round 3: counts without bounds, internal errors and lost work, misconfiguration (issue 45,
items 2, 4 and 6).

Every count a user gives has a stated cap or is checked against the machine before any work; a damaged
input (a held-out result whose offset its config does not list, a checkpoint folder of a training run that
cannot be read, a word-vector file with a NaN) is refused in one line before any model time, not after a
pass or after earlier steps' files were written; a worker process killed by a signal is reported as what
happened, with how to continue; ``$PROBING_TREEBANKS`` set to something that is not a treebank folder is
refused naming the variable, and a treebank name no one knows offers the nearest known one. The refused
cases keep the promise of :func:`test_hostile.assert_refused`.
"""

# ruff: noqa: F811 (the fixtures imported from test_hostile are pytest's, taken by name as parameters)

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import tiny_model
from test_hostile import NO_MODEL, Case, Env, _quiet, assert_refused, env, heldout_result, payload_results, valid_result  # noqa: F401

from probing.testing import sample_path

CLOSED_PORT = "http://127.0.0.1:9"
"""A server address nothing answers at (the discard port, closed): a case that would reach the network fails
there at once instead of downloading."""

RESILIENCE: dict[str, Callable[[Env], Case]] = {}


def refused(name: str):
    def register(builder):
        RESILIENCE[name] = builder
        return builder

    return register


# --- item 2: every count has a stated cap or is checked against the machine, before any work -------------------


@refused("score --workers 100000: more processes than cores")
def _(env):
    # NO_MODEL: without the cap the model is reached first (and with a model, 100,000 processes are asked for)
    return Case(_quiet("score", "--model", NO_MODEL, "--workers", "100000"),
                ["--workers", "a process per core", "got 100000"])


@refused("score --limit 99999999999999999999: larger than a result holds")
def _(env):
    output = env.tmp / "out.json"
    return Case(_quiet("score", "--model", env.model, "--bootstrap", "0", "--limit", "99999999999999999999",
                       "--output", str(output)),
                ["--limit", "the largest number a result holds"], absent=[output], within_seconds=10)


@refused("score --shard 0/99999999999999999999: larger than a result holds")
def _(env):
    output = env.tmp / "out.json"
    return Case(_quiet("score", "--model", env.model, "--bootstrap", "0", "--limit", "3", "--shard",
                       "0/99999999999999999999", "--output", str(output)),
                ["--shard", "the largest number a result holds"], absent=[output])


@refused("score --batch-size 1000000: past the stated cap")
def _(env):
    output = env.tmp / "out.json"
    return Case(_quiet("score", "--model", env.model, "--bootstrap", "0", "--limit", "3", "--batch-size", "1000000",
                       "--output", str(output)),
                ["--batch-size", "at most 4096"], absent=[output])


@refused("pairs --batch-size 1000000: past the stated cap")
def _(env):
    return Case(["pairs", "--model", NO_MODEL, "--paradigms", "anaphor_gender_agreement", "--batch-size", "1000000"],
                ["--batch-size", "at most 4096"])


@refused("trees --probe-epochs 5000: past the stated cap")
def _(env):
    output = env.tmp / "out.json"
    return Case(_quiet("trees", "--model", env.model, "--bootstrap", "0", "--limit", "2", "--probe-epochs", "5000",
                       "--output", str(output)),
                ["--probe-epochs", "at most 1000"], absent=[output])


@refused("patterns --maps 1000: past the stated cap")
def _(env):
    output = env.tmp / "out.json"
    return Case(_quiet("patterns", "--model", env.model, "--limit", "2", "--maps", "1000", "--output", str(output)),
                ["--maps", "0 to 32"], absent=[output])


# --- item 6: misconfiguration reported at once, naming what is wrong and where it looked ------------------------


def _offline(env: Env) -> None:
    """Every download address at a closed port: a case that reaches for the network fails there at once."""
    for variable in ("PROBING_UD_BASE_URL", "PROBING_UD_API_URL", "PROBING_BLIMP_BASE_URL"):
        env.monkeypatch.setenv(variable, CLOSED_PORT)


def _treebanks_at(env: Env, value: str | Path) -> None:
    _offline(env)
    env.monkeypatch.setenv("PROBING_TREEBANKS", str(value))


@refused("PROBING_TREEBANKS is a file")
def _(env):
    _treebanks_at(env, env.treebank)
    return Case(_quiet("score", "--model", NO_MODEL, "--treebank", "en_ewt:dev"),
                [f"PROBING_TREEBANKS={env.treebank}", "is a file, not a folder"], inputs=[env.treebank])


@refused("PROBING_TREEBANKS names no folder")
def _(env):
    missing = env.tmp / "no-such-treebanks"
    _treebanks_at(env, missing)
    return Case(_quiet("score", "--model", NO_MODEL, "--treebank", "en_ewt:dev"),
                [f"PROBING_TREEBANKS={missing}", "no such folder"], absent=[missing])


def _treebank_folder(env: Env) -> Path:
    """``TMP/treebanks/en_ewt/en_ewt-ud-dev.conllu`` (the sample's text: only where it lies is looked at)."""
    folder = env.tmp / "treebanks" / "en_ewt"
    folder.mkdir(parents=True)
    shutil.copyfile(sample_path(), folder / "en_ewt-ud-dev.conllu")
    return folder


@refused("PROBING_TREEBANKS one folder too deep")
def _(env):
    folder = _treebank_folder(env)
    _treebanks_at(env, folder)
    return Case(_quiet("score", "--model", NO_MODEL, "--treebank", "en_ewt:dev"),
                [f"PROBING_TREEBANKS={folder}", "one level too deep", f"PROBING_TREEBANKS={folder.parent}"],
                inputs=[folder])


@refused("PROBING_TREEBANKS without the treebank, offline: says where it looked")
def _(env):
    root = env.tmp / "treebanks"
    _treebank_folder(env)
    _treebanks_at(env, root)  # a folder that holds en_ewt/, but not en_pud/
    looked = root / "en_pud" / "en_pud-ud-test.conllu"
    return Case(_quiet("score", "--model", NO_MODEL, "--treebank", "en_pud:test"),
                ["download failed", f"looked for {looked}"], inputs=[root])


@refused("an unknown treebank name, offline: did you mean")
def _(env):
    _offline(env)
    return Case(_quiet("score", "--model", NO_MODEL, "--treebank", "en_ewtt:dev"),
                ["--treebank: cannot look up treebank 'en_ewtt' (did you mean en_ewt?)"])


@refused("pairs without --blimp, offline: one line, no 'downloading' before it")
def _(env):
    _offline(env)
    env.monkeypatch.delenv("PROBING_BLIMP", raising=False)
    return Case(["pairs", "--model", tiny_model("gpt2"), "--paradigms", "anaphor_gender_agreement", "--limit", "3"],
                ["anaphor_gender_agreement.jsonl: download failed", "give --blimp DIR"])


@pytest.mark.parametrize("name", RESILIENCE)
def test_refused(name, env, capsys):
    assert_refused(RESILIENCE[name](env), env, capsys)
