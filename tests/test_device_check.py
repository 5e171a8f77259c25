"""The one-command device check (``benchmarks/run.py --quick``) runs on the CPU with tiny models, so it cannot rot.

On a GPU it is ``python benchmarks/run.py --device cuda --quick`` with the
real checkpoints; here the same code runs with ``--device cpu`` on a tiny
BERT and a tiny Llama (grouped key-value heads), a few sentences each.
``benchmarks`` is a package of the repository (not of the installed
distribution): imported from the repository's root, as ``python -m`` does.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO
from helpers import tiny_model

from probing.testing import tiny_bert


@pytest.fixture
def benchmarks(monkeypatch):
    """The benchmarks package, imported from the repository's root (the folder ``python -m benchmarks.run`` runs in)."""
    monkeypatch.syspath_prepend(str(REPO))
    import benchmarks.gpu_check
    import benchmarks.run

    return benchmarks


def test_the_device_check_runs_on_the_cpu(tmp_path, benchmarks):
    run = benchmarks.run
    output = tmp_path / "check.md"
    code = run.main(["--device", "cpu", "--quick", "--limit", "6", "--model", tiny_bert(),
                     "--model", tiny_model("llama"), "--output", str(output)])
    text = output.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| model")
            and not line.startswith("| ---")]
    assert code == 0, text
    assert len(rows) == 4  # two models x float32, bfloat16
    float32 = [row for row in rows if "| float32 |" in row]
    assert len(float32) == 2 and all("| equal |" in row for row in float32)  # the same device: exactly the CPU's
    # transformers' attention functions, in bfloat16 too (checked to half precision's rounding: fused_tolerance)
    assert all("| fused |" in row for row in rows)
    waiting = [row.split(" | ")[7] for row in rows]  # the share of the run the model waited for its input
    assert all(share.endswith("%") and 0 <= int(share[:-1]) <= 100 for share in waiting), waiting
    # the command as given, so that the report says how to make it again
    assert "--device cpu --quick --model" in text and "--limit 6`" in text and "n/a" in text


def test_the_report_names_the_command_as_given_and_no_folder_of_this_machine(tmp_path, benchmarks):
    import argparse

    check = benchmarks.gpu_check
    given = argparse.Namespace(device="cuda", model=[str(tmp_path / "models" / "tiny"), "/elsewhere/other"], limit=50)
    command = check.device_check_command(given, str(tmp_path / "models"))
    assert command == ("python benchmarks/run.py --device cuda --quick --model $PROBING_MODELS/tiny --model other "
                       "--limit 50")
    plain = argparse.Namespace(device="cuda", model=None, limit=check.DEVICE_CHECK_LIMIT)
    assert check.device_check_command(plain, None) == "python benchmarks/run.py --device cuda --quick"


@pytest.mark.slow
@pytest.mark.parametrize("form", [["benchmarks/run.py"], ["-m", "benchmarks.run"]], ids=["script", "module"])
def test_the_benchmark_runs_as_a_script_and_as_a_module(form, tmp_path):
    # the script form is the command the docs give; it runs the package's module, as the module form does
    output = tmp_path / "check.md"
    done = subprocess.run([sys.executable, *form, "--device", "cpu", "--quick", "--model", tiny_bert(), "--limit", "2",
                           "--output", str(output)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| float32 |" in output.read_text(encoding="utf-8")


@pytest.mark.slow  # starts bash and a Python process
def test_the_gpu_grid_script_stops_in_one_line_where_torch_sees_no_gpu():
    """leaderboards/gpu.sh (the device check and the causal board's sized pieces) starts nothing on a
    machine without CUDA: it says so and stops, before any benchmark or piece is run."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device: gpu.sh would run the whole grid")
    ran = subprocess.run(["bash", str(REPO / "leaderboards" / "gpu.sh")], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable}, timeout=120)
    assert ran.returncode != 0
    assert ran.stderr.strip().splitlines() == ["gpu.sh: torch sees no CUDA device"]
