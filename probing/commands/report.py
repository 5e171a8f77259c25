"""``probing report``: surface, heads, gradients and the probe on the same sentences, in one folder.

One pass over the input feeds every analysis at once (the engine runs one
forward pass per batch and hands it to each); the weights are read once,
with the model's LM head when the checkpoint has a trained one (then the
gradients are added), without it otherwise (the reason goes into the
summary). The probe runs only when the input is a treebank read without
``--pairs`` (it needs trees, and scores one sentence per unit).
The folder holds each analysis's JSON and figures and a README.md that shows
the figures with the main numbers.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from probing.commands.common import EngineCommand, add_bootstrap_options, add_engine_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = ("--output names the folder (created if needed). It gets surface.json, heads.json, probe.json "
                     "(treebank input without --pairs), gradients.json (checkpoints with a trained LM head), their "
                     "figures and README.md.")
    add_engine_options(parser, pooling=True, figures=False, metavar="FOLDER", required=True,
                       help="the report's folder (created if needed); each file in it is written atomically")
    add_bootstrap_options(parser)


def run(args: argparse.Namespace) -> int:
    from probing.analyses.overview.folder import FILES, OverviewRun, earlier_file, no_probe_reason, write_folder
    from probing.analyses.overview.summary import summarise
    from probing.errors import ProbingError

    folder = Path(args.output)
    if folder.exists() and not folder.is_dir():
        raise ProbingError("is a file; the report is a folder", source=f"--output {folder}")
    report_args = argparse.Namespace(**{**vars(args), "output": None})
    outputs = tuple((str(folder / name), "--output", earlier_file(name)) for name in FILES)
    # the LM head is optional: a checkpoint without one gets a report without gradients
    with EngineCommand(report_args, head="lm", head_optional=True, outputs=outputs) as command:
        target = dict(zip(FILES, command.outputs))  # checked paths (a followed symbolic link gives its target)
        loaded = command.loaded
        overview = OverviewRun.create(loaded, command.source, attention=args.attention, bootstrap=args.bootstrap,
                                      seed=args.seed)
        stats = command.run(overview.accumulators(), "report")
        if not command.is_main:
            return 0
        results = overview.results(command.engine_run, stats, random_init=args.random_init, bootstrap=args.bootstrap,
                                   seed=args.seed)
        reason = loaded.extra.get("no_head") or "the attention is not read as raw weights"
        summary = summarise(results["heads"], results["gradients"], reason, results["probe"], command=_command_line(),
                            no_probe=no_probe_reason(command.source.kind, pairs=command.source.pairs))
        written = write_folder(results, summary, target)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    print(f"summary: {folder / 'README.md'}")
    return 0


def _command_line() -> str:
    return "probing " + " ".join(shlex.quote(part) for part in sys.argv[1:])
