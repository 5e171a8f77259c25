"""``probing transfer RESULT...``: one model's heads across languages, from per-language held-out results (no torch)."""

from __future__ import annotations

import argparse

from probing.commands.common import check_table_outputs, write_tables


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
    from probing.results.io import read_result
    from probing.stats.transfer import transfer

    earlier = check_table_outputs(args, inputs=args.results, earlier=earlier_atlas,
                                  refusal="writes .md (tables) or .json (numbers)")
    atlas = transfer([read_result(path, analysis="probe") for path in args.results])
    model = atlas["model"]
    title = args.title or (f"{model.get('name') or model.get('name_or_path')}"
                           f"{' (random init)' if model.get('random_init') else ''}: heads across languages")
    write_tables(args, atlas, lambda: atlas_markdown(atlas, title), replaces=earlier,
                 draw=lambda path: atlas_figure(atlas, path, title))
    return 0
