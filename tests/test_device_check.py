"""The one-command device check (``benchmarks/run.py --quick``) runs on the CPU with tiny models, so it cannot rot.

On a GPU it is ``python benchmarks/run.py --device cuda --quick`` with the
real checkpoints; here the same code runs with ``--device cpu`` on a tiny
BERT and a tiny Llama (grouped key-value heads), a few sentences each.
"""

from __future__ import annotations

import sys
from pathlib import Path

from helpers import tiny_model

from probing.testing import tiny_bert

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def test_the_device_check_runs_on_the_cpu(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import run

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
    sys.modules.pop("gpu_check", None)


def test_the_report_names_the_command_as_given_and_no_folder_of_this_machine(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import argparse

    import run

    given = argparse.Namespace(device="cuda", model=[str(tmp_path / "models" / "tiny"), "/elsewhere/other"], limit=50)
    command = run.device_check_command(given, str(tmp_path / "models"))
    assert command == ("python benchmarks/run.py --device cuda --quick --model $PROBING_MODELS/tiny --model other "
                       "--limit 50")
    plain = argparse.Namespace(device="cuda", model=None, limit=run.DEVICE_CHECK_LIMIT)
    assert run.device_check_command(plain, None) == "python benchmarks/run.py --device cuda --quick"
