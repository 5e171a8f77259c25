"""What a run says while it works and what its labels claim (issue 45, items 7 and 8).

Item 7: off a terminal (nohup, Slurm, CI: stderr is a file or a pipe, as under
pytest's capture) a run writes a line per stage and a progress line every
``PROBING_PROGRESS_EVERY`` seconds; ``--progress``/``--no-progress`` (and
``--quiet``) force it. Item 8: a held-out run on the halves of a one-split
treebank says so, counts the sentences it read, and times the whole run;
``pairs`` says what it scored and how it resamples; ``transfer`` names no head
for a relation that no language has pairs of.

Each case is a row of :data:`CASES` (a function of the ``env`` fixture of
tests/test_hostile.py, ``capsys`` and ``monkeypatch``); the ones that spawn a
process are marked slow.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import _unavailable
from test_hostile import (  # noqa: F401  (the env fixture and the fixtures it uses, found by name here)
    Case,
    Env,
    assert_refused,
    env,
    heldout_result,
    payload_results,
    registrar,
    run_cli,
    valid_result,
)

from probing.cli import main
from probing.testing import planted_language_result, sample_path, sample_split, tiny_bert

REPO = Path(__file__).resolve().parents[1]

CASES: dict[str, Callable] = {}
SLOW: set[str] = set()
case = registrar(CASES, SLOW)


def _lines(err: str, prefix: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith(prefix)]


# ---------------------------------------------------------------------------- item 7: progress off a terminal


@case("score off a terminal: a line when the model has loaded, a pass's start, progress lines and its end")
def _score_lines(run: Env, capsys, monkeypatch):
    monkeypatch.setenv("PROBING_PROGRESS_EVERY", "0")  # a line after every chunk
    output = run.tmp / "out.json"
    code, _, err = run_cli(["score", "--model", run.model, "--limit", "5", "--bootstrap", "0", "--batch-size", "2",
                            "--output", str(output)], capsys)
    assert code == 0, err
    assert re.search(r"^loaded \S+ in \d\d:\d\d$", err, re.MULTILINE), err
    assert "scoring: 5 units\n" in err
    progress = _lines(err, "scoring: ")
    assert any(re.fullmatch(r"scoring: \d/5 units, [\d.]+ units/s, about \d\d:\d\d left", line) for line in progress), err
    assert re.search(r"^scoring: 5 units in \d\d:\d\d$", err, re.MULTILINE), err
    assert err.endswith(f"wrote {output}\n")


@case("held-out score off a terminal names its stages: choosing on DEV, reporting on TEST, writing")
def _heldout_stages(run: Env, capsys, monkeypatch):
    dev, test = sample_split(10, 10, run.tmp)
    output = run.tmp / "out.json"
    code, _, err = run_cli(["score", "--model", run.model, "--treebank", str(test), "--select-on", str(dev),
                            "--bootstrap", "0", "--output", str(output)], capsys)
    assert code == 0, err
    stages = [line.split(":")[0] for line in err.splitlines()]
    assert stages.index("selecting on DEV") < stages.index("reporting on TEST") < len(stages) - 1
    assert "selecting on DEV: 10 units\n" in err and "reporting on TEST: 10 units\n" in err
    assert err.splitlines()[-1] == f"wrote {output}"


@case("--no-progress and --quiet (the same) show nothing but what was written")
def _no_progress(run: Env, capsys, monkeypatch):
    for flag in ("--no-progress", "--quiet"):
        output = run.tmp / f"out{flag}.json"
        code, _, err = run_cli(["score", flag, "--model", run.model, "--limit", "3", "--bootstrap", "0",
                                "--output", str(output)], capsys)
        assert code == 0, err
        assert err == f"wrote {output}\n", flag


@case("--progress after --quiet wins (the last one given), and the help says how they relate")
def _last_wins(run: Env, capsys, monkeypatch):
    code, _, err = run_cli(["score", "--quiet", "--progress", "--model", run.model, "--limit", "3", "--bootstrap", "0"],
                           capsys)
    assert code == 0, err
    assert "scoring: 3 units\n" in err
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "--progress" in shown and "--no-progress, --quiet" in shown and "PROBING_PROGRESS_EVERY" in shown


@case("every command that runs a pass writes its progress lines off a terminal")
def _every_command(run: Env, capsys, monkeypatch):
    commands = {
        "surface": ["surface", "--model", run.model, "--limit", "3"],
        "heads": ["heads", "--model", run.model, "--limit", "3"],
        "trees": ["trees", "--model", run.model, "--limit", "3", "--bootstrap", "0"],
        "ablate": ["ablate", "--model", run.model, "--limit", "3", "--each-layer", "--metric", "mlm", "--bootstrap", "10"],
    }
    for name, argv in commands.items():
        code, _, err = run_cli(argv, capsys)
        assert code == 0, f"{name}: {err}"
        assert re.search(r"^loaded \S+ in \d\d:\d\d$", err, re.MULTILINE), f"{name}: {err}"
        assert re.search(r"^.+: 3 units in \d\d:\d\d$", err, re.MULTILINE), f"{name}: {err}"


@case("a PROBING_PROGRESS_EVERY that is not a number of seconds is one line naming it, before the model")
def _bad_interval(run: Env, capsys, monkeypatch):
    monkeypatch.setenv("PROBING_PROGRESS_EVERY", "soon")
    assert_refused(Case(["score", "--model", run.model, "--limit", "3", "--output", str(run.tmp / "out.json")],
                        ["PROBING_PROGRESS_EVERY", "'soon'"], inputs=[run.result], absent=[run.tmp / "out.json"],
                        within_seconds=30), run, capsys)


@case("with progress on, a bad input line is still the only line on stderr (the loading line waits for it)")
def _one_line_still(run: Env, capsys, monkeypatch):
    run.treebank.write_text(run.treebank.read_text(encoding="utf-8") + "1\tbroken\n\n", encoding="utf-8")
    output = run.tmp / "out.json"
    assert_refused(Case(["score", "--model", run.model, "--treebank", str(run.treebank), "--output", str(output)],
                        [f"{run.treebank}:"], inputs=[run.treebank], absent=[output]), run, capsys)


@case("a long model load says it is still loading, every PROBING_PROGRESS_EVERY seconds, off a terminal")
def _long_load(run: Env, capsys, monkeypatch):
    from probing.data.inputs import InputSource
    from probing.engine.startup import load_while_validating

    monkeypatch.setenv("PROBING_PROGRESS_EVERY", "0.5")  # waits are at least a second apart
    loaded = load_while_validating(lambda: time.sleep(2.5) or "a model", [InputSource.treebank(str(run.treebank))],
                                   name="slow-model", announce=True)
    err = capsys.readouterr().err
    assert loaded == "a model"
    assert re.search(r"^loading slow-model \.\.\. \(00:0[12] so far\)$", err, re.MULTILINE), err
    assert re.search(r"^loaded slow-model in 00:0[23]$", err, re.MULTILINE), err


@case("under nohup or CI (stderr a pipe, a process of its own) a held-out run shows its stages and progress",
      slow=True)
def _subprocess_pipe(run: Env, capsys, monkeypatch):
    dev, test = sample_split(10, 10, run.tmp)
    path = os.environ.get("PYTHONPATH")
    environment = {**os.environ, "PYTHONPATH": str(REPO) + (os.pathsep + path if path else ""),
                   "PROBING_PROGRESS_EVERY": "0"}
    finished = subprocess.run([sys.executable, "-m", "probing", "score", "--model", run.model, "--treebank", str(test),
                               "--select-on", str(dev), "--bootstrap", "0", "--batch-size", "4"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=environment, timeout=300)
    err = finished.stderr
    assert finished.returncode == 0, err
    assert re.search(r"^loaded \S+ in \d\d:\d\d$", err, re.MULTILINE), err
    for stage in ("selecting on DEV", "reporting on TEST"):
        assert f"{stage}: 10 units\n" in err, err
        assert re.search(rf"^{stage}: \d+/10 units, [\d.]+ units/s, about \d\d:\d\d left$", err, re.MULTILINE), err
    assert "\r" not in err and "\x1b" not in err  # plain lines, not a bar redrawn in place


# ---------------------------------------------------------------------------- item 8: labels that mislead


@pytest.fixture(scope="module")
def halves_run(tmp_path_factory):
    """A held-out run on the halves of a one-split treebank (the sample as ``xx_toy``), ``--limit 20``: its
    result and what it printed."""
    folder = tmp_path_factory.mktemp("halves")
    (folder / "xx_toy").mkdir()
    shutil.copyfile(sample_path(), folder / "xx_toy" / "xx_toy-ud-test.conllu")
    output = folder / "r.json"
    path = os.environ.get("PYTHONPATH")
    completed = subprocess.run(
        [sys.executable, "-m", "probing", "score", "--quiet", "--model", tiny_bert(), "--treebank", "xx_toy",
         "--limit", "20", "--bootstrap", "10", "--output", str(output)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PROBING_TREEBANKS": str(folder),
             "PYTHONPATH": str(REPO) + (os.pathsep + path if path else "")})
    assert completed.returncode == 0, completed.stderr
    return json.loads(output.read_text(encoding="utf-8")), completed.stdout


@case("a held-out run on a PUD-like treebank's halves is titled by the halves, not dev and test", slow=True)
def _halves_title(run: Env, capsys, monkeypatch, halves_run):
    _, printed = halves_run
    assert "held out: chosen on the even half, reported on the odd half, 95% intervals" in printed
    assert "chosen on dev, reported on test" not in printed


@case("a held-out run of --limit 20 on halves counts the 10 sentences of its half, not the file's 75", slow=True)
def _halves_count(run: Env, capsys, monkeypatch, halves_run):
    _, printed = halves_run
    header = printed.splitlines()[0]
    assert re.search(r": 10/10 sentences \(the odd half of the first 20 of 75 in the file\), \d+ words", header), header


@case("timing.seconds_total of a held-out run covers both passes, DEV's and TEST's, and the result validates",
      slow=True)
def _heldout_timing(run: Env, capsys, monkeypatch, halves_run):
    from probing.results.schema.validation import validate

    result, _ = halves_run
    timing = result["timing"]
    assert 0 < timing["seconds_selecting_on_dev"] < timing["seconds_total"]
    assert timing["seconds_model"] <= timing["seconds_total"]
    validate(result)


@case("pairs prints a header: the model, the pairs and --limit, the context token")
def _pairs_header(run: Env, capsys, monkeypatch):
    from helpers import tiny_model

    blimp = os.environ.get("PROBING_BLIMP")
    if not blimp or not (Path(blimp) / "anaphor_gender_agreement.jsonl").is_file():
        _unavailable("BLiMP (anaphor_gender_agreement)", "set PROBING_BLIMP")
    model = tiny_model("gpt2")
    code, out, err = run_cli(["pairs", "--model", model, "--blimp", blimp, "--paradigms", "anaphor_gender_agreement",
                              "--limit", "4", "--bootstrap", "10"], capsys)
    assert code == 0, err
    header = out.splitlines()[0]
    assert header.startswith(f"{Path(model).name} (GPT2LMHeadModel, ")
    assert "4 pairs of 1 paradigms (the first 4 of each, --limit 4)" in header
    assert "scored after '<|endoftext|>' (--context bos)" in header and "95% Wilson intervals" in header


@case("pairs' --bootstrap help says pairs are resampled with replacement, as the code does, not Poisson")
def _pairs_bootstrap_help(run: Env, capsys, monkeypatch):
    from probing.analyses.pairs.accuracy import paradigm_draws

    draws = paradigm_draws(size=5, bootstrap=200, seed=0, index=0)
    assert draws.shape == (200, 5) and draws.min() >= 0 and draws.max() < 5  # indices of pairs drawn: resampling
    with pytest.raises(SystemExit):
        main(["pairs", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    bootstrap = shown[shown.index("--bootstrap N"):]
    assert "Poisson" not in bootstrap.split("(default")[0]
    assert "pairs resampled with replacement within each paradigm" in bootstrap


@case("transfer's 'same head' names no head for a relation no language has pairs of: no data")
def _transfer_no_data(run: Env, capsys, monkeypatch):
    from probing.analyses.probe.atlas import atlas_markdown
    from probing.stats.transfer import transfer

    results = [planted_language_result(name, chosen=(0, 1, "dep_to_head"), correct={}, total=10)
               for name in ("de_pud", "fr_pud")]
    for result in results:  # the choice halves chose a head; no report half has a pair to score it on
        result["relations"]["dobj"]["total"] = 0
        result["relations"]["dobj"]["baselines"] = {key: 0 for key in result["relations"]["dobj"]["baselines"]}
        result["heldout"]["relations"]["dobj"]["heldout"].update({"head": None, "baseline": None})
    page = atlas_markdown(transfer(results), "planted")
    row = next(line for line in page.splitlines() if line.startswith("| same head |"))
    assert row == "| same head | no data |", row


@pytest.mark.parametrize("name", [pytest.param(name, marks=[pytest.mark.slow] if name in SLOW else [])
                                  for name in CASES])
def test_feedback(name, env, capsys, monkeypatch, request):  # noqa: F811  (env: the fixture imported above)
    check = CASES[name]
    extra = {"halves_run": request.getfixturevalue("halves_run")} if "halves_run" in check.__code__.co_varnames else {}
    check(env, capsys, monkeypatch, **extra)
