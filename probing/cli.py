"""The command line: thin argument parsing over the library, one module per command.

Each command lives in ``probing/commands/<name>.py`` with ``add_arguments(parser)``
and ``run(args) -> int``; modules are imported only when their command runs, so
``probing --help`` is instant and table commands never import torch.

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

from probing.version import __version__
from probing.errors import ProbingError

COMMANDS = {
    "score": "score every attention head on a dependency treebank (Clark et al. 2019, sec. 4)",
    "merge": "add up the result files of --shard I/N parts into the result of one run",
    "leaderboard": "one table of held-out head accuracy per model, with intervals (md, csv, json, latex, html)",
    "transfer": "one model's heads across languages: transfer matrices per relation and the atlas figure",
    "plot": "layer x head heatmaps of a result's accuracy per relation and direction (png, svg, pdf)",
    "trees": "does attention hold the whole tree? heads as trees (MAX, MST), head ensembles, attention probes: UAS",
    "surface": "attention to [CLS], [SEP], punctuation, previous/next/self, and entropy, per head (Clark et al. sec. 3)",
    "heads": "Jensen-Shannon distances between heads, MDS map coloured by behaviour (Clark et al. sec. 6)",
    "gradients": "gradient of the LM loss w.r.t. attention to [SEP] vs other tokens (Clark et al. Fig. 3)",
    "patterns": "attention pattern type of every head: vertical, diagonal, block, ... (Kovaleva et al. 2019)",
    "coref": "heads that find a mention's antecedent, by mention type, against three baselines (Clark et al. sec. 4.3)",
    "compare": "per-head cosine similarity of two checkpoints' attention maps (Kovaleva et al. 2019)",
    "ablate": "disable heads (uniform attention) and measure the change in a metric (Kovaleva et al. 2019)",
    "pairs": "a causal LM on BLiMP's minimal pairs: accuracy per paradigm, per field and overall, with intervals",
    "report": "surface, heads, gradients and the probe on the same sentences: one folder with a Markdown summary",
    "explore": "one self-contained HTML page: heatmaps, sentence views of any head, the no-op test, the tables",
    "data": "fetch public UD treebanks into the local cache",
}
"""Command name -> one-line help; the module is probing.commands.<name>."""


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
    for name, help_text in COMMANDS.items():
        subparsers.add_parser(name, help=help_text, description=help_text, add_help=False)
    return parser


def command_parser(name: str) -> argparse.ArgumentParser:
    """The full parser of one command (its module's arguments)."""
    module = importlib.import_module(f"probing.commands.{name}")
    parser = CommandParser(prog=f"probing {name}", description=COMMANDS[name],
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    module.add_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    name = argv[0] if argv and not argv[0].startswith("-") else None
    try:
        if name is None:
            parser = build_parser()
            parser.parse_args(argv)  # --help and --version exit here
            parser.print_help()
            return 0
        if name not in COMMANDS:
            raise UsageError(f"unknown command {name!r}; use one of: {', '.join(COMMANDS)} (see probing --help)")
        args = command_parser(name).parse_args(argv[1:])
        module = importlib.import_module(f"probing.commands.{name}")
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
        path.write_text(text, encoding="utf-8")
    except OSError:
        return Path("(could not write a log)")
    return path


if __name__ == "__main__":
    sys.exit(main())
