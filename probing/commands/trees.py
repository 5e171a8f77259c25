"""``probing trees``: does attention hold the whole dependency tree? Single heads as trees, head ensembles,
attention probes (Htut et al. 2019; Limisiewicz et al. 2020; Clark et al. 2019 section 5)."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import (
    add_batch_options,
    add_bootstrap_options,
    add_input_options,
    add_model_options,
    add_output_options,
    add_reading_options,
    add_run_options,
    positive_at_most,
    positive_int,
)

MAX_PROBE_EPOCHS = 1000
"""The most passes over DEV the probes may be trained for: a hundred times the default, hours on a dev treebank
already; a larger count would run for days before the result could say anything."""


MAX_CANDIDATES = 256
"""The most single heads an ensemble is chosen among: the choosing pass keeps every pair's attention row of each
candidate (122 MB for the default 25 over en_ewt dev's arcs, probing.analyses.trees.ensembles), so ten times
the default already holds over a gigabyte."""


candidate_count = positive_at_most(MAX_CANDIDATES, "heads")
"""``--candidates``: a positive number of heads, at most :data:`MAX_CANDIDATES`."""
probe_epochs = positive_at_most(MAX_PROBE_EPOCHS, "passes over DEV")
"""``--probe-epochs``: a positive number of passes, at most :data:`MAX_PROBE_EPOCHS`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.trees.defaults import BATCH_SENTENCES, CANDIDATES, DEFAULT_TREE_RELATIONS, ENSEMBLE_SIZE, PROBE_EPOCHS

    parser.epilog = (
        "--treebank en_ewt (a public treebank with dev and test splits) chooses on en_ewt:dev and reports on "
        "en_ewt:test with 95% intervals (a one-split treebank such as ko_pud: on ko_pud:even and ko_pud:odd); "
        "--select-on DEV --treebank TEST does the same for any pair, and DEV may be "
        "the result JSON of a trees run on DEV, so that shards of TEST (--shard I/N, then probing merge) do not "
        "choose again. Without either, every number is chosen and measured on --treebank (in-sample), and the "
        "result holds the choices for a later --select-on. With --output T.json, T-uas.png shows every head's MST "
        "UAS. Layers and heads count from 1 in tables and figures, from 0 in the JSON. Rules: docs/trees.md."
    )
    add_model_options(parser)
    add_input_options(parser, text=False, pairs=False)
    parser.add_argument("--select-on", metavar="DEV",
                        help="choose heads and ensembles and train the probes on DEV (a treebank, or the result JSON "
                             "of a trees run on it) and report them on --treebank with 95%% intervals")
    group = parser.add_argument_group("trees")
    group.add_argument("--relations", nargs="+", default=list(DEFAULT_TREE_RELATIONS), metavar="REL",
                       help="the relations whose head ensembles are chosen and combined into trees: dobj, det, pobj, "
                            f"poss, or UD labels (default: {' '.join(DEFAULT_TREE_RELATIONS)})")
    group.add_argument("--ensemble-size", type=positive_int, default=ENSEMBLE_SIZE, metavar="K",
                       help=f"most heads in an ensemble (default: {ENSEMBLE_SIZE})")
    group.add_argument("--candidates", type=candidate_count, default=CANDIDATES, metavar="N",
                       help=f"each ensemble is chosen among the N best single heads of its relation and direction, "
                            f"at most {MAX_CANDIDATES} (default: {CANDIDATES})")
    group.add_argument("--no-probes", action="store_true",
                       help="train no attention probe (only single heads and ensembles)")
    group.add_argument("--probe-epochs", type=probe_epochs, default=PROBE_EPOCHS, metavar="N",
                       help=f"passes over DEV when training the probes (Adam, {BATCH_SENTENCES} sentences a step, "
                            f"seeded by --seed; at most {MAX_PROBE_EPOCHS}; default: {PROBE_EPOCHS})")
    group.add_argument("--drop-probe-weights", action="store_true",
                       help="keep each trained probe's weights in the result as their sha256 only: the file stays "
                            "small (the weights grow with the model's width and heads) but cannot be given to a "
                            "later --select-on")
    group.add_argument("--word-vectors", metavar="FILE",
                       help="GloVe-format text file of word vectors for attn+vectors and distances+vectors "
                            "(default: the model's input embeddings, averaged over a word's pieces)")
    add_bootstrap_options(parser)
    add_batch_options(parser)
    add_reading_options(parser, pooling=True)
    add_run_options(parser)
    add_output_options(parser)


def tree_options(args: argparse.Namespace, vectors):
    from probing.analyses.trees.probes import PROBES
    from probing.analyses.trees.selection import TreeOptions
    from probing.data.relations import check_relation_names

    described = {key: value for key, value in vectors.describe().items() if key != "file"}
    return TreeOptions(relations=check_relation_names(args.relations), ensemble_size=args.ensemble_size,
                       candidates=args.candidates, probes=() if args.no_probes else PROBES,
                       probe_epochs=args.probe_epochs, seed=args.seed,
                       word_vectors=described if not args.no_probes else {"source": "input_embeddings"})


def run(args: argparse.Namespace) -> int:
    from probing.analyses.trees.report import tables, uas_figure
    from probing.analyses.trees.run import TreesRun, run_trees
    from probing.analyses.trees.selection import vector_source, without_probe_weights
    from probing.commands.common import EngineCommand
    from probing.errors import ProbingError

    if args.no_probes and args.drop_probe_weights:
        raise ProbingError("with --no-probes there are no probe weights to drop; give one of the two",
                           source="--drop-probe-weights")
    if args.no_probes and args.word_vectors:
        raise ProbingError("only the probes read word vectors; drop --no-probes or --word-vectors",
                           source="--word-vectors")
    vectors = vector_source(args.word_vectors)
    run_plan = TreesRun.plan(args.treebank, args.select_on, limit=args.limit, options=tree_options(args, vectors),
                             reading={"attention": args.attention, "pool_from": args.pool_from}, vectors=vectors,
                             bootstrap=args.bootstrap, seed=args.seed, shard=args.shard)
    inputs = tuple(path for path in (args.word_vectors, run_plan.dev_path) if path)
    with EngineCommand(args, analysis="trees", source=run_plan.source, inputs=inputs, figures=("uas",)) as command:
        result = run_trees(command.engine_run, run_plan)
        if result is None:  # another process of a torchrun: rank 0 writes
            return 0
        if args.drop_probe_weights and result.get("selection"):
            result["selection"] = without_probe_weights(result["selection"])
        print(tables(result))
        if command.write(result):
            print(f"wrote {uas_figure(result, command.figure_path('uas'))}", file=sys.stderr)
        command.hint()
    return 0
