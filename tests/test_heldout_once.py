"""Held out once: every analysis that chooses on DEV (``--select-on``) runs the one held-out sequence,
:meth:`probing.stats.heldout.HeldOut.run`, and hands it its own choice and report; none loads the model, chooses
on DEV or reports on TEST by a way of its own.

Each such command's library function is called through ``probing.run`` with a DEV and a TEST; the sequence is
replaced by one that records what it was given and stops, and loading a model fails the test, so that an analysis
that loads, chooses or reports before (or without) the sequence is caught, and none of them costs model time.
"""

from __future__ import annotations

import pytest

import probing
from probing.engine.specs import ModelSpec
from probing.plugins import analyses
from probing.stats.heldout import Choosing, HeldOut
from probing.testing import sample_split, tiny_bert

NEEDS = {"ablate": {"metric": "probe", "chosen": ["det"]}}
"""What a command needs beside --select-on to choose on DEV (``ablate`` chooses with --chosen)."""


def choosing_commands() -> list[str]:
    """Every command that takes --select-on and runs a model (an analysis made from result files, such as
    importance, names no accumulator and loads none)."""
    found = []
    for name in analyses().names():
        record = analyses()[name]
        for command in record.commands:
            options = command.option_set()
            if record.accumulator and options and any(entry.dest == "select_on" for entry in options.options):
                found.append(command.name)
    return sorted(found)


CHOOSING = choosing_commands()


class Reached(Exception):
    """The held-out sequence was reached."""


def test_the_analyses_that_choose_on_dev_are_all_found():
    assert set(CHOOSING) >= {"score", "trees", "coref", "ablate"}, CHOOSING


@pytest.mark.parametrize("command", CHOOSING)
def test_every_analysis_that_chooses_on_dev_runs_the_one_heldout_sequence(command, monkeypatch):
    given = []

    def sequence(held, analysis, load):
        given.append((held, analysis))
        raise Reached

    def load(*args, **kwargs):
        raise AssertionError(f"probing {command} loaded the model outside the held-out sequence")

    monkeypatch.setattr(HeldOut, "run", sequence)
    monkeypatch.setattr(ModelSpec, "load", load)
    dev, test = sample_split(10, 10)
    with pytest.raises(Reached):
        probing.run(command, model=tiny_bert(), treebank=test, select_on=dev, **NEEDS.get(command, {}))
    [(held, analysis)] = given
    assert held.select_on == dev and held.dev_source is not None and held.dev_result is None
    assert str(held.source.path).endswith("test.conllu")
    chooses, reports = type(analysis).choose, type(analysis).report
    assert chooses is not Choosing.choose and reports is not Choosing.report, "the analysis supplies both"


def test_the_sequence_loads_once_checks_chooses_reports_and_attaches_in_that_order():
    steps = []

    class Recorded(Choosing):
        def check_model(self, loaded, held):
            steps.append(("check", loaded))

        def choose(self, held, loaded):
            steps.append(("choose", held.dev_source))
            return "chosen"

        def report(self, chosen, held, loaded):
            steps.append(("report", chosen))
            return {"on": held.source}

        def attach(self, result, chosen, held):
            steps.append(("attach", chosen))
            return {**result, "heldout": chosen}

    def load():
        steps.append(("load", None))
        return "model"

    held = HeldOut("TEST", "DEV", dev_source="DEV units")
    assert held.run(Recorded(), load=load) == {"on": "TEST", "heldout": "chosen"}
    assert steps == [("load", None), ("check", "model"), ("choose", "DEV units"), ("report", "chosen"),
                     ("attach", "chosen")]
    steps.clear()
    assert HeldOut("TEST").run(Recorded(), load=load) == {"on": "TEST"}  # in-sample: nothing chosen or attached
    assert steps == [("load", None), ("check", "model"), ("report", None)]
