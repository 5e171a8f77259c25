"""One library call per analysis (docs/architecture.md): the command line and the Python API run the same function.

Each analysis's command names, in its registry record, the options its parser is made from and a library function
that takes the specs those options make; ``probing.run`` reads keywords into the same specs and calls the same
function. These tests hold that promise: a result made through the API equals the command's, every command that
writes a result has such a function, no library module reaches back into the command line, and every command's
``run()`` stays thin.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
from pathlib import Path

import pytest
from helpers import tiny_model

import probing
from probing.cli import main
from probing.plugins import analyses, resolve
from probing.testing import sample_split, tiny_bert

PACKAGE = Path(__file__).resolve().parents[1] / "probing"
MOST_LINES = 45
"""The longest a command's ``run()`` may be: it parses, builds its specs, calls its analysis and writes."""

VARYING = ("timing", "created", "environment", "seconds")
"""Blocks of a result, at any depth, that say when and how fast it was made, not what it found."""


def _numbers(result):
    """``result`` without its :data:`VARYING` blocks."""
    if isinstance(result, dict):
        return {name: _numbers(value) for name, value in result.items() if name not in VARYING}
    if isinstance(result, list):
        return [_numbers(value) for value in result]
    return result


def _by_command(command: str, argv: list[str], tmp_path: Path) -> dict:
    output = tmp_path / f"{command}.json"
    assert main([command, "--quiet", *argv, "--output", str(output)]) == 0
    return json.loads(output.read_text(encoding="utf-8"))


def _pair_file(folder: Path) -> str:
    from helpers import HAND_PAIRS

    path = folder / "pairs.jsonl"
    path.write_text("".join(json.dumps({"sentence_good": good, "sentence_bad": bad, "UID": "hand", "pairID": str(i)})
                            + "\n" for i, (good, bad) in enumerate(HAND_PAIRS["good_bad"])), encoding="utf-8")
    return str(path)


def _cases(tmp_path: Path) -> dict:
    model, (dev, test) = tiny_bert(), sample_split()
    common = {"model": model, "treebank": test, "limit": 12, "bootstrap": 20}
    return {
        "surface": {"model": model, "treebank": test, "limit": 12},
        "trees": {**common, "select_on": dev, "relations": ["det"], "no_probes": True},
        "ablate": {**common, "metric": "probe", "each_layer": True},
        "pairs": {"model": tiny_model("llama"), "pairs_file": _pair_file(tmp_path), "bootstrap": 20},
    }


def _argv(options: dict) -> list[str]:
    argv = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        argv += [flag] if value is True else [flag, *map(str, value)] if isinstance(value, list) else [flag, str(value)]
    return argv


@pytest.mark.parametrize("command", ["surface", "trees", "ablate", "pairs"])
def test_the_api_gives_the_commands_result(command, tmp_path):
    options = _cases(tmp_path)[command]
    by_api = probing.run(command, **options).data
    by_command = _by_command(command, _argv(options), tmp_path)
    assert _numbers(by_api) == _numbers(by_command)


@pytest.mark.parametrize("figure_format", ["png", "svg"])
def test_the_api_with_output_writes_the_files_the_command_writes(figure_format, tmp_path):
    """probing.run(..., output=) writes the result and the figures beside it that the command writes, byte for byte
    (the result's timing and creation time aside): one path writes both, in the format asked for."""
    options = {"model": tiny_bert(), "treebank": sample_split()[1], "limit": 8, "figure_format": figure_format}
    by_command, by_api = tmp_path / "command", tmp_path / "api"
    by_command.mkdir()
    by_api.mkdir()
    assert main(["surface", "--quiet", *_argv(options), "--output", str(by_command / "s.json")]) == 0
    probing.run("surface", output=by_api / "s.json", **options)
    names = sorted(path.name for path in by_command.iterdir())
    assert names == [f"s-entropy.{figure_format}", f"s-surface.{figure_format}", "s.json"]
    assert sorted(path.name for path in by_api.iterdir()) == names
    for name in names[:2] if figure_format == "png" else ():  # an SVG names its paths at random, each time anew
        assert (by_api / name).read_bytes() == (by_command / name).read_bytes(), name
    written = [json.loads((folder / "s.json").read_text(encoding="utf-8")) for folder in (by_command, by_api)]
    assert _numbers(written[0]) == _numbers(written[1])


def test_coref_through_the_api_is_the_commands(tmp_path):
    from coref_data import coref_treebank_path

    treebank = str(coref_treebank_path())
    by_api = probing.coref(tiny_bert(), treebank, bootstrap=10).data
    by_command = _by_command("coref", ["--model", tiny_bert(), "--treebank", treebank, "--bootstrap", "10"], tmp_path)
    assert _numbers(by_api) == _numbers(by_command)


def _writing_commands():
    return [(name, command) for name in analyses().names() for command in analyses()[name].commands
            if command.writes_result]


