"""The heavy runs' benchmark (benchmarks/heavy.py) keeps the report it writes into, and the CPU stacks less.

``benchmarks`` is a package of the repository, imported from its root as ``python -m`` does.
"""

from __future__ import annotations

import pytest
import torch
from conftest import REPO

from probing.analyses.ablation.accumulator import CONDITION_CELLS, CPU_CONDITION_CELLS, AblationAccumulator
from probing.analyses.ablation.conditions import INTACT, Condition
from probing.analyses.ablation.metrics import NextTokenLoss


@pytest.fixture
def heavy(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO))
    import benchmarks.heavy

    return benchmarks.heavy


def test_the_heavy_section_replaces_its_own_and_keeps_the_rest_of_the_report(heavy):
    first = heavy.render([], None, "python -m benchmarks.heavy", ["nothing, a test"])
    report = heavy.replace_section("# Benchmarks\n\n## Made by run.py\n\ntext\n", first)
    assert report.startswith("# Benchmarks\n\n## Made by run.py\n\ntext\n\n" + heavy.BEGIN)
    assert heavy.section_of(report) == first and "Not measured: nothing, a test." in first
    second = first.replace("nothing, a test", "something else")
    again = heavy.replace_section(report + "\n## After it\n", second)
    assert heavy.section_of(again) == second and again.count(heavy.BEGIN) == 1
    assert again.endswith("\n## After it\n") and "## Made by run.py" in again


def test_the_grid_floor_counts_each_condition_from_its_lowest_disabled_layer(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO))
    from benchmarks.grid import first_layers

    assert first_layers([INTACT, Condition("a", ((3, 1), (1, 0))), Condition("b", ((5, 2),))], 6) == [0, 1, 5]


def test_a_cpu_stacks_fewer_conditions_than_a_gpu():
    accumulator = AblationAccumulator(NextTokenLoss(), [INTACT] + [Condition(str(h), ((0, h),)) for h in range(4)],
                                      2, 4, bootstrap=2)
    batch = type("Batch", (), {"input_ids": torch.zeros(4, 16, dtype=torch.long), "__len__": lambda self: 4})()
    cells = 4 * 16**2
    assert accumulator.group_size(batch, "cpu") == CPU_CONDITION_CELLS // cells < CONDITION_CELLS // cells
    assert accumulator.group_size(batch, "cuda:0") == CONDITION_CELLS // cells
