"""``probing heads``: how alike heads attend (Jensen-Shannon), mapped by MDS (Clark et al. 2019, sec. 6)."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import EngineCommand, add_engine_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "The result holds the mean Jensen-Shannon divergence of every pair of heads, in nats, after adding "
        "1e-10 to each real key's weight and renormalising; MDS coordinates; behaviour labels and their "
        "thresholds. With --output H.json, H-heads.png is the MDS map coloured by behaviour and by layer. With "
        "--probe, the best head of each relation in that probing score result is circled and named."
    )
    add_engine_options(parser)
    parser.add_argument("--probe", metavar="RESULT", help="a result file of probing score for the same model")


def run(args: argparse.Namespace) -> int:
    from probing.analyses.heads.accumulator import HeadsAccumulator, probe_marks
    from probing.analyses.heads.report import behaviour_table
    from probing.engine.readings import READINGS
    from probing.engine.token_roles import token_names
    from probing.report.figures import mds_figure
    from probing.results.io import read_result

    probe = None if args.probe is None else read_result(args.probe, analysis="probe")
    with EngineCommand(args, analysis="heads", inputs=(args.probe,), figures=("heads",)) as command:
        loaded = command.loaded
        heads = READINGS[args.attention].heads(loaded.num_heads)
        accumulator = HeadsAccumulator(loaded.num_layers, heads, causal=loaded.is_causal,
                                       token_names=token_names(loaded), seed=args.seed)
        stats = command.run([accumulator], "head divergences")
        if not command.is_main:
            return 0
        result = command.result("heads", stats, accumulator, {})
        result["heads"]["probe"] = args.probe
        result["heads"]["probe_marks"] = [] if probe is None else probe_marks(probe, loaded.num_layers, heads)
        print(behaviour_table(result))
        if command.is_main and args.output:  # the figure first: a failure to draw it leaves no result behind
            figure = mds_figure(result, command.figure_path("heads"))
            command.write(result)
            print(f"wrote {figure}", file=sys.stderr)
        command.hint()
    return 0