@pytest.mark.parametrize("analysis, command", _writing_commands(), ids=lambda value: getattr(value, "name", value))
def test_every_command_that_writes_a_result_has_a_library_function_reachable_from_probing_run(analysis, command):
    assert command.library, f"probing {command.name} names no library function"
    accepted, library = command.option_set(), resolve(command.library)
    assert accepted.command == f"probing {command.name}" and dataclasses.is_dataclass(accepted.spec)
    assert list(inspect.signature(library).parameters)[:4] == ["model", "inputs", "passes", "options"]
    if library.__module__.startswith("probing."):  # a built-in analysis keeps its function in its own folder
        folder = analyses()[analysis].payload.split(":")[0].rsplit(".", 1)[0]  # every analysis has one; importance
        # has no accumulator (it reads two results, no model)
        assert library.__module__.startswith(folder + "."), (library.__module__, folder)
    fields = {field.name for field in dataclasses.fields(accepted.spec)}
    assert fields <= {entry.dest for entry in accepted.options}, "an option of the analysis is not on its parser"


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
    return found


LIBRARY = [PACKAGE / "api.py", *sorted((PACKAGE / "analyses").rglob("*.py"))]


@pytest.mark.parametrize("path", LIBRARY, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_the_library_imports_no_command(path):
    reached = [name for name in _imports(path) if name.startswith(("probing.commands", "probing.cli"))]
    assert not reached, f"{path.relative_to(PACKAGE)} imports the command line: {reached}"


def test_no_context_variable_carries_a_result_or_a_hook():
    holders = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
               if "ContextVar" in path.read_text(encoding="utf-8")]
    assert holders == []


COMMANDS = sorted((PACKAGE / "commands").glob("*.py"))


def _declared_run() -> ast.FunctionDef:
    """``AnalysisCommand.run`` in commands/common.py: the run of every command declared as one."""
    tree = ast.parse((PACKAGE / "commands" / "common.py").read_text(encoding="utf-8"))
    declaration = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "AnalysisCommand")
    return next(node for node in declaration.body if isinstance(node, ast.FunctionDef) and node.name == "run")


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: path.stem)
def test_every_commands_run_stays_thin(path):
    """A command's run is its own ``def run`` or, for a command declared as an AnalysisCommand (``run =
    COMMAND.run``), the declaration's: either way at most MOST_LINES lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    runs = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "run"]
    declared = [node for node in tree.body if isinstance(node, ast.Assign)
                and [getattr(target, "id", None) for target in node.targets] == ["run"]]
    if declared:
        assert ast.unparse(declared[0].value) == "COMMAND.run", f"probing/commands/{path.name}: run is not declared"
        assert "AnalysisCommand(" in path.read_text(encoding="utf-8")
        runs.append(_declared_run())
    for run in runs:
        lines = run.end_lineno - run.lineno + 1
        assert lines <= MOST_LINES, f"probing/commands/{path.name}: run() is {lines} lines (at most {MOST_LINES})"
    assert runs or path.stem in ("__init__", "common")


def _calls(path: Path) -> set[str]:
    """The names of the functions ``path`` calls (``a.b(...)`` as ``b``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for node in ast.walk(tree) if isinstance(node, ast.Call)}


def test_one_place_sets_up_processes_ranks_and_checkpoints():
    """probing score went its own way (its ranks, its checkpointer, beside EngineCommand); every command now starts
    its run through EngineCommand.start, the one caller of the engine's setup."""
    setup = {"from_environment", "from_options", "Checkpointer"}
    callers = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                     if path.parent.name != "engine" and _calls(path) & setup)
    assert callers == ["commands/common.py"]


def test_score_runs_its_library_function_through_run_analysis(monkeypatch, tmp_path):
    """probing score is one engine command among the others: run_analysis checks its output, starts its run (the
    checkpoint of --output kept while it runs, dropped once the result is written) and writes the result."""
    import probing.commands.score as score_command
    from probing.commands.common import run_analysis

    called = []
    monkeypatch.setattr(score_command, "run_analysis",
                        lambda *args, **kwargs: called.append(kwargs["analysis"]) or run_analysis(*args, **kwargs))
    output = tmp_path / "score.json"
    assert main(["score", "--quiet", "--model", tiny_bert(), "--limit", "5", "--bootstrap", "0", "--checkpoint-every",
                 "0", "--output", str(output)]) == 0
    assert called == ["probe"] and output.is_file() and not Path(f"{output}.checkpoint").exists()


def test_the_api_checks_the_figures_beside_output_before_any_model_time(tmp_path, monkeypatch):
    from probing.errors import ProbingError
    from probing.testing import sample_path

    (tmp_path / "s-entropy.png").write_text("my notes, not a figure", encoding="utf-8")
    import probing.analyses.surface.run as surface_run

    monkeypatch.setattr(surface_run, "surface", lambda *args, **kwargs: pytest.fail("the analysis ran"))
    with pytest.raises(ProbingError, match="figure beside output"):
        probing.run("surface", model=tiny_bert(), treebank=str(sample_path()), limit=3, output=tmp_path / "s.json")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["s-entropy.png"]
