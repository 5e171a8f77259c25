"""The command line is one command line: shared options, one-line errors, honest help.

Every command that reads attention takes the same options, with the same
names, metavars and defaults; the table below (:data:`SHARED`) is what a user
may rely on, written down here rather than read from probing/commands/common.py,
so that a change there has to be a deliberate change here too. Every mistake a
user can make on the command line is one line on stderr with exit status 2 that
names the option (or the file) typed; a bug is exit status 1 and one line that
names a log file holding the traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from probing.cli import command_parser, commands, main
from probing.testing import tiny_bert

REPO = Path(__file__).resolve().parents[1]

ATTENTION_COMMANDS = ("score", "surface", "heads", "patterns", "compare", "ablate", "gradients", "report", "coref",
                      "trees", "explore")
"""The commands that run a model over an input."""

ABSENT = object()

SHARED = {
    # option: (argparse group, metavar, default); metavar None is a flag
    "--model": ("model", "ID_OR_FOLDER", None),
    "--revision": ("model", "REV", None),
    "--dtype": ("model", "DTYPE", "float32"),
    "--device": ("model", "DEVICE", "cpu"),
    "--device-map": ("model", "MAP", None),
    "--trust-remote-code": ("model", None, False),
    "--stack": ("model", "STACK", None),
    "--seed": ("model", "N", 0),
    "--treebank": ("input", "FILE_OR_NAME", None),
    "--limit": ("input", "N", None),
    "--batch-size": ("batching", "N", 32),
    "--max-length": ("batching", "N", None),
    "--workers": ("batching", "N", 0),
    "--attention": ("attention", "READING", "weights"),
    "--shard": ("long runs", "I/N", None),
    "--checkpoint": ("long runs", "FILE", None),
    "--checkpoint-every": ("long runs", "SECONDS", 300),
    "--resume": ("long runs", None, False),
    "--output": ("output", "FILE", None),
    "--follow-symlinks": ("output", None, False),
    # None: on a terminal a bar, off one a line per stage and now and then (--progress/--no-progress force either)
    "--progress": ("options", None, None),
    "--no-progress": ("options", None, None),
    "--quiet": ("options", None, None),
}
"""What every attention command offers; the exceptions below say where and why one differs."""

EXCEPTIONS = {
    # gradients differentiate the loss with respect to the raw attention weights: no other reading applies
    ("gradients", "--attention"): ABSENT,
    # a report is a folder of files, not one file
    ("report", "--output"): ("output", "FOLDER", None),
}


def expected(command: str, option: str):
    return EXCEPTIONS.get((command, option), SHARED[option])


def option_action(parser: argparse.ArgumentParser, option: str) -> argparse.Action | None:
    return next((action for action in parser._actions if option in action.option_strings), None)


def group_of(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    return next(group.title for group in parser._action_groups if action in group._group_actions)


@pytest.mark.parametrize("command", ATTENTION_COMMANDS)
def test_attention_commands_share_options_names_metavars_and_defaults(command):
    parser = command_parser(command)
    for option in SHARED:
        want = expected(command, option)
        action = option_action(parser, option)
        if want is ABSENT:
            assert action is None, f"{command} {option}: listed as absent but present"
            continue
        assert action is not None, f"{command} lacks {option}"
        group, metavar, default = want
        assert group_of(parser, action) == group, f"{command} {option}"
        assert action.metavar == metavar, f"{command} {option}"
        if metavar is None:
            assert action.nargs == 0, f"{command} {option} should be a flag"
        assert action.default == default, f"{command} {option}"


DEFAULTS_THAT_DIFFER = {
    # trees measures whole trees separately: its ensembles are per relation, so "all" is not among them;
    # importance scores nothing: it reads the relations its DEV result holds, by default every one of them
    "--relations": {"trees", "importance"},
}
"""Options whose default is not the same in every command that has them, and the commands that differ."""


def _options_of_every_command() -> dict[str, dict[str, argparse.Action]]:
    """Option -> {command: its action} over every command (a command with sub-actions, such as data, by
    its own options only)."""
    found: dict[str, dict[str, argparse.Action]] = {}
    for name in commands():
        for action in command_parser(name)._actions:
            for option in action.option_strings:
                if option.startswith("--") and option not in ("--help", "--version"):
                    found.setdefault(option, {})[name] = action
    return found


def test_an_option_has_one_default_in_every_command_that_takes_it():
    for option, actions in _options_of_every_command().items():
        differing = DEFAULTS_THAT_DIFFER.get(option, set())
        defaults = {repr(action.default) for name, action in actions.items() if name not in differing}
        assert len(defaults) <= 1, f"{option}: {({name: action.default for name, action in actions.items()})}"
    assert {action.default for action in _options_of_every_command()["--bootstrap"].values()} == {1000}


def test_usage_lines_show_required_options_as_required():
    """argparse writes an optional option in [brackets] and a required one bare: the usage line says which a
    command cannot run without (explore's page, report's folder)."""
    for name in commands():
        parser = command_parser(name)
        usage = " ".join(parser.format_usage().split())
        for action in parser._actions:
            if action.option_strings and action.required:
                shown = f"{action.option_strings[0]} {action.metavar}" if action.nargs != 0 else action.option_strings[0]
                assert shown in usage and f"[{shown}" not in usage, (name, shown, usage)
    for name in ("explore", "report", "merge", "plot"):
        assert option_action(command_parser(name), "--output").required, name


def test_every_command_is_listed_and_has_a_parser():
    assert set(ATTENTION_COMMANDS) < set(commands())
    for name in commands():
        assert isinstance(command_parser(name), argparse.ArgumentParser)


# ---------------------------------------------------------------------------- one-line errors


def _required_arguments(command: str, tmp_path: Path) -> list[str]:
    """What a command needs besides the option under test, so that parsing gets that far."""
    return {
        "compare": ["--second-model", "./no-such-second-model"],
        "ablate": ["--metric", "probe", "--each-layer"],
        "report": ["--output", str(tmp_path / "report")],
        "explore": ["--output", str(tmp_path / "page.html")],
    }.get(command, [])


def _missing(tmp_path: Path) -> str:
    return str(tmp_path / "no-such-input.conllu")


BAD_OPTIONS = {
    # case: (arguments, what the one line must name)
    "batch size 0": (lambda tmp: ["--batch-size", "0"], lambda tmp: ["--batch-size", "0"]),
    "limit -1": (lambda tmp: ["--limit", "-1"], lambda tmp: ["--limit", "-1"]),
    "missing input file": (lambda tmp: ["--treebank", _missing(tmp)], lambda tmp: ["--treebank", _missing(tmp)]),
    "unknown model folder": (lambda tmp: ["--model", "./no-such-model"],
                             lambda tmp: ["--model", "./no-such-model", "model folder not found"]),
}

POSITIONAL_INPUT = {
    # commands whose input file is a positional argument: the line names the file typed
    "merge": lambda tmp: [_missing(tmp), "--output", str(tmp / "merged.json")],
    "leaderboard": lambda tmp: [_missing(tmp)],
    "plot": lambda tmp: [_missing(tmp), "--output", str(tmp / "plot.png")],
    "transfer": lambda tmp: [_missing(tmp)],
    "importance": lambda tmp: [_missing(tmp), "--select-on", str(tmp / "dev.json")],
}

SKIPPED = {
    ("merge", "batch size 0"): "merge adds up result files: no batches",
    ("merge", "limit -1"): "merge adds up whole result files",
    ("merge", "unknown model folder"): "merge reads no model",
    ("leaderboard", "batch size 0"): "leaderboard reads result files: no batches",
    ("leaderboard", "limit -1"): "leaderboard reads whole result files",
    ("leaderboard", "unknown model folder"): "leaderboard reads no model",
    ("plot", "batch size 0"): "plot reads a result file: no batches",
    ("plot", "limit -1"): "plot reads a whole result file",
    ("plot", "unknown model folder"): "plot reads no model",
    ("transfer", "batch size 0"): "transfer reads result files: no batches",
    ("transfer", "limit -1"): "transfer reads whole result files",
    ("transfer", "unknown model folder"): "transfer reads no model",
    ("importance", "batch size 0"): "importance reads result files: no batches",
    ("importance", "limit -1"): "importance reads whole result files",
    ("importance", "unknown model folder"): "importance reads no model",
    ("data", "batch size 0"): "data fetches treebanks: no batches",
    ("data", "limit -1"): "data fetches whole treebanks",
    ("data", "missing input file"): "data reads no local input",
    ("data", "unknown model folder"): "data reads no model",
    ("pairs", "missing input file"): "pairs reads BLiMP (--blimp), not a treebank",
}
"""Combinations of command and mistake that cannot happen: the command has no such option (they are not
generated, and test_the_left_out_combinations_are_exactly_the_missing_options checks this list)."""

OPTION_OF_CASE = {"batch size 0": "--batch-size", "limit -1": "--limit", "missing input file": "--treebank",
                  "unknown model folder": "--model"}


def _error_cases():
    """Every command with every mistake it can be given (SKIPPED lists the others, and a test checks that list)."""
    for command in commands():
        for case in BAD_OPTIONS:
            if (command, case) not in SKIPPED:
                yield pytest.param(command, case, id=f"{command}-{case}")


def assert_one_line_error(code: int, out: str, err: str, *fragments: str, status: int = 2) -> None:
    assert code == status, err
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line: {err!r}"
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in {err!r}"


@pytest.fixture(scope="module")
def model() -> str:
    return tiny_bert()


@pytest.mark.parametrize("command, case", list(_error_cases()))
def test_every_command_reports_a_mistake_in_one_line(command, case, tmp_path, capsys, model):
    if command in POSITIONAL_INPUT:
        argv, fragments = POSITIONAL_INPUT[command](tmp_path), [_missing(tmp_path), "not found"]
    else:
        make_args, make_fragments = BAD_OPTIONS[case]
        base = [] if case == "unknown model folder" else ["--model", model]
        argv = base + _required_arguments(command, tmp_path) + make_args(tmp_path)
        fragments = make_fragments(tmp_path)
    code = main([command, *argv])
    captured = capsys.readouterr()
    assert_one_line_error(code, captured.out, captured.err, f"probing {command}: error:", *fragments)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written, not even a report folder


def test_the_left_out_combinations_are_exactly_the_missing_options():
    for command in commands():
        options = {string for action in command_parser(command)._actions for string in action.option_strings}
        for case, option in OPTION_OF_CASE.items():
            lacks = option not in options
            if case == "missing input file" and command in POSITIONAL_INPUT:
                continue  # its input is positional and tested as such
            assert lacks == ((command, case) in SKIPPED), f"{command} {option}"


# ---------------------------------------------------------------------------- help text


def _parsers():
    """Every command's parser, and the parsers of its own subcommands (probing data fetch)."""

    def walk(name, parser):
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, subparser in action.choices.items():
                    yield from walk(f"{name} {sub}", subparser)

    for command in commands():
        yield from walk(command, command_parser(command))


