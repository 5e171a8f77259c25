"""The multilingual atlas: tables and the figure of one model's heads across languages (no torch).

Made from the object of :func:`probing.stats.transfer.transfer`: per relation, the transfer matrix (rows:
the language a head was chosen in, columns: where it is scored) with each column's own held-out head and
best offset below it; a summary of every language and relation (the held-out head, the best offset, and
how many languages chose the same head); and a figure, languages x relations, each cell the held-out
accuracy with the head named and the offset baseline marked. Layers and heads count from 1 here, from 0
in the JSON. A relation without pairs in a language is shown as "none" and is left out of every mean.

>>> from probing.testing import planted_language_result
>>> from probing.stats.transfer import transfer
>>> de = planted_language_result("de_pud", chosen=(0, 1, "dep_to_head"), correct={(0, 1): 6, (1, 0): 3}, total=10)
>>> zh = planted_language_result("zh_pud", chosen=(1, 0, "dep_to_head"), correct={(0, 1): 2, (1, 0): 5}, total=10)
>>> print(matrix_markdown(transfer([de, zh]), "dobj").splitlines()[2])
| de_pud: 1-2 | **60.0** | 20.0 |
"""

from __future__ import annotations

from collections import Counter

from probing.naming import head_name, offset_name, percent_with_interval
from probing.report.escaping import markdown_row, markdown_text

ARROWS = {"dep_to_head": "", "head_to_dep": " h>d"}


def head_text(head: dict | None) -> str:
    """``8-5`` or ``8-5 h>d`` (layer-head from 1; h>d: the head attends to its dependent)."""
    if head is None:
        return "none"
    return head_name(head["layer"], head["head"]) + ARROWS[head["direction"]]


def percent(scored: dict | None, *, interval: bool = True) -> str:
    """``66.0 [60.1, 70.2]``; ``none`` where there is nothing to score."""
    if scored is None or scored.get("accuracy") is None:
        return "none"
    return percent_with_interval(scored["accuracy"], scored.get("interval") if interval else None)


def offset_text(offset: dict | None, *, interval: bool = False) -> str:
    """``13.9 (-1)``: the best offset's accuracy and the offset."""
    if offset is None:
        return "none"
    return f"{percent(offset, interval=interval)} ({offset_name(offset['offset'])})"


table_row = markdown_row
"""One line of a Markdown table (probing.report.escaping.markdown_row): the language names come from the results'
treebank paths and may hold ``|``, line breaks or markup."""


def matrix_markdown(atlas: dict, relation: str) -> str:
    """One relation's transfer matrix as a Markdown table: a row per source language, a column per target."""
    entry = atlas["relations"][relation]
    languages = atlas["languages"]
    lines = [table_row(["head chosen in", *languages]), "|---" * (len(languages) + 1) + "|"]
    for source in languages:
        cells = []
        for target in languages:
            text = percent(entry["matrix"][source][target], interval=False)
            cells.append(f"**{text}**" if source == target and text != "none" else text)
        lines.append(table_row([f"{source}: {head_text(entry['chosen'][source])}", *cells]))
    lines.append(table_row(["own held-out head", *(
        f"{percent(entry['own'][t]['head'], interval=False)} {head_text(entry['own'][t]['head'])}".replace("none none", "none")
        for t in languages)]))
    lines.append(table_row(["best offset", *(offset_text(entry["own"][t]["offset"]) for t in languages)]))
    lines.append(table_row(["pairs (report half)", *(entry["pairs"][t] for t in languages)]))
    return "\n".join(lines)


def transfer_loss(atlas: dict, relation: str) -> float | None:
    """Mean over ordered pairs of languages A != B of (B's own held-out accuracy - accuracy of A's head in B),
    in points; None with fewer than two languages that have pairs."""
    entry = atlas["relations"][relation]
    losses = []
    for source in atlas["languages"]:
        for target in atlas["languages"]:
            scored, own = entry["matrix"][source][target], entry["own"][target]["head"]
            if source != target and scored is not None and own is not None:
                losses.append(100 * (own["accuracy"] - scored["accuracy"]))
    return sum(losses) / len(losses) if losses else None


NO_DATA = "no data"
"""The summary's "same head" cell of a relation that no language has pairs of on both halves."""


def shared_head(atlas: dict, relation: str) -> tuple[str, int, int]:
    """The head (and direction) chosen in most languages, how many chose it, and how many chose any: of the
    languages with pairs of the relation on both halves (a head chosen on a choice half and scored on no pair of
    its report half is no evidence); :data:`NO_DATA` and 0 of 0 when none has."""
    entry = atlas["relations"][relation]
    chosen = [head_text(head) for language, head in entry["chosen"].items()
              if head is not None and entry["pairs"][language]]
    if not chosen:
        return NO_DATA, 0, 0
    head, count = sorted(Counter(chosen).items(), key=lambda item: (-item[1], item[0]))[0]
    return head, count, len(chosen)


