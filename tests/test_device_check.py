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
    assert "--device cpu --quick" in text and "n/a" in text
    sys.modules.pop("gpu_check", None)
