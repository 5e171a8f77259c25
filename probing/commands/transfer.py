"""``probing transfer RESULT...``: one model's heads across languages, from per-language held-out results (no torch)."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Give one held-out probe result per language, all of one model (probing score --treebank ko_pud chooses on "
        "ko_pud:even and reports on ko_pud:odd). For every relation, the transfer matrix: the accuracy on "
        "language B's report half of the head chosen on language A's choice half (the diagonal is each "
        "language's held-out figure), beside B's own head and best offset. --output FILE.md writes the tables "
        "(FILE.json: the numbers with intervals); --figure FILE.png draws languages x relations. Layers and heads "
        "count from 1 in tables and figures, from 0 in the JSON. Rules: docs/languages.md."
    )
    parser.add_argument("results", nargs="+", metavar="RESULT", help="held-out result files (JSON) of probing score")
    parser.add_argument("--output", metavar="FILE", help="write the tables (.md) or the numbers (.json) here, "
                                                        "atomically (default: the tables on standard output)")
    parser.add_argument("--figure", metavar="FILE", help="draw languages x relations here (.png, .svg or .pdf)")
    parser.add_argument("--title", metavar="TEXT", help="title of the tables and figure (default: the model's name)")
    parser.add_argument("--follow-symlinks", action="store_true",
                        help="when an output is a symbolic link, replace the file it points to (default: refuse)")


def earlier_atlas(output: str):
    """What an existing file at ``--output`` must be to be replaced: an earlier atlas, as JSON (its numbers) or
    as Markdown (its tables), known by how probing.analyses.probe.atlas writes it (probing.atomic.Earlier)."""
    from probing.atomic import json_with, text_matching

    if output.lower().endswith(".json"):
        return json_with("method", "languages", "relations", what="an atlas of probing transfer (JSON)")
    return text_matching(r"# [^\n]*\n\nHeld-out per language", "an atlas of probing transfer (Markdown)")


def run(args: argparse.Namespace) -> int:
    from probing.analyses.probe.atlas import atlas_figure, atlas_markdown
    from probing.atomic import check_output_path, figure_format, figure_of, write_json_atomic, write_text_atomic
    from probing.errors import ProbingError
    from probing.results.io import read_result
    from probing.stats.transfer import transfer

    if args.output and not args.output.lower().endswith((".md", ".json")):
        raise ProbingError("writes .md (tables) or .json (numbers)", source="--output")
    earlier = earlier_atlas(args.output) if args.output else None
    for path, option, replaces in ((args.output, "--output", earlier),
                                   (args.figure, "--figure", args.figure and figure_of(args.figure))):
        if path:
            check_output_path(path, option=option, inputs=args.results, follow_symlinks=args.follow_symlinks,
                              replaces=replaces)
    if args.figure:
        figure_format(args.figure, option="--figure")
    atlas = transfer([read_result(path, analysis="probe") for path in args.results])
    model = atlas["model"]
    title = args.title or (f"{model.get('name') or model.get('name_or_path')}"
                           f"{' (random init)' if model.get('random_init') else ''}: heads across languages")
    if args.output and args.output.lower().endswith(".json"):
        written = write_json_atomic(atlas, args.output, follow_symlinks=args.follow_symlinks, replaces=earlier)
        print(f"wrote {written}", file=sys.stderr)
    elif args.output:
        written = write_text_atomic(atlas_markdown(atlas, title), args.output, follow_symlinks=args.follow_symlinks,
                                    replaces=earlier)
        print(f"wrote {written}", file=sys.stderr)
    else:
        sys.stdout.write(atlas_markdown(atlas, title))
    if args.figure:
        print(f"wrote {atlas_figure(atlas, args.figure, title)}", file=sys.stderr)
    return 0
