"""``probing report``: surface, heads, gradients and the probe on the same sentences, in one folder.

The folder holds each analysis's JSON and PNGs and a README.md that shows the
figures with the main numbers. Gradients are skipped, with the reason in the
README, for checkpoints without a trained masked-LM head; the probe runs only
when INPUT is a treebank (it needs trees), over the same sentences.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from ..atomic import write_text_atomic
from .gradients import gradient_table, write_gradients
from .heads import behaviour_table, write_heads
from .surface import add_analysis_arguments, layer_table, load, open_input, pass_options, write_surface

SHARE = 0.5
"""Heads that give more than this share of attention to one target are listed in the summary."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = "Writes surface.*, entropy.png, heads.*, gradients.* (when possible), probe.json and README.md."
    add_analysis_arguments(parser, default_dir="report")
    parser.add_argument("--seed", type=int, default=0, help="seed of the masking and of the MDS layout (default: %(default)s)")
    parser.add_argument("--bootstrap", type=int, default=0, help="bootstrap replicates of the probe (default: %(default)s)")


def run(args: argparse.Namespace) -> int:
    from ..analyses.overview import attention_pass, heads_result, surface_result

    folder = Path(args.output_dir)
    source = open_input(args)
    loaded = load(args)
    options = pass_options(args)
    surface, divergence = attention_pass(loaded, source, divergence=True, options=options)
    config = {**options.as_dict(), "seed": args.seed}
    written = write_surface(surface_result(loaded, source, surface, options.as_dict()), folder)
    probe = run_probe(args, source, loaded, folder)
    heads = heads_result(loaded, source, surface, divergence, config, probe=probe, probe_path="probe.json" if probe else None)
    written += write_heads(heads, folder)
    gradients, reason = run_gradients(args, source, options, folder)
    written += [folder / "gradients.json", folder / "gradients.png"] if gradients is not None else []
    summary = summarise(heads, gradients, reason, probe, command=_command_line())
    written.append(write_text_atomic(summary, folder / "README.md"))
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    print(f"summary: {folder / 'README.md'}")
    return 0


def run_probe(args: argparse.Namespace, source, loaded, folder: Path) -> dict | None:
    """The probe's result over the sentences the analyses read, or None for plain text."""
    if source.kind != "treebank":
        return None
    from ..config import ScoreConfig
    from ..pipeline import run_probe as probe
    from ..results import build_result, write_result

    config = ScoreConfig(
        model=args.model,
        treebank=str(source.path),
        limit=source.sentences_read if source.limit is not None else None,
        max_length=args.max_length,
        batch_size=args.batch_size,
        device=args.device,
        revision=args.revision,
        bootstrap=args.bootstrap,
        seed=args.seed,
        trust_remote_code=args.trust_remote_code,
    )
    result = build_result(probe(config, loaded=loaded))
    write_result(result, folder / "probe.json")
    return result


def run_gradients(args: argparse.Namespace, source, options, folder: Path) -> tuple[dict | None, str | None]:
    """Gradient result, or None and the reason it could not be computed."""
    from ..analyses.gradients import MASK_RATE, load_masked_lm
    from ..analyses.overview import gradient_result
    from ..errors import ProbingError

    try:
        loaded = load_masked_lm(args.model, revision=args.revision, device=args.device, trust_remote_code=args.trust_remote_code)
    except ProbingError as error:
        return None, error.message
    config = {**options.as_dict(), "seed": args.seed, "mask_rate": MASK_RATE}
    result = gradient_result(loaded, source, config, options)
    write_gradients(result, folder)
    return result, None


def summarise(heads: dict, gradients: dict | None, reason: str | None, probe: dict | None, *, command: str) -> str:
    """The report's README.md."""
    from ..tables import score_table

    model, source = heads["model"], heads["input"]
    lines = [
        f"# What the heads of {model['name_or_path']} look at",
        "",
        f"{model['architecture']}, {model['num_layers']} layers x {model['num_heads']} heads, on "
        f"`{source['path']}` (sha256 `{source['sha256'][:16]}`): {source['units_used']} units"
        f"{' (segment pairs)' if source['pairs'] else ''}, {source['skipped']['too_long']} skipped as too long.",
        f"Made by `{command}` with probing {heads['tool']['version']} ({heads['tool']['git_commit'] or 'no git'}) "
        f"on {heads['created']}. Layers and heads count from 1 here, from 0 in the JSON files.",
        "",
        "## Where attention goes (Clark et al. 2019, section 3)",
        "",
        "![average attention per head and layer](surface.png)",
        "",
        layer_table(heads, tablefmt="github"),
        "",
        *_strong_heads(heads),
        "",
        "## Entropy",
        "",
        "![entropy of each head's attention](entropy.png)",
        "",
        "## Heads by behaviour (section 6)",
        "",
        "![MDS map of the heads](heads.png)",
        "",
        behaviour_table(heads, tablefmt="github"),
        "",
        "Distances: Jensen-Shannon divergence averaged over tokens (add 1e-10, renormalise), MDS of its square "
        "root; thresholds in `heads.json` (`behaviour_rules`).",
        "",
        "## Gradient importance (Figure 3)",
        "",
    ]
    if gradients is None:
        lines += [f"Not computed: {reason}"]
    else:
        lines += ["![gradient of the MLM loss by kind of key](gradients.png)", "", gradient_table(gradients, tablefmt="github")]
    lines += ["", "## Probe (section 4)", ""]
    if probe is None:
        lines += ["Not run: the input is plain text, and the probe needs dependency trees."]
    else:
        treebank = probe["treebank"]
        lines += [
            f"{treebank['sentences_scored']} sentences, {treebank['words_scored']} words (`probe.json`); the best "
            "heads are circled on the MDS map.",
            "",
            score_table(probe, tablefmt="github"),
        ]
    files = ["surface.json", "surface.png", "entropy.png", "heads.json", "heads.png"]
    files += ["gradients.json", "gradients.png"] if gradients is not None else []
    files += ["probe.json"] if probe is not None else []
    lines += ["", "Files: " + ", ".join(f"[{name}]({name})" for name in files), ""]
    return "\n".join(lines).replace("\u00a0", " ")


def _strong_heads(result: dict) -> list[str]:
    """Lines naming the heads with more than SHARE of their attention on one target."""
    names = result["token_names"]
    targets = {
        "previous": "the previous token",
        "next": "the next token",
        "first_special": names["first_special"],
        "separator": names["separator"],
        "punctuation": ". and ,",
        "self": "themselves",
    }
    lines = []
    for statistic, target in targets.items():
        values = result["surface"]["heads"][statistic]
        if values is None:
            continue
        found = [
            f"{layer + 1}-{head + 1} ({100 * value:.0f}%)"
            for layer, row in enumerate(values)
            for head, value in enumerate(row)
            if value > SHARE
        ]
        lines.append(f"- Heads with more than {100 * SHARE:.0f}% of their attention on {target}: {', '.join(found) or 'none'}.")
    return lines


def _command_line() -> str:
    return "probing " + " ".join(shlex.quote(part) for part in sys.argv[1:])
