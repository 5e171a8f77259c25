"""``probing importance ABLATION --select-on DEV``: every head alone against its DEV accuracy (no model, no torch)."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import add_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.importance.options import OPTIONS

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
    add_options(parser, OPTIONS)


def run(args: argparse.Namespace) -> int:
    from probing.analyses.importance.options import ImportanceOptions
    from probing.analyses.importance.run import importance
    from probing.atomic import check_output_path, figure_format, figure_of, result_of
    from probing.commands.common import give_result, pass_options
    from probing.engine.arguments import recorded_options, spec_from
    from probing.engine.specs import InputSpec, ModelSpec
    from probing.report.board import build_leaderboard
    from probing.report.renderers import render

    values = vars(args)
    options = spec_from(ImportanceOptions, values)  # bad relations before any file is looked at
    inputs = [args.ablation, args.select_on]
    if args.output:
        check_output_path(args.output, inputs=inputs, follow_symlinks=args.follow_symlinks,
                          replaces=result_of("importance"))
    if args.figure:
        figure_format(args.figure, option="--figure")
        figure = check_output_path(args.figure, option="--figure", inputs=inputs, follow_symlinks=args.follow_symlinks,
                                   replaces=figure_of(args.figure))
    result = importance(spec_from(ModelSpec, values), spec_from(InputSpec, values), pass_options(args), options)
    result["config"]["options"] = recorded_options(values)  # every option that can change a number, as every command's
    print(render(build_leaderboard([result]), "md"))
    give_result(result, args.output, follow_symlinks=args.follow_symlinks)
    if args.figure:
        from probing.analyses.importance.figures import importance_figure

        print(f"wrote {importance_figure(result, figure)}", file=sys.stderr)
    if not args.output:
        print("(pass --output FILE.json to keep the result)", file=sys.stderr)
    return 0
