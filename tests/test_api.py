"""The Python API (docs/api.md): score as the command line does, read any result, objects over the JSON."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, real_treebank

import probing
from probing.errors import ProbingError
from probing.naming import DIRECTIONS
from probing.testing import sample_split, tiny_bert

RESULTS = REPO / "leaderboards"


@pytest.fixture(scope="module")
def held_out():
    dev, test = sample_split()
    return probing.score(tiny_bert(), test, select_on=dev, relations=["det", "all", "nsubj"], bootstrap=30)


@pytest.mark.slow
def test_import_probing_loads_no_model_framework_and_reading_needs_none():
    code = ("import sys, probing; probing.read(sys.argv[1]).to_frame(); "
            "print(sorted(name for name in ('torch', 'transformers') if name in sys.modules))")
    finished = subprocess.run([sys.executable, "-c", code, str(RESULTS / "en_ewt/results/all-MiniLM-L6-v2.json")],
                              capture_output=True, text=True, cwd=REPO, check=True)
    assert finished.stdout.strip() == "[]"


def test_per_head_accuracy_is_the_counts_over_the_pairs_and_the_frame_counts_from_1(held_out):
    data = held_out.data
    for name in held_out.relations:
        entry = data["relations"][name]
        accuracy = held_out.accuracy(name)
        assert accuracy.shape == (2, 4, 2)  # [layer, head, direction]
        for index, direction in enumerate(DIRECTIONS):
            assert np.array_equal(held_out.counts(name)[..., index], np.asarray(entry["heads"][direction]))
            assert np.allclose(accuracy[..., index], np.asarray(entry["heads"][direction]) / entry["total"])
    frame = held_out.to_frame()
    assert len(frame) == 3 * 2 * 4 * 2 and set(frame["layer"]) == {1, 2} and set(frame["head"]) == {1, 2, 3, 4}
    row = frame[(frame["relation"] == "det") & (frame["layer"] == 2) & (frame["head"] == 3)
                & (frame["direction"] == "head_to_dep")]
    assert float(row["accuracy"].iloc[0]) == held_out.accuracy("det")[1, 2, 1]


def test_the_chosen_head_of_a_held_out_result_is_the_dev_choice_with_its_test_interval(held_out):
    assert held_out.held_out
    for name, choice in held_out.chosen_heads().items():
        reported = held_out.data["heldout"]["relations"][name]["heldout"]["head"]
        assert (choice.layer, choice.head, choice.direction) == (reported["layer"], reported["head"],
                                                                 reported["direction"])
        assert choice.interval == tuple(reported["interval"]) == held_out.interval(name)
        index = DIRECTIONS.index(choice.direction)
        assert held_out.accuracy(name)[choice.layer, choice.head, index] == pytest.approx(choice.accuracy)
    with pytest.raises(KeyError, match="no relation 'dobj'"):
        held_out.accuracy("dobj")


def test_an_in_sample_result_chooses_its_own_best_and_has_no_interval():
    result = probing.score(tiny_bert(), limit=10, bootstrap=0, relations=["det"])
    assert not result.held_out and result.interval("det") is None
    best = result.data["relations"]["det"]["best"]
    assert result.chosen("det").name.startswith(f"{best['layer'] + 1}-{best['head'] + 1} ")


def test_read_gives_each_analysis_its_object_and_the_same_json(held_out, tmp_path):
    path = held_out.write(tmp_path / "heldout.json")
    again = probing.read(path)
    assert type(again) is probing.ProbeResult and again.data == held_out.data
    kinds = {"all-MiniLM-L6-v2.json": "ProbeResult", "all-MiniLM-L6-v2-trees.json": "TreesResult",
             "all-MiniLM-L6-v2-noop.json": "Result"}
    for name, kind in kinds.items():
        assert type(probing.read(RESULTS / "en_ewt" / "results" / name)).__name__ == kind, name
    coref = probing.read(RESULTS / "en_gum" / "results" / "all-MiniLM-L6-v2-coref.json")
    assert type(coref).__name__ == "CorefResult" and coref.accuracy("pronoun").shape == (6, 12, 2)
    frame = coref.to_frame()
    assert set(frame["type"]) == set(coref.types) and len(frame) == len(coref.types) * 6 * 12 * 2


def test_a_trees_result_gives_every_head_as_a_tree():
    trees = probing.read(RESULTS / "en_ewt" / "results" / "all-MiniLM-L6-v2-trees.json")
    block = trees.data["trees"]["decodings"]["mst"]["uas"]
    assert np.allclose(trees.accuracy("mst", "uas")[..., 0], np.asarray(block["dep_to_head"]) / trees.words)
    assert trees.chosen("max", "uuas").interval is not None
    frame = trees.to_frame()
    assert set(zip(frame["decoding"], frame["metric"])) == {(d, m) for d in ("max", "mst") for m in ("uas", "uuas")}
    with pytest.raises(KeyError, match="decoding is one of"):
        trees.accuracy("argmax")


def test_to_frame_without_pandas_says_how_to_get_it(held_out, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    # PyPI's "probing" is another project: the hint names what installs from a clone, or pandas itself.
    with pytest.raises(ProbingError, match=r"pip install pandas .*pip install -e '\.\[frames\]'") as raised:
        held_out.to_frame()
    assert "probing[" not in str(raised.value)


@pytest.mark.real_data
def test_a_bare_treebank_name_is_held_out_as_on_the_command_line(monkeypatch):
    dev = real_treebank("en_ewt", "dev")
    real_treebank("en_ewt", "test")
    monkeypatch.setenv("PROBING_TREEBANKS", str(dev.parents[1]))
    result = probing.score(tiny_bert(), "en_ewt", limit=30, bootstrap=20, relations=["det"])
    assert result.held_out and result.data["input"]["path"] == "en_ewt:test"
    assert result.data["heldout"]["select_on"]["spec"] == "en_ewt:dev"


def test_coref_runs_as_the_command_does_and_gives_its_object(tmp_path, capsys):
    from coref_data import coref_treebank_path

    from probing.cli import main

    treebank = str(coref_treebank_path())
    result = probing.coref(tiny_bert(), treebank, bootstrap=0, output=tmp_path / "api.json")
    assert isinstance(result, probing.CorefResult) and (tmp_path / "api.json").exists()
    assert main(["coref", "--quiet", "--model", tiny_bert(), "--treebank", treebank, "--bootstrap", "0",
                 "--output", str(tmp_path / "cli.json")]) == 0
    capsys.readouterr()
    by_cli = probing.read(tmp_path / "cli.json")
    assert result.data["coref"] == by_cli.data["coref"]
    assert result.chosen().name == by_cli.chosen().name


READINGS = {
    "trees": ({"relations": ("det",), "drop_probe_weights": True, "limit": "3", "no_progress": True},
              ["--relations", "det", "--drop-probe-weights", "--limit", "3", "--no-progress"]),
    "ablate": ({"metric": "probe", "heads": ["1-1", "2-3"], "batch_size": 8, "mask_rate": 0.3},
               ["--metric", "probe", "--heads", "1-1", "--heads", "2-3", "--batch-size", "8", "--mask-rate", "0.3"]),
    "pairs": ({"model": "m", "phenomena": "island_effects", "shard": "1/4", "context": "eos"},
              ["--model", "m", "--phenomena", "island_effects", "--shard", "1/4", "--context", "eos"]),
    "score": ({"relations": ["det", "amod"], "select_on": "dev.conllu", "quiet": True},
              ["--relations", "det", "amod", "--select-on", "dev.conllu", "--quiet"]),
    "coref": ({"window": 64, "bootstrap": 0}, ["--window", "64", "--bootstrap", "0"]),
    "surface": ({}, []),
}


@pytest.mark.parametrize("command", sorted(READINGS))
def test_keywords_read_as_the_command_line_parses_the_same_options(command):
    from probing.cli import command_parser
    from probing.plugins import commands

    keywords, argv = READINGS[command]
    assert commands()[command].option_set().values(keywords) == vars(command_parser(command).parse_args(argv))


def test_run_refuses_bad_options_by_name_and_what_writes_no_result():
    with pytest.raises(ProbingError, match="--metric: required"):
        probing.run("ablate", model=tiny_bert(), each_head=True)
    with pytest.raises(ProbingError, match="--each-layer: not allowed with argument --each-head"):
        probing.run("ablate", model=tiny_bert(), metric="mlm", each_head=True, each_layer=True)
    with pytest.raises(ProbingError, match="one of the arguments --heads --each-head --each-layer --chosen"):
        probing.run("ablate", model=tiny_bert(), metric="mlm")
    with pytest.raises(ProbingError, match="--dtype: invalid choice"):
        probing.run("surface", model=tiny_bert(), dtype="float8")
    with pytest.raises(ProbingError, match="writes no result"):
        probing.run("leaderboard")
    with pytest.raises(ProbingError, match="--limit"):
        probing.run("surface", model=tiny_bert(), limit=-1)
    with pytest.raises(ProbingError, match="--no-such-option: probing surface has no such option"):
        probing.run("surface", model=tiny_bert(), no_such_option=3)
    with pytest.raises(ProbingError, match="--drop-probe-weights: with --no-probes"):
        probing.trees(tiny_bert(), no_probes=True, drop_probe_weights=True)
    with pytest.raises(ProbingError, match="--checkpoint: belongs to the command line"):
        probing.run("surface", model=tiny_bert(), checkpoint="run.checkpoint")


def test_run_gives_the_result_in_memory_without_a_temporary_file_or_argparse_and_writes_output_when_given(
        tmp_path, monkeypatch):
    import argparse
    import tempfile

    from probing.testing import sample_path

    def refused(*args, **kwargs):
        raise AssertionError("probing.run made a temporary file or a parser")

    options = dict(model=tiny_bert(), treebank=str(sample_path()), limit=5)
    with monkeypatch.context() as patched:
        for name in ("TemporaryDirectory", "NamedTemporaryFile", "mkdtemp", "mkstemp"):
            patched.setattr(tempfile, name, refused)
        patched.setattr(argparse.ArgumentParser, "__init__", refused)
        in_memory = probing.run("surface", **options)
    assert in_memory.analysis == "surface" and not list(tmp_path.iterdir())
    written = probing.run("surface", output=tmp_path / "surface.json", **options)
    assert sorted(path.name for path in tmp_path.iterdir()) == [  # with the figures the command draws beside it
        "surface-entropy.png", "surface-surface.png", "surface.json"]
    assert written.data["surface"] == in_memory.data["surface"] == probing.read(tmp_path / "surface.json").data["surface"]


def test_every_analysis_result_has_per_head_arrays_a_frame_and_no_selection_where_nothing_is_chosen(tmp_path):
    model, (dev, test) = tiny_bert(), sample_split()
    surface = probing.run("surface", model=model, treebank=test, limit=10)
    grids = surface.grids()
    heads = surface.data["surface"]["heads"]
    assert set(grids) == {f"surface.heads.{name}" for name in heads}
    name = next(iter(heads))
    np.testing.assert_allclose(surface.grid(f"surface.heads.{name}"), np.array(heads[name], dtype=float))
    frame = surface.to_frame()
    assert len(frame) == sum(grid.size for grid in grids.values()) and int(frame["layer"].min()) == 1
    assert int(frame["head"].max()) == surface.data["model"]["num_heads"]
    # surface chooses nothing: neither held out nor in-sample
    assert surface.selection is None and "in-sample" not in repr(surface) and surface.tables() == []
    with pytest.raises(KeyError, match="surface.heads.entropy"):
        surface.grid("surface.nosuch")

    ablation = probing.run("ablate", model=model, treebank=test, select_on=dev, limit=10, metric="probe",
                           chosen=["det"], k=2, random=3, bootstrap=20)
    frame = ablation.to_frame()
    assert set(frame["condition"]) == set(ablation.conditions) and "det@2:chosen" in ablation.conditions
    chosen = frame[(frame["condition"] == "det@2:chosen") & (frame["part"] == "det")].iloc[0]
    entry = next(c for c in ablation.data["conditions"] if c["label"] == "det@2:chosen")["parts"]["det"]
    assert (chosen["value"], chosen["change"], chosen["low"]) == (entry["value"], entry["change"], entry["interval"][0])
    assert ablation.selection == "held-out" and len(ablation.tables()) == 1
    assert type(probing.read(ablation.write(tmp_path / "ablation.json"))).__name__ == "AblationResult"


@pytest.mark.parametrize("call, option", [
    (lambda: probing.run("surface", model=tiny_bert(), limit="abc"), "--limit"),
    (lambda: probing.run("surface", model=tiny_bert(), help=True), "help"),
    (lambda: probing.score(tiny_bert(), limit="abc"), "--limit"),
    (lambda: probing.trees(tiny_bert(), ensemble_size=0), "--ensemble-size"),
], ids=["run-limit", "run-help", "score-limit", "trees-ensemble-size"])
def test_a_bad_option_is_one_error_naming_it_with_nothing_chained(call, option):
    with pytest.raises(ProbingError) as raised:
        call()
    assert option in str(raised.value) and "\n" not in str(raised.value)
    assert raised.value.__cause__ is None and raised.value.__context__ is None


def test_a_single_name_where_several_are_taken_is_one_value():
    result = probing.score(tiny_bert(), relations="det", limit=5, bootstrap=0)
    assert result.relations == ["det"]
