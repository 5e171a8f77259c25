"""``probing report``: surface, heads, gradients and the probe on the same sentences, in one folder.

One pass over the input feeds every analysis at once (the engine runs one
forward pass per batch and hands it to each); the weights are read once,
with the model's LM head when the checkpoint has a trained one (then the
gradients are added), without it otherwise (the reason goes into the
summary). The probe runs only when the input is a treebank read without
``--pairs`` (it needs trees, and scores one sentence per unit).
The folder holds each analysis's JSON and figures and a README.md that shows
the figures with the main numbers.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from probing.commands.common import EngineCommand, add_bootstrap_options, add_engine_options

SHARE = 0.5
"""Heads that give more than this share of attention to one target are listed in the summary."""

FILES = ("probe.json", "surface.json", "surface-surface.png", "surface-entropy.png", "heads.json", "heads-heads.png",
         "gradients.json", "gradients-gradients.png", "README.md")
"""Every file a report may write into its folder; each is checked like --output before the model loads."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = ("--output names the folder (created if needed). It gets surface.json, heads.json, probe.json "
                     "(treebank input without --pairs), gradients.json (checkpoints with a trained LM head), their "
                     "figures and README.md.")
    add_engine_options(parser, pooling=True, figures=False, metavar="FOLDER", required=True,
                       help="the report's folder (created if needed); each file in it is written atomically")
    add_bootstrap_options(parser)


def run(args: argparse.Namespace) -> int:
    from probing.analyses.gradients.accumulator import GradientAccumulator
    from probing.analyses.heads.accumulator import HeadsAccumulator, probe_marks
    from probing.analyses.probe.accumulator import ProbeAccumulator, treebank_block
    from probing.atomic import write_text_atomic
    from probing.commands.surface import token_names
    from probing.data.relations import DEFAULT_RELATIONS
    from probing.engine.readings import READINGS
    from probing.errors import ProbingError
    from probing.report.figures import entropy_figure, gradient_figure, mds_figure, surface_figure
    from probing.results.io import write_result

    folder = Path(args.output)
    if folder.exists() and not folder.is_dir():
        raise ProbingError("is a file; the report is a folder", source=f"--output {folder}")
    report_args = argparse.Namespace(**{**vars(args), "output": None})
    with EngineCommand(report_args, head="lm", outputs=tuple(str(folder / name) for name in FILES)) as command:
        target = dict(zip(FILES, command.outputs))  # checked paths (a followed symbolic link gives its target)
        loaded = command._loaded = _load(args)
        heads_per_layer = READINGS[args.attention].heads(loaded.num_heads)
        names = token_names(loaded)
        heads = HeadsAccumulator(loaded.num_layers, heads_per_layer, causal=loaded.is_causal, token_names=names,
                                 seed=args.seed)
        accumulators = [heads]
        probe = gradients = None
        if command.source.kind == "treebank" and not command.source.pairs:
            probe = ProbeAccumulator.create(DEFAULT_RELATIONS, loaded.num_layers, heads_per_layer,
                                            offsets=(-3, -2, -1, 1, 2, 3), bootstrap=args.bootstrap, seed=args.seed,
                                            causal=loaded.is_causal)
            accumulators.append(probe)
        if loaded.head is not None and args.attention == "weights":
            gradients = GradientAccumulator(loaded.num_layers, loaded.num_heads, loss=loaded.head, seed=args.seed,
                                            token_names=names)
            accumulators.append(gradients)
        stats = command.run(accumulators, "report")
        if not command.is_main:
            return 0
        written = []
        heads_result = command.result("heads", stats, heads, {})
        surface_result = {**heads_result, "analysis": "surface", "state": _surface_state(heads_result)}
        surface_result.pop("heads")
        probe_result = None
        if probe is not None:
            probe_result = command.result("probe", stats, probe, {
                "relations": list(DEFAULT_RELATIONS), "offsets": [-3, -2, -1, 1, 2, 3], "random_init": args.random_init,
                "bootstrap": {"replicates": args.bootstrap, "seed": args.seed, "method": "poisson"}})
            probe_result["treebank"] = treebank_block(command.source, stats, probe.counts)
            heads_result["heads"]["probe"] = "probe.json"
            heads_result["heads"]["probe_marks"] = probe_marks(probe_result, loaded.num_layers, heads_per_layer)
            written.append(write_result(probe_result, target["probe.json"]))
        else:
            heads_result["heads"]["probe"], heads_result["heads"]["probe_marks"] = None, []
        written += [write_result(surface_result, target["surface.json"]),
                    surface_figure(surface_result, target["surface-surface.png"]),
                    entropy_figure(surface_result, target["surface-entropy.png"]),
                    write_result(heads_result, target["heads.json"]),
                    mds_figure(heads_result, target["heads-heads.png"])]
        gradient_result, reason = None, loaded.extra.get("no_head") or "the attention is not read as raw weights"
        if gradients is not None:
            gradient_result = command.result("gradients", stats, gradients, {"loss": loaded.head, "mask_rate": 0.15})
            written += [write_result(gradient_result, target["gradients.json"]),
                        gradient_figure(gradient_result, target["gradients-gradients.png"])]
        no_probe = ("the input is plain text, and the probe needs dependency trees" if command.source.kind != "treebank"
                    else "--pairs joins two sentences into one unit, and the probe scores single sentences (run "
                         "probing score on the same sentences)")
        summary = summarise(heads_result, gradient_result, reason, probe_result, command=_command_line(),
                            no_probe=no_probe)
        written.append(write_text_atomic(summary, target["README.md"]))
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    print(f"summary: {folder / 'README.md'}")
    return 0


