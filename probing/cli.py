"""The command line: thin argument parsing over the library, one module per command.

Each command lives in ``probing/commands/<name>.py`` with ``add_arguments(parser)``
and ``run(args) -> int``; modules are imported only when their command runs, so
``probing --help`` is instant and table commands never import torch.

A :class:`~probing.errors.ProbingError` becomes one line on stderr and exit
status 2; any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .errors import ProbingError

COMMANDS = {
    "score": "score every attention head on a dependency treebank (Clark et al. 2019, sec. 4)",
    "data": "fetch public UD treebanks into the local cache",
    "merge": "add up the result files of `score --shard i/N` into the result of one run",
    "leaderboard": "one table of held-out head accuracy per model, with intervals (md, csv, json, latex, html)",
    "plot": "layer x head heatmaps of a result's accuracy per relation and direction (PNG)",
    "patterns": "attention pattern type of every head: vertical, diagonal, block, ... (Kovaleva et al. 2019)",
    "ablate": "disable heads (uniform attention) and measure the change in a metric (Kovaleva et al. 2019)",
    "compare": "per-head cosine similarity of two checkpoints' attention maps (Kovaleva et al. 2019)",
    "surface": "attention to [CLS], [SEP], punctuation, previous/next/self, and entropy, per head (Clark et al. sec. 3)",
    "heads": "Jensen-Shannon distances between heads, MDS map coloured by behaviour (Clark et al. sec. 6)",
    "gradients": "gradient of the masked-LM loss w.r.t. attention to [SEP] vs other tokens (Clark et al. Fig. 3)",
    "report": "surface, heads, gradients and the probe on the same sentences: one folder with a Markdown summary",
}
"""Command name -> one-line help; the module is probing.commands.<name>."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="probing",
        description="Which attention heads track which syntactic relations, and how much better than a "
        "positional baseline? (Clark et al. 2019, 'What Does BERT Look At?')",
    )
    parser.add_argument("--version", action="version", version=f"probing {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        subparsers.add_parser(name, help=help_text, description=help_text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    known, _ = parser.parse_known_args(argv[:1] if argv and not argv[0].startswith("-") else argv)
    if known.command is None:
        parser.print_help()
        return 2 if argv else 0
    module = importlib.import_module(f"probing.commands.{known.command}")
    command_parser = argparse.ArgumentParser(prog=f"probing {known.command}", description=COMMANDS[known.command])
    module.add_arguments(command_parser)
    args = command_parser.parse_args(argv[1:])
    try:
        return module.run(args)
    except ProbingError as error:
        print(f"probing {known.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"probing {known.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
