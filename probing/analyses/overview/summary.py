"""The README.md of a report folder: each figure with the main numbers of its analysis.

>>> result = {"token_names": {"first_special": "[CLS]", "separator": "[SEP]"},
...           "surface": {"heads": {"previous": [[0.9, 0.1]], "next": None, "first_special": [[0.0, 0.6]],
...                                 "separator": [[0.0, 0.0]], "punctuation": [[0.0, 0.0]], "self": [[0.1, 0.0]]}}}
>>> for line in strong_heads(result)[:2]:
...     print(line)
- Heads with more than 50% of their attention on the previous token: 1-1 (90%).
- Heads with more than 50% of their attention on [CLS]: 1-2 (60%).
"""

from __future__ import annotations

from pathlib import Path

from probing.analyses.gradients.report import gradient_table
from probing.analyses.heads.report import behaviour_table
from probing.analyses.probe.tables import score_table
from probing.analyses.surface.report import layer_table
from probing.naming import head_name
from probing.report.escaping import markdown_text

SHARE = 0.5
"""Heads that give more than this share of attention to one target are listed in the summary."""


def summarise(heads: dict, gradients: dict | None, reason: str | None, probe: dict | None, *, command: str,
              no_probe: str = "the input is plain text, and the probe needs dependency trees") -> str:
    """The report's README.md; ``no_probe`` says why there is no probe when ``probe`` is None."""
    model, source = heads["model"], heads["input"]
    lines = [
        f"# What the heads of {markdown_text(model['name'])} look at",
        "",
        f"{markdown_text(model['architecture'])}, {model['num_layers']} layers x {model['num_heads']} heads, on "
        f"{markdown_text(Path(source['path']).name)} (sha256 `{source['sha256'][:16]}`): {source['units_used']} units"
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
        *strong_heads(heads),
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


def strong_heads(result: dict) -> list[str]:
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
            f"{head_name(layer, head)} ({100 * value:.0f}%)"
            for layer, row in enumerate(values)
            for head, value in enumerate(row)
            if value > SHARE
        ]
        lines.append(f"- Heads with more than {100 * SHARE:.0f}% of their attention on {markdown_text(target)}: "
                     f"{', '.join(found) or 'none'}.")
    return lines
