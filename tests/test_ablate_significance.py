"""probing ablate --chosen as a newcomer reads it: how significant its answer can be (its family: the least p
its draws allow, Tarone's rule, Holm over what is left), what ``short`` means, the figure the README promises beside --output, and DEV cut
by its own --select-limit, not by the --limit of the units measured."""

from __future__ import annotations

import json

import pytest

from probing.cli import main
from probing.testing import sample_split, tiny_bert


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    folder = tmp_path_factory.mktemp("split")
    dev, test = sample_split(20, 20, folder)
    return folder, dev, test


def chosen_argv(test: str, *more: str) -> list[str]:
    return ["ablate", "--quiet", "--model", tiny_bert(), "--treebank", test, "--chosen", "det", "--k", "1",
            "--random", "2", "--metric", "mlm", "--limit", "3", "--bootstrap", "5", *more]


def test_ablate_says_how_significant_it_can_be_and_writes_its_figure(split, capsys):
    folder, dev, test = split
    output = folder / "chosen.json"
    assert main(chosen_argv(test, "--select-on", dev, "--select-limit", "4", "--output", str(output))) == 0
    out = capsys.readouterr().out
    # the least p of 2 draws is 1 / 3: Tarone's rule leaves the run's one primary cell out, and the run says why
    row = next(line for line in out.splitlines() if line.startswith("det@1 "))
    assert "untestable at this size (least p 0.33)" in row and row.split()[-2] == "unreachable"
    assert "Tarone's rule: m' = 1" in out and "1 cannot and is untestable at this size" in out
    assert "No cell is left to test: nothing on this run can be called significant, whatever its data" in out
    header = out.splitlines()[next(i for i, line in enumerate(out.splitlines()) if line.startswith("set "))]
    assert "draws 2.5-97.5%" in header and "threshold" in header
    assert any(line.startswith("short: how many random sets have fewer heads") for line in out.splitlines())
    # DEV: its own limit, announced and recorded; --limit cut the units measured only
    line = next(line for line in out.splitlines() if line.startswith("heads chosen on DEV"))
    assert f"({dev}, 4 sentences: its first 4, --select-limit 4)" in line
    result = json.loads(output.read_text(encoding="utf-8"))
    assert result["config"]["select_limit"] == 4 and result["config"]["limit"] == 3
    assert result["input"]["units_used"] == 3
    figure = folder / "chosen-versus.png"
    assert figure.read_bytes().startswith(b"\x89PNG")


def test_select_limit_is_refused_where_it_would_do_nothing(split, capsys):
    folder, dev, test = split
    assert main(["ablate", "--quiet", "--model", tiny_bert(), "--treebank", test, "--heads", "1-1", "--metric", "mlm",
                 "--select-limit", "4"]) == 2
    assert "--select-limit: does nothing without --chosen" in capsys.readouterr().err
    dev_result = folder / "dev.json"
    assert main(["score", "--quiet", "--model", tiny_bert(), "--treebank", dev, "--limit", "5", "--relations", "det",
                 "--bootstrap", "0", "--output", str(dev_result)]) == 0
    capsys.readouterr()
    output = folder / "refused.json"
    assert main(chosen_argv(test, "--select-on", str(dev_result), "--select-limit", "4", "--output", str(output))) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--select-limit: cuts a treebank DEV only" in err
    assert not output.exists()