def _load(args):
    from probing.model.loading import load_model

    return load_model(args.model, revision=args.revision, device=args.device, dtype=args.dtype,
                      random_init=args.random_init, seed=args.seed, trust_remote_code=args.trust_remote_code,
                      stack=args.stack, head="lm", head_optional=True, device_map=args.device_map)


def _surface_state(heads_result: dict) -> dict:
    """The surface statistics' part of the heads accumulator's state (their names without the prefix)."""
    return {name.split(".", 1)[1]: value for name, value in heads_result["state"].items() if name.startswith("surface.")}


def summarise(heads: dict, gradients: dict | None, reason: str | None, probe: dict | None, *, command: str,
              no_probe: str = "the input is plain text, and the probe needs dependency trees") -> str:
    """The report's README.md; ``no_probe`` says why there is no probe when ``probe`` is None."""
    from probing.analyses.probe.tables import score_table
    from probing.commands.gradients import gradient_table
    from probing.commands.heads import behaviour_table
    from probing.commands.surface import layer_table

    model, source = heads["model"], heads["input"]
    lines = [
        f"# What the heads of {model['name']} look at",
        "",
        f"{model['architecture']}, {model['num_layers']} layers x {model['num_heads']} heads, on "
        f"`{Path(source['path']).name}` (sha256 `{source['sha256'][:16]}`): {source['units_used']} units"
        f"{' (segment pairs)' if source['pairs'] else ''}, {source['skipped']['too_long']} skipped as too long.",
        f"Made by `{command}` with probing {heads['tool']['version']} ({heads['tool']['git_commit'] or 'no git'}) "
        f"on {heads['created']}. Layers and heads count from 1 here, from 0 in the JSON files.",
        "",
        "## Where attention goes (Clark et al. 2019, section 3)",
        "",
        "![average attention per head and layer](surface-surface.png)",
        "",
        layer_table(heads, tablefmt="github"),
        "",
        *_strong_heads(heads),
        "",
        "## Entropy",
        "",
        "![entropy of each head's attention](surface-entropy.png)",
        "",
        "## Heads by behaviour (section 6)",
        "",
        "![MDS map of the heads](heads-heads.png)",
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
        lines += ["![gradient of the LM loss by kind of key](gradients-gradients.png)", "",
                  gradient_table(gradients, tablefmt="github")]
    lines += ["", "## Probe (section 4)", ""]
    if probe is None:
        lines += [f"Not run: {no_probe}."]
    else:
        treebank = probe["treebank"]
        lines += [
            f"{treebank['sentences_scored']} sentences, {treebank['words_scored']} words (`probe.json`); the best "
            "heads are circled on the MDS map.",
            "",
            score_table(probe, tablefmt="github"),
        ]
    files = ["surface.json", "surface-surface.png", "surface-entropy.png", "heads.json", "heads-heads.png"]
    files += ["gradients.json", "gradients-gradients.png"] if gradients is not None else []
    files += ["probe.json"] if probe is not None else []
    lines += ["", "Files: " + ", ".join(f"[{name}]({name})" for name in files), ""]
    return "\n".join(lines).replace("\u00a0", " ")


def _strong_heads(result: dict) -> list[str]:
    """Lines naming the heads with more than SHARE of their attention on one target."""
    from probing.naming import head_name

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
            f"{head_name(layer, head)} ({100 * value:.0f}%)"
            for layer, row in enumerate(values)
            for head, value in enumerate(row)
            if value > SHARE
        ]
        lines.append(f"- Heads with more than {100 * SHARE:.0f}% of their attention on {target}: {', '.join(found) or 'none'}.")
    return lines


def _command_line() -> str:
    return "probing " + " ".join(shlex.quote(part) for part in sys.argv[1:])
