"""The command line: thin argument parsing over the library, one module per command.

Each analysis names its commands in its registry record (probing.plugins), and
the few that combine analyses are :data:`CORE_COMMANDS`; a command's module has
``add_arguments(parser)`` and ``run(args) -> int``, and is imported only when
its command runs, so ``probing --help`` is instant and table commands never
import torch.

Every command runs behind one handler: a user's mistake (a
:class:`~probing.errors.ProbingError`, or a bad option) is one line on stderr
and exit status 2; anything else is a bug in probing, reported as one line
that names the log file holding the traceback, with exit status 1.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import os
import sys
import tempfile
import traceback
from pathlib import Path

from probing.atomic import write_text_atomic
from probing.errors import ProbingError
from probing.plugins import Command
from probing.version import __version__

CORE_COMMANDS = (
    Command("merge", "add up the result files of --shard I/N parts into the result of one run",
            "probing.commands.merge", order=20),
    Command("leaderboard", "one table of held-out head accuracy per model, with intervals (md, csv, json, latex, html)",
            "probing.commands.leaderboard", order=30),
    Command("report", "surface, heads, gradients and the probe on the same sentences: one folder with a Markdown summary",
            "probing.commands.report", order=140),
    Command("explore", "one self-contained HTML page: heatmaps, sentence views of any head, the no-op test, the tables",
            "probing.commands.explore", order=150),
    Command("data", "fetch public UD treebanks into the local cache", "probing.commands.data", order=160),
)
"""The commands that belong to no one analysis (they combine results or runs of several, or fetch data); each
analysis brings its own commands in its registry record (probing.plugins)."""


def commands() -> dict[str, Command]:
    """Every command by name, in ``probing --help`` order: the core ones and every analysis's, plug-ins included.

    >>> list(commands())[:3]
    ['score', 'merge', 'leaderboard']
    """
    from probing.plugins import commands as analysis_commands

    found = {**analysis_commands(), **{command.name: command for command in CORE_COMMANDS}}
    return dict(sorted(found.items(), key=lambda item: (item[1].order, item[0])))


class CommandParser(argparse.ArgumentParser):
    """argparse with one-line errors: the message and where to read more, not the whole usage block."""

    def error(self, message: str):
        raise UsageError(f"{message} (see {self.prog} --help)")


class UsageError(ProbingError):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="probing",
        description="Which attention heads track which syntactic relations, and how much better than a "
        "positional baseline? (Clark et al. 2019, 'What Does BERT Look At?')",
    )
    parser.add_argument("--version", action="version", version=f"probing {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in commands().items():
        subparsers.add_parser(name, help=command.help, description=command.help, add_help=False)
    return parser


def command_parser(name: str) -> argparse.ArgumentParser:
    """The full parser of one command (its module's arguments)."""
    command = commands()[name]
    module = importlib.import_module(command.module)
    parser = CommandParser(prog=f"probing {name}", description=command.help,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    module.add_arguments(parser)
    return parser


def check_path_names(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse a path with a component longer than the system allows, naming the option, before any command looks
    at it (probing.engine.arguments.check_path_names, which the Python API calls on its keywords too).

    >>> parser = CommandParser(prog="probing x")
    >>> _ = parser.add_argument("--output", metavar="FILE")
    >>> check_path_names(parser, parser.parse_args(["--output", "a/" + "b" * 300]))
    Traceback (most recent call last):
    probing.errors.ProbingError: --output: a name in the path is 300 bytes long; file names can be at most 255
    """
    from probing.engine.arguments import check_path_names as check

    check((action.option_strings[0] if action.option_strings else action.metavar, action.metavar,
           getattr(args, action.dest, None)) for action in parser._actions)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    name = argv[0] if argv and not argv[0].startswith("-") else None
    try:
        if name is None:
            parser = build_parser()
            parser.parse_args(argv)  # --help and --version exit here
            parser.print_help()
            return 0
        known = commands()
        if name not in known:
            raise UsageError(f"unknown command {name!r}; use one of: {', '.join(known)} (see probing --help)")
        parser = command_parser(name)
        args = parser.parse_args(argv[1:])
        check_path_names(parser, args)
        from probing.commands.common import check_before_import

        check_before_import(args)  # before the command imports torch (seconds), what needs no model is checked
        module = importlib.import_module(known[name].module)
        status = module.run(args)
        sys.stdout.flush()  # a reader that left shows up here, inside the handlers below, not at exit
        return status
    except ProbingError as error:
        print(f"probing{' ' + name if name else ''}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"probing{' ' + name if name else ''}: interrupted", file=sys.stderr)
        return 130
    except SystemExit:
        raise
    except BrokenPipeError:  # the reader of our output left (`probing ... | head`): not a bug, stop quietly
        _silence_stdout()
        return 141  # what a process killed by SIGPIPE reports, as `cat` would
    except BaseException as error:  # a bug: one line here, the traceback in a log file
        log = _write_bug_log(argv, error)
        print(f"probing{' ' + name if name else ''}: internal error ({type(error).__name__}: "
              f"{str(error).splitlines()[0] if str(error) else ''}); this is a bug in probing. The traceback is in "
              f"{log}; please report it", file=sys.stderr)
        return 1


def _silence_stdout() -> None:
    """Point stdout at the null device, so that flushing it at exit does not raise BrokenPipeError again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (replaced, as under a test runner)
        pass


def _write_bug_log(argv: list[str], error: BaseException) -> Path:
    folder = Path(os.environ.get("PROBING_CACHE") or Path.home() / ".cache" / "probing") / "logs"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        folder = Path(tempfile.gettempdir())
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = folder / f"probing-bug-{stamp}-{os.getpid()}.log"
    text = f"probing {__version__}\ncommand: probing {' '.join(argv)}\n\n" + "".join(
        traceback.format_exception(type(error), error, error.__traceback__)
    )
    try:
        write_text_atomic(text, path)
    except (OSError, ProbingError):  # the log is a courtesy: failing to write it must not hide the bug
        return Path("(could not write a log)")
    return path


if __name__ == "__main__":
    sys.exit(main())
