"""``probing heads``: how alike heads attend (Jensen-Shannon), mapped by MDS (Clark et al. 2019, sec. 6)."""

from __future__ import annotations

import argparse

from probing.commands.common import add_options, run_analysis


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.heads.options import OPTIONS

    parser.epilog = (
        "The result holds the mean Jensen-Shannon divergence of every pair of heads, in nats, after adding "
        "1e-10 to each real key's weight and renormalising; MDS coordinates; behaviour labels and their "
        "thresholds. With --output H.json, H-heads.png is the MDS map coloured by behaviour and by layer. With "
        "--probe, the best head of each relation in that probing score result is circled and named."
    )
    add_options(parser, OPTIONS)


def run(args: argparse.Namespace) -> int:
    from probing.analyses.heads.options import HeadsOptions
    from probing.analyses.heads.report import behaviour_table
    from probing.analyses.heads.run import heads

    return run_analysis(args, heads, HeadsOptions, analysis="heads", show=lambda result: print(behaviour_table(result)))

