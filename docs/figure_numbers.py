"""The numbers that docs/analyses.md and docs/dark-secrets.md quote, read from the result files of
docs/make_figures.sh (which calls this script; run alone it needs those files).

    python3 docs/figure_numbers.py sentences en_ewt:dev --pairs --limit 500
    python3 docs/figure_numbers.py analyses build/docs/report-NAME build/docs/probe-NAME.json
    python3 docs/figure_numbers.py dark-secrets build/docs/dark-secrets
    python3 docs/figure_numbers.py decoder build/docs/decoder

Layers and heads are named layer-head counted from 1, as in the docs; percentages are of attention.
Its examples run with `python3 -m pytest --doctest-modules docs/figure_numbers.py` (docs/ is not a test path).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from probing.data.inputs import InputSource
from probing.naming import head_name, interval_text

SURFACE_COLUMNS = ("first_special", "separator", "punctuation", "previous", "next", "self",
                   "separator_to_separator", "other_to_separator")


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def sentences(treebank: str, pairs: bool, limit: int | None) -> int:
    """How many sentences the first LIMIT units hold (a pair holds two, a document's last odd one one)."""
    return sum(len(unit.sentences) for unit in InputSource.treebank(treebank, pairs=pairs, limit=limit).units())


def heads_above(grid: np.ndarray, threshold: float) -> str:
    """'2-7 (52%), 3-5 (63%)' for every head [layer, head] whose share is above the threshold.

    >>> heads_above(np.array([[0.1, 0.6], [0.52, 0.2]]), 0.5)
    '1-2 (60%), 2-1 (52%)'
    """
    names = [f"{head_name(layer, head)} ({100 * grid[layer, head]:.0f}%)" for layer, head in zip(*np.nonzero(grid > threshold))]
    return ", ".join(names) or "none"


def strongest(grid: np.ndarray) -> str:
    """The head with the largest share: '2-1 (52.0%)'.

    >>> strongest(np.array([[0.1, 0.2], [0.52, np.nan]]))
    '2-1 (52.0%)'
    """
    layer, head = np.unravel_index(np.nanargmax(grid), grid.shape)
    return f"{head_name(int(layer), int(head))} ({100 * grid[layer, head]:.1f}%)"


def analyses(report: Path, probe_path: Path) -> None:
    surface_result, heads_result, probe = load(report / "surface.json"), load(report / "heads.json"), load(probe_path)
    surface, names = surface_result["surface"], surface_result["token_names"]
    grids = {name: np.array(values, dtype=float) for name, values in surface["heads"].items()}  # [layer, head]
    layers = grids["entropy"].shape[0]
    source = surface_result["input"]
    print(f"# {surface_result['model']['name']}\n")
    print(f"input {source['file']} sha256 {source['sha256'][:12]}: {source['units_used']} units, "
          f"{sentences_of(source)} sentences, {surface['queries']['real']} real query tokens, "
          f"{source['skipped']['too_long']} skipped as too long\n")
    first, separator = names.get("first_special", "[CLS]"), names.get("separator", "[SEP]")
    header = [first, separator, ". ,", "prev", "next", "self", f"{separator}->{separator}", f"other->{separator}"]
    print("| layer | " + " | ".join(f"{name} %" for name in header) + " | entropy (nats) |")
    print("| ---: " * (len(header) + 2) + "|")
    means = surface["layer_means"]
    for layer in range(layers):
        cells = [f"{100 * means[name][layer]:.1f}" for name in SURFACE_COLUMNS] + [f"{means['entropy'][layer]:.2f}"]
        print(f"| {layer + 1} | " + " | ".join(cells) + " |")
    uniform = surface["uniform_entropy"]
    print(f"\nuniform entropy: {uniform['entropy']:.2f} nats; of the first special token's attention: "
          f"{uniform['first_special_entropy']:.2f}")
    print("first special token's own entropy per layer: "
          + ", ".join(f"{value:.2f}" for value in means["first_special_entropy"]))
    for name, threshold in (("first_special", .5), ("separator", .5), ("punctuation", .5), ("previous", .5),
                            ("next", .5), ("self", .5)):
        print(f"above {threshold:.0%} on {name}: {heads_above(grids[name], threshold)}; strongest {strongest(grids[name])}")
    combined = means_of(grids["separator"] + grids["punctuation"])
    print("separator + punctuation per layer: " + ", ".join(f"{100 * value:.1f}" for value in combined))
    behaviour = np.array(heads_result["heads"]["behaviour"])  # [layer, head]
    for label in sorted(set(behaviour.ravel())):
        where = [head_name(int(layer), int(head)) for layer, head in zip(*np.nonzero(behaviour == label))]
        print(f"behaviour {label}: {len(where)} heads: {' '.join(where)}")
    divergence = np.array(heads_result["heads"]["divergence"]["mean"], dtype=float)  # [head, head], layer-major
    heads = divergence.shape[0] // layers
    layer_of = np.repeat(np.arange(layers), heads)
    off_diagonal = ~np.eye(len(layer_of), dtype=bool)
    same = (layer_of[:, None] == layer_of[None, :]) & off_diagonal
    print(f"Jensen-Shannon: same layer {divergence[same].mean():.3f}, different layers "
          f"{divergence[layer_of[:, None] != layer_of[None, :]].mean():.3f} nats; within each layer: "
          + ", ".join(f"{divergence[np.ix_(layer_of == layer, layer_of == layer)][off_diagonal[:heads, :heads]].mean():.3f}"
                      for layer in range(layers)))
    treebank = probe["treebank"]
    print(f"\nprobe on the same {treebank['sentences_scored']} sentences ({treebank['words_scored']} words):")
    for relation, entry in probe["relations"].items():
        best = entry["best"]
        layer, head = best["layer"], best["head"]
        print(f"  {relation}: {head_name(layer, head, best['direction'])} {100 * best['accuracy']:.1f}% "
              f"({entry['total']} pairs); its attention on {first} {100 * grids['first_special'][layer, head]:.1f}%, "
              f"on {separator} {100 * grids['separator'][layer, head]:.1f}%, behaviour {behaviour[layer, head]}")


def dark_secrets(folder: Path) -> None:
    for path in sorted(folder.glob("patterns-*.json")):
        patterns(load(path))
    for name in ("random", "perturbed"):
        result = load(folder / f"compare-{name}.json")
        block = result.get("compare", result)
        similarity = np.array(block["similarity"], dtype=float)  # [layer, head]
        lowest = [f"{head_name(layer, int(np.argmin(row)))} {row.min():.3f}" for layer, row in enumerate(similarity)]
        print(f"\n# compare {result['model']['name']} with {name}: {block['rows']} rows\nper-layer mean cosine: "
              + ", ".join(f"{value:.3f}" for value in block["layer_means"])
              + "\nlowest head per layer: " + ", ".join(lowest))
    for name in ("each-head", "each-layer"):
        ablation(load(folder / f"ablate-{name}.json"), name)


def patterns(result: dict) -> None:
    block = result.get("patterns", result)
    types = np.array(block["types"], dtype=object)  # [layer, head]
    print(f"\n# patterns of {result['model']['name']}: {block['units']} units ({block['paired_units']} pairs)")
    for label in ("vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous"):
        print(f"{label}: {100 * np.mean(types == label):.0f}% of heads; per layer: "
              + ", ".join(f"{100 * np.mean(row == label):.0f}" for row in types))
    diagonal = np.array(block["shares"]["diagonal"], dtype=float)
    print("mean diagonal share per layer: " + ", ".join(f"{value:.2f}" for value in np.nanmean(diagonal, axis=1)))
    if "agreement" in result or "agreement" in block:
        found = result.get("agreement") or block["agreement"]
        print(f"agreement with the hand labels: {found['correct']}/{found['heads']} ({100 * found['accuracy']:.0f}%)")


def ablation(result: dict, name: str) -> None:
    block = result.get("ablation", result)
    print(f"\n# ablate, {name}: {len(block['conditions']) - 1} conditions")
    for part, intact in block["baseline"].items():
        print(f"{part}: intact {100 * intact['value']:.1f}% {intact['detail'] or ''}")
        rows = [(c["label"], c["parts"][part]) for c in block["conditions"][1:]]
        for verdict in ("helps", "hurts"):
            chosen = sorted((entry["change"], label) for label, entry in rows if entry["verdict"] == verdict)
            print(f"  {verdict}: {len(chosen)}: " + ", ".join(f"{label} {100 * change:+.1f}" for change, label in chosen))
        best = max(rows, key=lambda row: row[1]["change"])
        worst = min(rows, key=lambda row: row[1]["change"])
        for label, entry in (worst, best):
            print(f"  {label}: {100 * entry['value']:.1f}% change {100 * entry['change']:+.1f} "
                  f"{interval_text(entry['interval'], 'points')} {entry['verdict']}, {entry['detail'] or ''}")


def decoder(folder: Path) -> None:
    """Heads that hurt a causal LM: the ablations of its own loss, set beside its probe and its gradients."""
    probe = load(folder / "probe.json")
    accuracy = {}  # relation -> [layer, head]: the better direction's in-sample accuracy on dev
    for relation, entry in probe["relations"].items():
        if entry["total"]:
            grids = np.array([entry["heads"][direction] for direction in ("dep_to_head", "head_to_dep")], dtype=float)
            accuracy[relation] = grids.max(axis=0) / entry["total"]
    for name in ("each-layer", "each-head"):
        result = load(folder / f"ablate-{name}.json")
        block = result.get("ablation", result)
        intact = block["baseline"]["loss"]
        rows = [(c["label"], c["parts"]["loss"]) for c in block["conditions"][1:]]
        low, high = intact["interval"] or (float("nan"), float("nan"))
        print(f"\n# ablate SmolLM2 {name} (--metric lm, {result['input']['limit']} sentences): intact loss "
              f"{intact['value']:.4f} [{low:.4f}, {high:.4f}] nats per token, {len(rows)} conditions")
        for verdict, order in (("helps", 1), ("hurts", -1)):
            chosen = sorted(((entry["change"], label, entry["interval"]) for label, entry in rows
                             if entry["verdict"] == verdict), key=lambda item: order * item[0])
            shown = chosen if verdict == "helps" else chosen[:12]
            print(f"  {verdict} (interval clear of 0): {len(chosen)}" + (": " if shown else "") + ", ".join(
                f"{label} {change:+.4f} [{interval[0]:+.4f}, {interval[1]:+.4f}]" for change, label, interval in shown))
            if name == "each-head" and verdict == "helps":
                for _change, label, _ in chosen:
                    layer, head = (int(part) - 1 for part in label.split("-"))
                    ranks = {relation: int((grid > grid[layer, head]).sum()) + 1 for relation, grid in accuracy.items()}
                    print(f"    {label}: probe accuracy " + ", ".join(
                        f"{relation} {100 * accuracy[relation][layer, head]:.1f}% (rank {ranks[relation]})"
                        for relation in accuracy))
    heads_block = load(folder / "ablate-each-head.json")
    changes = {c["label"]: c["parts"]["loss"] for c in heads_block.get("ablation", heads_block)["conditions"][1:]}
    print("\n# the probe's best heads (in-sample, dev) and what disabling each does to the loss")
    for relation, entry in probe["relations"].items():
        best = entry["best"]
        label = head_name(best["layer"], best["head"])
        change = changes.get(label)
        print(f"  {relation}: {label} {best['direction']} {100 * best['accuracy']:.1f}%: "
              + ("-" if change is None else f"loss {change['change']:+.4f} {change['verdict']}"))
    block = load(folder / "gradients.json")
    gradients = block.get("gradients", block)
    print(f"\n# gradients ({gradients['units']} units, loss {gradients['loss']}); per layer, mean |dL/dA| to the "
          "first token (the sink) and to other tokens, and the attention the sink gets")
    for kind in ("first_special", "other"):
        values = gradients["layer_gradient"][kind]
        print(f"  gradient to {kind}: " + ", ".join(f"{value:.2e}" for value in values))
    print("  attention to the sink: " + ", ".join(f"{100 * value:.0f}" for value in gradients["layer_attention"]["first_special"]))


def sentences_of(source: dict) -> int:
    return sentences(source["path"], source["pairs"], source["limit"])


def means_of(grid: np.ndarray) -> np.ndarray:
    return np.nanmean(grid, axis=1)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    counting = commands.add_parser("sentences")
    counting.add_argument("treebank")
    counting.add_argument("--pairs", action="store_true")
    counting.add_argument("--limit", type=int)
    reporting = commands.add_parser("analyses")
    reporting.add_argument("report", type=Path)
    reporting.add_argument("probe", type=Path)
    secrets = commands.add_parser("dark-secrets")
    secrets.add_argument("folder", type=Path)
    decoding = commands.add_parser("decoder")
    decoding.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.command == "sentences":
        print(sentences(args.treebank, args.pairs, args.limit))
    elif args.command == "analyses":
        analyses(args.report, args.probe)
    elif args.command == "decoder":
        decoder(args.folder)
    else:
        dark_secrets(args.folder)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
