"""``probing leaderboard``: result files -> one table of held-out accuracies per model (no torch)."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.report.renderers import FORMATS

    parser.epilog = (
        "One row per result file plus the best-offset baseline row, one column per relation; each cell is "
        "accuracy % [95% interval] and the head as layer-head counted from 1. Results scored with --select-on "
        "(or a treebank name with dev and test splits) show held-out numbers; others show in-sample numbers, "
        "marked as such. Results of other analyses make their own tables: probing ablate --chosen results one "
        "table of chosen against matched random heads (a row per model, relation and k; per metric part the "
        "chosen set's effect [95%] with p, and the random sets' mean [2.5, 97.5])."
    )
    parser.add_argument("results", nargs="+", metavar="RESULT", help="result files (JSON) of probing score")
    parser.add_argument("--reference", nargs="*", default=[], metavar="REFERENCE",
                        help="JSON files of figures quoted from a paper (see leaderboards/reference/), listed last, "
                             "unranked")
    parser.add_argument("--format", default="md", choices=list(FORMATS), metavar="FORMAT",
                        help=f"output format: {', '.join(FORMATS)} (default: md)")
    parser.add_argument("--output", metavar="FILE", help="write here, atomically, instead of standard output")
    parser.add_argument("--follow-symlinks", action="store_true",
                        help="when --output is a symbolic link, replace the file it points to (default: refuse)")
    parser.add_argument("--plots", default="plots", metavar="FOLDER",
                        help="html: link each model to FOLDER/RESULT.png (RESULT: its result file's name without "
                             ".json), relative to --output, where that file exists (default: plots)")
    parser.add_argument("--pages", default="pages", metavar="FOLDER",
                        help="html: link each model to its page FOLDER/RESULT.html (probing explore), relative to "
                             "--output, where that file exists (default: pages)")


def file_links(results: list[str], output: str | None, plots: str, pages: str) -> dict:
    """(model, treebank) -> [(text, relative href)] for the plots and pages that exist beside ``output``."""
    from pathlib import Path

    from probing.analyses.probe.leaderboard import row_key
    from probing.report.board import read_json

    if not output:
        return {}
    folder = Path(output).parent
    links = {}
    for path in results:
        data = read_json(path)
        if "reference" in data or data.get("analysis", "probe") != "probe":
            continue
        stem = Path(path).name.removesuffix(".json")
        found = [(text, f"{where}/{stem}{suffix}") for text, where, suffix in (("plots", plots, ".png"),
                                                                               ("page", pages, ".html"))
                 if (folder / where / f"{stem}{suffix}").is_file()]
        if found:
            links[row_key(data)] = found
    return links


def run(args: argparse.Namespace) -> int:
    from probing.atomic import check_output_path, write_text_atomic
    from probing.report.board import leaderboard_from_files
    from probing.report.renderers import render, render_html

    if args.output:
        check_output_path(args.output, inputs=list(args.results) + list(args.reference),
                          follow_symlinks=args.follow_symlinks)
    board = leaderboard_from_files(args.results, args.reference)
    if args.format == "html":
        text = render_html(board, file_links(args.results, args.output, args.plots, args.pages))
    else:
        text = render(board, args.format)
    if args.output:
        print(f"wrote {write_text_atomic(text, args.output, follow_symlinks=args.follow_symlinks)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
