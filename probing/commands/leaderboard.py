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
        "chosen set's effect [95% interval] with p, the random sets' mean with the spread of their draws (draws "
        "2.5-97.5%: a to b), their matching and space, and per primary part the threshold to pass; Holm over the "
        "declared family, the cells Tarone's rule leaves out listed as untestable); such a result whose versus "
        "block is not the one its own conditions give again (an edited file) is refused. A --shard part's row says "
        "which part it is; results whose rows would read alike (a rerun beside the earlier file) show their file "
        "names."
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
                             ".json), relative to --output, where that file exists (default: plots); a folder, "
                             "never a URL or an absolute path: links stay relative")
    parser.add_argument("--note", action="append", default=[], metavar="TEXT",
                        help="a sentence of your own, added to the first table's notes (repeat for more): what the "
                             "results alone cannot say, such as where the runs a board still lacks are made")
    parser.add_argument("--pages", default="pages", metavar="FOLDER",
                        help="html: link each model to its page FOLDER/RESULT.html (probing explore), relative to "
                             "--output, where that file exists (default: pages); a relative folder, as --plots")


def earlier_board(fmt: str):
    """What an existing file at ``--output`` must be for a leaderboard in ``fmt`` to replace it: an earlier
    leaderboard in that format, known by how its renderer begins the file (probing.atomic.Earlier).

    >>> earlier_board("csv").recognise(b"rank,model,kind,selection", None)
    True
    """
    from probing.atomic import json_with, text_matching

    page = r'<!DOCTYPE html>\n<html lang="en">\n<head>\n.*?</style>\n</head>\n<body>\n(?!<header>)'
    return {
        "md": text_matching(r"# [^\n]*\n\n(?:## [^\n]*\n\n)?\| rank ", "a leaderboard in Markdown"),
        "csv": text_matching(r"(?:table,)?rank,model,", "a leaderboard in CSV"),
        "json": json_with("tables", what="a leaderboard in JSON"),
        "latex": text_matching(r"% Requires \\usepackage\{booktabs\}", "a leaderboard in LaTeX"),
        "html": text_matching(f"(?s){page}", "a leaderboard page (HTML)"),
    }[fmt]


def check_link_folder(folder: str, option: str) -> None:
    """Refuse a ``--plots`` or ``--pages`` folder that a link would not reach relative to the page: a URL
    (``javascript:...``, ``https://...``) or an absolute path. The page's links stay relative, so that the
    page and its folders can move together.

    >>> check_link_folder("javascript:alert(1)//", "--plots")
    Traceback (most recent call last):
    probing.errors.ProbingError: --plots javascript:alert(1)//: give a folder relative to --output, not a URL or an absolute path
    """
    from probing.errors import ProbingError
    from probing.report.escaping import is_relative_path

    if not is_relative_path(folder):
        raise ProbingError("give a folder relative to --output, not a URL or an absolute path",
                           source=f"{option} {folder}")


def file_links(results: list[tuple[str, dict]], output: str | None, plots: str, pages: str) -> dict:
    """(model, treebank) -> [(text, relative href)] for the plots and pages that exist beside ``output``, of
    ``results`` as (path, result) (probing.report.board.board_results); each href percent-encoded
    (probing.report.escaping.relative_url), so that it names that very file."""
    from pathlib import Path, PurePosixPath

    from probing.analyses.probe.leaderboard import row_key
    from probing.report.escaping import relative_url

    if not output:
        return {}
    folder = Path(output).parent
    links = {}
    for path, data in results:
        if data.get("analysis", "probe") != "probe":
            continue
        stem = Path(path).name.removesuffix(".json")
        found = [(text, relative_url(str(PurePosixPath(where) / f"{stem}{suffix}"))) for text, where, suffix in (("plots", plots, ".png"),
                                                                               ("page", pages, ".html"))
                 if (folder / where / f"{stem}{suffix}").is_file()]
        if found:
            links[row_key(data)] = found
    return links


def run(args: argparse.Namespace) -> int:
    from probing.atomic import check_output_path, write_text_atomic
    from probing.errors import ProbingError
    from probing.report.board import board_results, build_leaderboard
    from probing.report.renderers import render, render_html

    check_link_folder(args.plots, "--plots")
    check_link_folder(args.pages, "--pages")
    earlier = earlier_board(args.format)
    if args.output:
        check_output_path(args.output, inputs=list(args.results) + list(args.reference),
                          follow_symlinks=args.follow_symlinks, replaces=earlier)
    results, references = board_results(args.results, args.reference)
    board = build_leaderboard([result for _, result in results], references)
    for note in args.note:
        if not note.strip() or "\n" in note:
            raise ProbingError("a note is one line of text", source="--note")
        board.tables[0].notes.append(note.strip())
    if args.format == "html":
        text = render_html(board, file_links(results, args.output, args.plots, args.pages))
    else:
        text = render(board, args.format)
    if args.output:
        written = write_text_atomic(text, args.output, follow_symlinks=args.follow_symlinks, replaces=earlier)
        print(f"wrote {written}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
