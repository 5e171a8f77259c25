"""``probing plot``: layer x head accuracy heatmaps of a probe result, surface readings side by side, the chosen
heads of an ``ablate --chosen`` result against the random ones, an importance map beside DEV's accuracies (no
torch)."""

from __future__ import annotations

import argparse
import sys


def dpi(text: str) -> int:
    from probing.engine.arguments import BadValue, whole_number

    try:
        value = whole_number(text)
    except BadValue as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if not 20 <= value <= 1200:
        raise argparse.ArgumentTypeError(f"must be 20 to 1200 dots per inch, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Surface results (probing surface, one per --attention reading) are drawn side by side per layer: the "
        "shares of a row that go to the first special token, the separators and punctuation. For a probe result: "
        "without --relation, one overview figure of every relation and direction. With --relation R: both "
        "directions of R, each cell labelled. Layers (down) and heads (across) count from 1; the chosen head "
        "is outlined (chosen on dev for held-out results) and the best offset's accuracy is marked on the "
        "colour bar. For an ablate --chosen result: per metric part (--part, default all but BLiMP's fields) and "
        "chosen set REL@K, the chosen set's effect as a line against the histogram of the matched random sets' "
        "effects. For a probing importance result: per relation (--relation: one), DEV's accuracy heatmap beside the "
        "harm of each head disabled alone on the relation's primary part (--part: these parts instead). The format "
        "follows --output's suffix: .png, .svg or .pdf."
    )
    parser.add_argument("result", metavar="RESULT",
                        help="a result file (JSON) of probing score, of probing surface, of probing ablate --chosen, or "
                             "of probing importance")
    parser.add_argument("more", nargs="*", metavar="MORE",
                        help="further surface results of the same model and input under other --attention readings, "
                             "drawn side by side per layer")
    parser.add_argument("--relation", metavar="REL", help="plot this relation only (default: an overview of all)")
    parser.add_argument("--part", nargs="+", metavar="PART",
                        help="ablate --chosen results: the metric parts to draw, one row each (default: all but "
                             "BLiMP's fields); importance results: the parts whose harm is drawn (default: each "
                             "relation's primary part)")
    parser.add_argument("--output", required=True, metavar="FILE", help="figure to write, atomically (.png, .svg or .pdf)")
    parser.add_argument("--dpi", type=dpi, metavar="N",
                        help="resolution of a PNG (default: 150 for one relation, 120 for the overview)")
    parser.add_argument("--follow-symlinks", action="store_true",
                        help="when --output is a symbolic link, replace the file it points to (default: refuse)")


def run(args: argparse.Namespace) -> int:
    from probing.analyses.probe.plots import plot_overview, plot_relation
    from probing.atomic import check_output_path, figure_format, figure_of
    from probing.results.io import read_result

    figure_format(args.output)
    # the checked path: with --follow-symlinks, the link's target (the figure writer never follows links)
    target = check_output_path(args.output, inputs=[args.result, *args.more], follow_symlinks=args.follow_symlinks,
                               replaces=figure_of(args.output))
    result = read_result(args.result, analysis=("probe", "surface", "ablation", "importance"))
    if result["analysis"] == "importance":
        from probing.analyses.importance.figures import importance_figure

        path = importance_figure(result, target, [args.relation] if args.relation else None, args.part,
                                 **({} if args.dpi is None else {"dpi": args.dpi}))
        print(f"wrote {path}", file=sys.stderr)
        return 0
    if result["analysis"] == "ablation":
        from probing.analyses.ablation.figures import versus_figure

        path = versus_figure(result, target, args.part, **({} if args.dpi is None else {"dpi": args.dpi}))
        print(f"wrote {path}", file=sys.stderr)
        return 0
    if result["analysis"] == "surface":
        from probing.report.figures import readings_figure

        path = readings_figure([result] + [read_result(more, analysis="surface") for more in args.more], target)
        print(f"wrote {path}", file=sys.stderr)
        return 0
    if args.more:
        from probing.errors import ProbingError

        raise ProbingError("several results are drawn together only for probing surface results", source=args.more[0])
    options = {} if args.dpi is None else {"dpi": args.dpi}
    if args.relation:
        path = plot_relation(result, args.relation, target, **options)
    else:
        path = plot_overview(result, target, **options)
    print(f"wrote {path}", file=sys.stderr)
    return 0
