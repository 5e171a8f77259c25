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

import errno
import json
import multiprocessing.process
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import tiny_model
from test_hostile import (  # noqa: F401
    NO_MODEL,
    Case,
    Env,
    _env,
    _quiet,
    assert_refused,
    env,
    heldout_result,
    payload_results,
    registrar,
    valid_result,
)

from probing.cli import main
from probing.testing import sample_path, tiny_bert

CLOSED_PORT = "http://127.0.0.1:9"
"""A server address nothing answers at (the discard port, closed): a case that would reach the network fails
there at once instead of downloading."""

RESILIENCE: dict[str, Callable[[Env], Case]] = {}
refused = registrar(RESILIENCE)


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


@refused("trees --candidates 100000: past the stated cap")
def _(env):
    output = env.tmp / "out.json"
    return Case(_quiet("trees", "--model", env.model, "--bootstrap", "0", "--limit", "2", "--no-probes",
                       "--candidates", "100000", "--output", str(output)),
                ["--candidates", "at most 256"], absent=[output])


@refused("patterns --maps 1000: past the stated cap")
def _(env):
    output = env.tmp / "out.json"
    return Case(_quiet("patterns", "--model", env.model, "--limit", "2", "--maps", "1000", "--output", str(output)),
                ["--maps", "0 to 32"], absent=[output])


# --- item 4: no internal error, and no work done or files written before a refusal ------------------------------


def _offset_99(env: Env) -> None:
    """The held-out result with dobj's held-out offset 99, which its config.offsets (-3 .. +3) do not list."""
    result = json.loads(env.heldout.read_text())
    baseline = result["heldout"]["relations"]["dobj"]["heldout"]["baseline"]
    assert baseline is not None  # the damage needs an offset to spoil
    baseline["offset"] = 99
    env.result.write_text(json.dumps(result))


for _command, _suffix in (("transfer", "md"), ("leaderboard", "md"), ("plot", "png"), ("merge", "json")):

    @refused(f"{_command}: a held-out offset missing from config.offsets")
    def _(env, command=_command, suffix=_suffix):
        _offset_99(env)
        output = env.tmp / f"out.{suffix}"
        return Case([command, str(env.result), "--output", str(output)],
                    [str(env.result), "heldout.relations.dobj.heldout.baseline.offset: 99 is not among config.offsets"],
                    inputs=[env.result], absent=[output])


def _run_folder(env: Env, *steps: int) -> Path:
    """A training run's folder: a copy of the tiny model as ``checkpoint-STEP`` for each step."""
    folder = env.tmp / "run"
    for step in steps:
        shutil.copytree(env.model, folder / f"checkpoint-{step}")
    return folder


@refused("score RUN_FOLDER: a later checkpoint's config is broken")
def _(env):
    folder = _run_folder(env, 1, 2)
    (folder / "checkpoint-2" / "config.json").write_text("{broken", encoding="utf-8")
    output = env.tmp / "out" / "curve.json"
    return Case(_quiet("score", "--model", str(folder), "--limit", "3", "--bootstrap", "0", "--output", str(output)),
                ["--model", "checkpoint-2", "config.json"], inputs=[folder],
                absent=[env.tmp / "out" / "curve-step1.json", env.tmp / "out" / "curve-curve.csv"])


@refused("score RUN_FOLDER: a checkpoint's step is larger than a result holds")
def _(env):
    folder = _run_folder(env, 1, 99999999999999999999)
    output = env.tmp / "out" / "curve.json"
    return Case(_quiet("score", "--model", str(folder), "--limit", "3", "--bootstrap", "0", "--output", str(output)),
                ["--model", "checkpoint-99999999999999999999", "larger than any number a result holds"],
                inputs=[folder], absent=[env.tmp / "out" / "curve-step1.json"])


@refused("trees --word-vectors: a NaN in the file, before the model")
def _(env):
    vectors = env.tmp / "vectors.txt"
    vectors.write_text("the 0.1 0.2\ncat nan 0.3\n", encoding="utf-8")
    return Case(_quiet("trees", "--model", NO_MODEL, "--limit", "3", "--word-vectors", str(vectors)),
                [f"{vectors}:2", "'cat'", "not a finite"], inputs=[vectors])


@refused("score --workers 1: the system refuses to start the process")
def _(env):
    def refuse(process):
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    env.monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)
    output = env.tmp / "out.json"
    return Case(_quiet("score", "--model", env.model, "--limit", "3", "--bootstrap", "0", "--workers", "1",
                       "--output", str(output)),
                ["--workers", "the system refused to start a worker process (Resource temporarily unavailable)"],
                absent=[output])


def _children(pid: int) -> list[int]:
    """The process ids of ``pid``'s children, whichever of its threads started them (Linux's /proc)."""
    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()]


@pytest.mark.slow
def test_a_worker_killed_by_a_signal_is_named_and_resume_ends_with_the_counts_of_an_uninterrupted_run(tmp_path,
                                                                                                     capsys):
    """The out-of-memory killer's SIGKILL, sent to a --workers process in the middle of a run: one line saying
    which worker, which signal and what it likely means, exit 2 (it was a bug in probing, exit 1); the checkpoint
    saved before it lets --resume end with the counts of a run that was never interrupted."""
    treebank = tmp_path / "long.conllu"
    treebank.write_text(sample_path().read_text(encoding="utf-8") * 20, encoding="utf-8")  # 1,500 sentences
    output, checkpoint = tmp_path / "r.json", tmp_path / "r.json.checkpoint"
    common = ["score", "--quiet", "--model", tiny_bert(), "--treebank", str(treebank), "--batch-size", "8",
              "--bootstrap", "20"]
    killed = [*common, "--workers", "1", "--checkpoint-every", "0", "--output", str(output)]
    run = subprocess.Popen([sys.executable, "-m", "probing", *killed], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=_env())
    deadline = time.monotonic() + 120
    while not checkpoint.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children(run.pid)
    assert len(workers) == 1, workers  # the one --workers process, a chunk in
    os.kill(workers[0], signal.SIGKILL)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err and "bug in probing" not in err, err
    for fragment in (f"--workers: input worker 1 of 1 (process {workers[0]}) was killed by SIGKILL",
                     "out-of-memory killer", "memory probably ran out", "--resume", str(checkpoint)):
        assert fragment in err, err
    assert checkpoint.is_file() and not output.exists()

    assert main([*killed, "--resume"]) == 0
    assert main([*common, "--output", str(tmp_path / "whole.json")]) == 0
    capsys.readouterr()
    resumed, whole = (json.loads(path.read_text()) for path in (output, tmp_path / "whole.json"))
    assert resumed["relations"] == whole["relations"]  # every count and every bootstrap replicate
    assert resumed["treebank"]["sentences_scored"] == whole["treebank"]["sentences_scored"] == 1500
    assert not checkpoint.exists()


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
                [f"PROBING_TREEBANKS={folder}", "one level too deep", f"looked for {folder}/en_ewt/en_ewt-ud-dev.conllu",
                 f"PROBING_TREEBANKS={folder.parent}"],
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
    for variable in ("PROBING_BLIMP", "PROBING_MINIMAL_PAIRS"):  # no folder of BLiMP's: the cache, then a download
        env.monkeypatch.delenv(variable, raising=False)
    return Case(["pairs", "--model", tiny_model("gpt2"), "--paradigms", "anaphor_gender_agreement", "--limit", "3"],
                ["anaphor_gender_agreement.jsonl: download failed", "give --blimp DIR"])


@pytest.mark.parametrize("name", RESILIENCE)
def test_refused(name, env, capsys):
    assert_refused(RESILIENCE[name](env), env, capsys)