def shared_head_text(atlas: dict, relation: str) -> str:
    """The summary's "same head" cell: ``1-2 in 2 of 3``, or :data:`NO_DATA`."""
    head, count, chosen = shared_head(atlas, relation)
    return NO_DATA if not chosen else f"{head} in {count} of {chosen}"


def summary_markdown(atlas: dict) -> str:
    """Languages x relations: the held-out head's accuracy [interval] and name, then the best offset."""
    relations = list(atlas["relations"])
    lines = [table_row(["language", *relations]), "|---" * (len(relations) + 1) + "|"]
    for language in atlas["languages"]:
        cells = []
        for name in relations:
            own = atlas["relations"][name]["own"][language]
            if own["head"] is None:
                cells.append("none")
                continue
            cells.append(f"{percent(own['head'])} {head_text(own['head'])}; offset {offset_text(own['offset'])}")
        lines.append(table_row([language, *cells]))
    lines.append(table_row(["same head", *(shared_head_text(atlas, name) for name in relations)]))
    losses = [transfer_loss(atlas, name) for name in relations]
    lines.append(table_row(["transfer loss, points", *("none" if loss is None else f"{loss:.1f}" for loss in losses)]))
    return "\n".join(lines)


def atlas_markdown(atlas: dict, title: str) -> str:
    """The whole Markdown page of one model: summary, then one transfer matrix per relation, then the rules."""
    blocks = [f"# {markdown_text(title)}", "", "Held-out per language: each head and offset chosen on the even half of the "
              "treebank's sentences and reported on the odd half, accuracy % [95% bootstrap interval]; layer-head "
              "from 1; h>d: the head attends to its dependent (else the dependent attends to its head).", "",
              summary_markdown(atlas), "",
              "same head: the head chosen in most languages and in how many of those with pairs (no data: none has "
              "any); transfer loss: "
              "the mean, over ordered pairs of languages, of a language's own held-out accuracy minus that of "
              "the head chosen in the other language; none: no pair of that relation in the treebank.", ""]
    for name in atlas["relations"]:
        blocks += ["## " + markdown_text(f"{name}: heads across languages"), "", matrix_markdown(atlas, name), ""]
    blocks += ["Rows: the language a head was chosen in (on its even half); columns: the language it is scored "
               "in (on its odd half); bold: the diagonal, the ordinary held-out figure. Intervals of every cell "
               "are in the JSON beside this file.", ""]
    return "\n".join(blocks)


def atlas_figure(atlas: dict, path, title: str):
    """Languages (rows) x relations (columns): each cell coloured by the held-out accuracy, labelled with it,
    the head, and the best offset's accuracy; a cell whose head does not beat its offset is hatched."""
    import numpy as np
    from matplotlib.patches import Rectangle

    from probing.atomic import save_figure_atomic
    from probing.report.drawing import new_figure

    languages, relations = atlas["languages"], list(atlas["relations"])
    values = np.full((len(languages), len(relations)), np.nan)
    figure = new_figure(1.9 * len(relations) + 1.6, 0.62 * len(languages) + 1.4)
    axes = figure.subplots()
    for row, language in enumerate(languages):
        for column, name in enumerate(relations):
            own = atlas["relations"][name]["own"][language]
            if own["head"] is not None:
                values[row, column] = 100 * own["head"]["accuracy"]
    image = axes.imshow(values, cmap="viridis", vmin=0, vmax=100, aspect="auto")
    for row, language in enumerate(languages):
        for column, name in enumerate(relations):
            own = atlas["relations"][name]["own"][language]
            if own["head"] is None:
                axes.text(column, row, "none", ha="center", va="center", fontsize=8, color="0.4")
                continue
            value, offset = values[row, column], own["offset"]
            beaten = offset is not None and own["head"]["accuracy"] <= offset["accuracy"]
            if beaten:
                axes.add_patch(Rectangle((column - 0.5, row - 0.5), 1, 1, fill=False, hatch="///",
                                             edgecolor="white", linewidth=0))
            label = f"{value:.1f} {head_text(own['head'])}\noffset {offset_text(offset)}"
            axes.text(column, row, label, ha="center", va="center", fontsize=7.5,
                      color="black" if value > 60 or beaten else "white",
                      bbox=dict(facecolor="white", alpha=0.75, linewidth=0, pad=1.5) if beaten else None)
    axes.set_xticks(range(len(relations)), relations)
    axes.set_yticks(range(len(languages)), languages)
    axes.set_title(title, fontsize=10)
    bar = figure.colorbar(image, ax=axes, fraction=0.04)
    bar.set_label("held-out accuracy % (odd half)")
    figure.text(0.01, 0.01, "head chosen on the even half, layer-head from 1; offset: the best offset on the same "
                "halves; hatched: the head does not beat it", fontsize=7)
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    return save_figure_atomic(figure, path)
