"""``probing importance ABLATION --select-on DEV``: every head alone against its DEV accuracy (no model, no torch)."""

from __future__ import annotations

import argparse
import sys

MAX_PERMUTATIONS = 1_000_000
"""The most permutations a test may ask for: each is one shuffle of the heads' accuracies, drawn a chunk at a
time (probing.stats.ranks), so a million take seconds for SmolLM2's 270 heads."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.importance.build import DEFAULT_PERMUTATIONS
    from probing.commands.common import positive_at_most, seed_value

    parser.epilog = (
        "ABLATION is a result of probing ablate --each-head (every head disabled alone; --scores-only keeps what "
        "this needs in a small file), DEV a probe result of probing score on other sentences of the same model. For "
        "each metric part, the map: every head's effect (metric with the head disabled - intact, same units), its "
        "95% paired bootstrap interval and its harm (the effect in the harmful direction). For each relation of DEV "
        "and each part: Spearman's rho over all heads between DEV accuracy and harm, its p from permuting the "
        "accuracies among the heads of each layer (one-sided: syntactic heads more harmful), its 95% interval "
        "from the ablation's bootstrap replicates; and the relation's top head on DEV ranked by harm in its layer "
        "band (layers L-1 to L+1) and in the model, with an exact p. The table shows each metric's primary part; "
        "the JSON holds every part. --figure (or probing plot RESULT) draws each map beside DEV's accuracy heatmap; "
        "probing leaderboard RESULT... makes the board of several. Heads count from 1 in tables and figures, from 0 "
        "in the JSON. "
        "Rules: docs/importance.md."
    )
    parser.add_argument("ablation", metavar="ABLATION", help="a result file (JSON) of probing ablate --each-head")
    parser.add_argument("--select-on", required=True, metavar="DEV",
                        help="a probe result file (JSON) of probing score on DEV: its accuracies are set against the "
                             "harms, and it chooses each relation's head; never the sentences the ablation measured")
    parser.add_argument("--relations", nargs="+", metavar="REL",
                        help="relations of DEV to set against the map (default: every relation DEV holds)")
    parser.add_argument("--permutations", type=positive_at_most(MAX_PERMUTATIONS, "permutations"),
                        default=DEFAULT_PERMUTATIONS, metavar="N",
                        help=f"within-layer permutations of the accuracies per test, 1 to {MAX_PERMUTATIONS:,} "
                             f"(default: {DEFAULT_PERMUTATIONS})")
    parser.add_argument("--seed", type=seed_value, default=0, metavar="N", help="seed of the permutations (default: 0)")
    parser.add_argument("--output", metavar="FILE", help="write the result JSON here, atomically")
    parser.add_argument("--figure", metavar="FILE", help="draw each relation's DEV accuracy beside the harm of its "
                                                         "primary part here (.png, .svg or .pdf), as probing plot does")
    parser.add_argument("--follow-symlinks", action="store_true",
                        help="when an output is a symbolic link, replace the file it points to (default: refuse)")


def run(args: argparse.Namespace) -> int:
    from probing.analyses.importance.build import importance_result
    from probing.atomic import check_output_path, figure_format, figure_of, result_of
    from probing.commands.common import give_result
    from probing.data.datasets.cache import sha256_of
    from probing.data.relations import check_relation_names
    from probing.report.board import build_leaderboard
    from probing.report.renderers import render
    from probing.results.io import read_result

    if args.relations:
        check_relation_names(args.relations)
    inputs = [args.ablation, args.select_on]
    if args.output:
        check_output_path(args.output, inputs=inputs, follow_symlinks=args.follow_symlinks,
                          replaces=result_of("importance"))
    if args.figure:
        figure_format(args.figure, option="--figure")
        figure = check_output_path(args.figure, option="--figure", inputs=inputs, follow_symlinks=args.follow_symlinks,
                                   replaces=figure_of(args.figure))
    ablation = read_result(args.ablation, analysis="ablation")
    dev = read_result(args.select_on, analysis="probe")
    if args.relations:
        missing = [name for name in args.relations if name not in dev["relations"]]
        if missing:
            from probing.errors import ProbingError

            raise ProbingError(f"DEV has no relation {missing[0]!r} (it has {', '.join(dev['relations'])}); score DEV "
                               "with it too", source="--relations")
    sources = {"ablation": {"path": args.ablation, "sha256": sha256_of(args.ablation)},
               "dev": {"path": args.select_on, "sha256": sha256_of(args.select_on)}}
    result = importance_result(ablation, dev, sources=sources, relations=args.relations,
                               permutations=args.permutations, seed=args.seed)
    print(render(build_leaderboard([result]), "md"))
    give_result(result, args.output, follow_symlinks=args.follow_symlinks)
    if args.figure:
        from probing.analyses.importance.figures import importance_figure

        print(f"wrote {importance_figure(result, figure)}", file=sys.stderr)
    if not args.output:
        print("(pass --output FILE.json to keep the result)", file=sys.stderr)
    return 0
