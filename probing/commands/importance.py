"""``probing importance ABLATION --select-on DEV``: every head alone against its DEV accuracy; ``probing importance
--across MAP MAP ...``: those maps of one model compared across pair sets (no model, no torch)."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import add_options, argparse_type, check_table_outputs, write_tables


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.importance.across import DEFAULT_MOST_HARMFUL
    from probing.analyses.importance.options import OPTIONS
    from probing.engine.arguments import OptionSet, positive_int

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
        "--across MAP MAP ... compares importance results of one model and metric, one a pair set (a language): "
        "Spearman's rho between every two maps' per-head harm on one part (--part; BLiMP overall by default), its p "
        "from permuting one map's harms within layers, Holm-adjusted over the pairs, and the heads among the "
        "--most-harmful of several maps; --output FILE.md writes the tables, FILE.json the numbers, --figure the "
        "matrix beside the shared heads. "
        "Rules: docs/importance.md."
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("ablation", nargs="?", metavar="ABLATION", help=OPTIONS["ablation"].help)
    which.add_argument("--across", nargs="+", metavar="MAP",
                       help="instead of ABLATION: importance results (probing importance --output) of one model, one "
                            "per pair set, compared with each other")
    # DEV is required with ABLATION only: run() says so in one line (argparse cannot tie it to the positional)
    add_options(parser, OptionSet(tuple(entry for entry in OPTIONS.options if entry.dest != "ablation"),
                                  command=OPTIONS.command).changed("select_on", required=False))
    across = parser.add_argument_group("across pair sets (--across)")
    across.add_argument("--part", metavar="PART", help="the metric part whose harms are compared (default: the "
                                                       "metric's own: BLiMP overall, a loss)")
    across.add_argument("--most-harmful", type=argparse_type(positive_int), metavar="K",
                        help=f"count each map's K most harmful heads across maps (default: {DEFAULT_MOST_HARMFUL})")
    across.add_argument("--title", metavar="TEXT", help="title of the tables and figure (default: the model, metric "
                                                        "and part)")


ACROSS_ONLY = ("across", "part", "most_harmful", "title")
"""The options of --across alone: a map records none of them."""


def run(args: argparse.Namespace) -> int:
    from probing.analyses.importance.options import ImportanceOptions
    from probing.analyses.importance.run import importance
    from probing.atomic import check_output_path, figure_format, figure_of, result_of
    from probing.commands.common import give_result, pass_options
    from probing.engine.arguments import recorded_options, spec_from
    from probing.engine.specs import InputSpec, ModelSpec
    from probing.errors import ProbingError
    from probing.report.board import build_leaderboard
    from probing.report.renderers import render

    if args.across:
        return run_across(args)
    for name, flag in (("part", "--part"), ("most_harmful", "--most-harmful"), ("title", "--title")):
        if getattr(args, name) is not None:
            raise ProbingError("is an option of --across only", source=flag)
    if not args.select_on:
        raise ProbingError("required with ABLATION (see probing importance --help)", source="--select-on")
    values = {name: value for name, value in vars(args).items() if name not in ACROSS_ONLY}
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


def earlier_comparison(output: str):
    """What an existing file at ``--output`` must be for --across to replace it: an earlier comparison, as JSON (its
    numbers) or Markdown (its tables), known by how probing.analyses.importance.across_report writes it."""
    from probing.analyses.importance.across_report import MARKDOWN_START
    from probing.atomic import json_with, text_matching

    if output.lower().endswith(".json"):
        return json_with("method", "sets", "matrix", what="a comparison of importance maps (JSON)")
    return text_matching(f"# [^\\n]*\\n\\n{MARKDOWN_START}", "a comparison of importance maps (Markdown)")


def run_across(args: argparse.Namespace) -> int:
    """``--across MAP MAP ...``: the maps compared, the tables on standard output or --output, the figure."""
    from probing.analyses.importance.across import DEFAULT_MOST_HARMFUL, across
    from probing.analyses.importance.across_report import across_figure, across_markdown
    from probing.errors import ProbingError
    from probing.results.io import read_result

    if args.select_on or args.relations:
        flag = "--select-on" if args.select_on else "--relations"
        raise ProbingError("compares maps already made: give it to each map's probing importance, not --across",
                           source=flag)
    earlier = check_table_outputs(args, inputs=args.across, earlier=earlier_comparison,
                                  refusal="writes .md (tables) or .json (numbers) with --across")
    named = [(path, read_result(path, analysis="importance")) for path in args.across]
    most = DEFAULT_MOST_HARMFUL if args.most_harmful is None else args.most_harmful
    compared = across(named, part=args.part, most=most, permutations=args.permutations, seed=args.seed)
    write_tables(args, compared, lambda: across_markdown(compared, args.title), replaces=earlier,
                 draw=lambda path: across_figure(compared, path, args.title))
    return 0
