"""``probing compare``: per-head cosine similarity of two checkpoints' attention maps (Kovaleva et al. 2019, sec. 4.4)."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import EngineCommand, add_engine_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Every query row's attention distribution of --model (e.g. the pre-trained checkpoint) is compared with "
        "the same row of --second-model (e.g. the fine-tuned one): the cosine, padding excluded as rows and keys, "
        "averaged over rows per head and per layer. Both must give the same token ids and have the same shape. "
        "With --output C.json, C-compare.png is the layer x head map. Layers and heads count from 1 in tables."
    )
    add_engine_options(parser)
    parser.add_argument("--second-model", required=True, metavar="ID_OR_FOLDER",
                        help="the checkpoint to compare with (hub id or folder)")
    parser.add_argument("--second-random-init", action="store_true",
                        help="draw the second model's weights at random (same architecture): the untrained control")


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from probing.analyses.compare.accumulator import CompareAccumulator, check_compatible, layer_means, plot_similarity
    from probing.engine.readings import READINGS
    from probing.errors import ProbingError
    from probing.model.loading import load_model
    from probing.naming import head_name

    with EngineCommand(args, analysis="compare", figures=("compare",)) as command:
        first = command.loaded
        try:
            second = load_model(args.second_model, device="cpu" if args.device_map else first.device,
                                device_map=args.device_map, dtype=args.dtype,
                                random_init=args.second_random_init, seed=args.seed,
                                trust_remote_code=args.trust_remote_code, stack=args.stack)
        except ProbingError as error:  # the loader speaks of --model: this one is --second-model
            if error.source != "--model":
                raise
            raise ProbingError(error.message, source="--second-model") from None
        check_compatible(first, second)
        reading = READINGS[args.attention]
        cosines = CompareAccumulator(first.num_layers, reading.heads(first.num_heads), second, reading)
        stats = command.run([cosines], "comparing")
        if not command.is_main:
            return 0
        result = command.result("compare", stats, cosines, {})
        result["second_model"] = {"name_or_path": second.name_or_path, "name": second.name,
                                  "fingerprint": second.fingerprint, "random_init": second.random_init}
        result["measure"] = "mean over real query rows of the cosine between the two rows, padding excluded"
        similarity = cosines.similarity()
        means = layer_means(similarity)
        name_b = second.name + (f" (random init, seed {args.seed})" if args.second_random_init else "")
        title = f"{first.name} vs {name_b}: attention cosine ({int(cosines.state_tensors['units'])} units)"
        rows = [[layer + 1, f"{means[layer]:.3f}",
                 f"{similarity[layer].min():.3f} ({head_name(layer, int(similarity[layer].argmin()))})",
                 f"{similarity[layer].max():.3f}"] for layer in range(similarity.shape[0])]
        print(f"{title}; {result['rows']} query rows, {stats.too_long} units skipped as too long")
        print(tabulate(rows, headers=["layer", "mean cosine", "lowest head", "highest"], tablefmt="simple",
                       disable_numparse=True))
        if command.write(result):
            print(f"wrote {plot_similarity(similarity, title, command.figure_path('compare'))}", file=sys.stderr)
        command.hint()
    return 0