PARSERS = dict(_parsers())

UPPERCASE_WORDS = re.compile(r"^[A-Z][A-Z0-9_]*([/,.-]+[A-Z0-9_]*)*$")
"""A metavar as the help shows it: FILE, ID_OR_FOLDER, I/N, L-H,... (no lowercase, no {choices})."""


def _shown_metavar(action: argparse.Action) -> str | None:
    """The metavar the help prints (argparse's own rule: metavar, else choices, else the dest)."""
    if action.nargs == 0:
        return None
    if action.metavar is not None:
        return action.metavar if isinstance(action.metavar, str) else " ".join(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _as_typed(default) -> str:
    """A default as a user would type it: 300 not 300.0, dobj det not ['dobj', 'det']."""
    if isinstance(default, (list, tuple)):
        return " ".join(map(str, default))
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    return str(default)


@pytest.mark.parametrize("name", PARSERS)
def test_help_is_clean(name):
    parser = PARSERS[name]
    text = parser.format_help()
    assert "%%" not in text and "%(" not in text, name
    assert not re.search(r"\[\s*'", text), f"{name}: a Python list in the help"
    assert not re.search(r"\bNone\b", text), f"{name}: 'None' in the help"
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        label = f"{name} {action.option_strings[0] if action.option_strings else action.dest}"
        assert action.help and action.help != argparse.SUPPRESS, f"{label}: no help string"
        shown = _shown_metavar(action)
        if shown is not None:
            assert UPPERCASE_WORDS.match(shown), f"{label}: metavar {shown!r} is not UPPERCASE words"
        default = action.default
        if action.option_strings and action.nargs != 0 and default not in (None, argparse.SUPPRESS, [], ()):
            assert f"default: {_as_typed(default)}" in " ".join(action.help.split()), \
                f"{label}: the help does not say its default as typed ({_as_typed(default)})"


def _env() -> dict:
    """This checkout first on the path, so a subprocess runs the code under test."""
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": str(REPO) + (os.pathsep + path if path else "")}


@pytest.mark.slow
def test_top_level_help_exits_0_and_lists_every_command():
    completed = subprocess.run([sys.executable, "-m", "probing", "--help"], capture_output=True, text=True,
                               env=_env(), timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    for command in commands():
        assert re.search(rf"^\s+{command}\s", completed.stdout, re.MULTILINE), command


@pytest.mark.parametrize("command", commands())
def test_command_help_exits_0(command, capsys):
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"usage: probing {command}") and captured.err == ""


def test_an_unknown_command_is_one_line(capsys):
    code = main(["scroe", "--model", "x"])
    captured = capsys.readouterr()
    assert_one_line_error(code, captured.out, captured.err, "unknown command 'scroe'", "score")


# ---------------------------------------------------------------------------- bugs


def test_a_bug_is_exit_1_and_one_line_naming_a_log_with_the_traceback(tmp_path, monkeypatch, capsys):
    import probing.commands.surface as surface

    def broken(args):
        raise RuntimeError("an internal inconsistency")

    monkeypatch.setenv("PROBING_CACHE", str(tmp_path))
    monkeypatch.setattr(surface, "run", broken)
    code = main(["surface", "--limit", "1"])
    captured = capsys.readouterr()
    assert_one_line_error(code, captured.out, captured.err, "bug", "RuntimeError", status=1)
    found = re.search(r"traceback is in (\S+?);", captured.err)
    assert found, captured.err
    log = Path(found.group(1))
    assert log.is_file() and tmp_path in log.parents
    text = log.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text
    assert "RuntimeError: an internal inconsistency" in text and "in broken" in text
    assert "probing surface --limit 1" in text



@pytest.mark.slow
def test_a_reader_that_leaves_early_is_not_a_bug(tmp_path):
    # `probing data list | head -1`: the pipe is closed before the command writes, so every write fails
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {**os.environ, "PROBING_CACHE": str(tmp_path)}
    try:
        done = subprocess.run([sys.executable, "-m", "probing", "data", "list"], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    finally:
        os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""  # no "internal error", no "Exception ignored" at exit
    assert not (tmp_path / "logs").exists()


BAD_VALUES = {"--limit": "abc", "--relations": "nosuch", "--treebank": "no-such-file.conllu",
               "--text": "no-such-file.txt", "--dtype": "float8", "--stack": "middle", "--bootstrap": "-1"}
"""A bad value for each option that a command can check without a model framework, given where it is taken."""

NO_TORCH_PROBE = """
import json, sys
from probing.cli import command_parser, commands, main

class Refuse:  # an import of torch or transformers is recorded and made to fail, so the case stops there
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "transformers"):
            raise ImportError("imported " + name)

sys.meta_path.insert(0, Refuse())
cases = []
for name in commands():
    options = command_parser(name)._option_string_actions
    cases.append([name, "--no-such-option"])
    cases += [[name, option, value] for option, value in json.loads(sys.argv[1]).items() if option in options]
found = {}
for argv in cases:
    try:
        status = main(argv)
    except SystemExit as error:
        status = error.code
    found[" ".join(argv)] = status
print(json.dumps(found))
"""


@pytest.mark.slow
def test_a_bad_option_is_refused_before_torch_is_imported(tmp_path):
    """Each command checks its options before it imports torch (seconds): a mistake costs a fraction of a
    second. The probe makes any import of torch or transformers fail, so a case that reaches one is not exit 2
    with the option's error but a bug (exit 1) naming the import."""
    import json

    env = {**os.environ, "PROBING_CACHE": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", NO_TORCH_PROBE, json.dumps(BAD_VALUES)], capture_output=True,
                          text=True, env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert len(found) > 2 * len(commands()) and any("--relations" in case for case in found)
    assert {case: status for case, status in found.items() if status != 2} == {}, done.stderr
    assert "imported" not in done.stderr and done.stderr.count("\n") == len(found)
