"""One self-contained HTML page per result: what each head does, and the no-op test (``probing explore``).

The page holds everything inline (CSS, script, data; no request leaves it):

- per relation and direction, the layer x head heatmap of the probe's
  accuracy, the chosen head outlined; a click on a cell (or Enter/Space on it,
  arrow keys move between cells) shows that head's *sentence views* and its
  no-op shares, and puts the head in the address (``PAGE.html#head=det:dep_to_head:3-9``,
  layer-head from 1), so that a link opens the page on that head;
- a sentence view (Clark et al. 2019, Figure 5) puts the words in a row and
  draws, above them, an arc from each word to the word it attends to most
  (``dep->head``; for a ``head->dep`` heatmap, from the word that attends to
  it most), thicker and darker for more attention: green when the word is a
  dependent of the relation and the arc finds its gold head, red when it
  misses, grey for other words; below each word a bar gives its share of
  attention to special tokens, and below that the relation's gold arcs are
  dashed;
- the no-op table (each relation's chosen head: the share of attention to
  special tokens and punctuation from dependents vs other words, with
  intervals) and its per-layer means;
- the probe's leaderboard table (sortable by any column), the surface
  statistics' layer table when given, and the tables of any other results.

No torch here, and no analysis imported: the page is made from result dicts,
the views' plain lists and the treebank's sentences; the no-op and surface
sections and the chosen heads come from those analyses' registrations
(``page_section`` and ``chosen_heads`` in :mod:`probing.plugins`).

>>> heatmap_colour(0.0), heatmap_colour(1.0)
('#440154', '#fde725')
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from probing.data.relations import relation_pairs
from probing.data.treebank import Sentence
from probing.naming import DIRECTIONS, WORDS, head_name, percent
from probing.plugins import analyses
from probing.report.board import build_leaderboard, model_label
from probing.report.escaping import html_text, script_json
from probing.report.renderers.html_page import asset, html_table

DECIMALS = 4


def heatmap_colour(value: float | None) -> str:
    """The viridis colour of an accuracy in [0, 1] as #rrggbb (grey for no value)."""
    if value is None:
        return "#d9d9d9"
    from matplotlib import colormaps

    red, green, blue, _ = colormaps["viridis"](min(max(value, 0.0), 1.0))
    return f"#{round(255 * red):02x}{round(255 * green):02x}{round(255 * blue):02x}"


def _text_colour(value: float | None) -> str:
    return "#000" if value is not None and value > 0.55 else "#fff"


def sentence_block(sentence: Sentence, index: int, relations: Sequence[str]) -> dict:
    """What a view needs of a treebank sentence: words, gold heads and labels, and each relation's pairs.

    >>> s = Sentence(words=("the", "cat", "sat"), heads=(1, 2, -1), labels=("det", "nsubj", "root"),
    ...              upos=("DET", "NOUN", "VERB"))
    >>> sentence_block(s, 4, ["det"])["pairs"]
    {'det': [[0, 1]]}
    """
    return {
        "index": index,
        "words": list(sentence.words),
        "heads": list(sentence.heads),
        "labels": list(sentence.labels),
        "pairs": {name: [list(pair) for pair in relation_pairs(name, sentence)] for name in relations},
    }


def page_data(probe: dict, noop: dict | None, views: dict | None, sentences: Sequence[dict]) -> dict:
    """The data the page's script reads: accuracies, chosen heads, no-op shares, sentences and views."""
    relations = list(probe["relations"])
    accuracy = {}
    for name, entry in probe["relations"].items():
        total = entry["total"]
        accuracy[name] = {direction: [[round(count / total, DECIMALS) if total else None for count in row]
                                      for row in entry["heads"][direction]] for direction in DIRECTIONS}
    shares = {}
    if noop is not None:
        for name, entry in noop["noop"]["relations"].items():
            shares[name] = {group: entry["heads"][group] for group in noop["noop"]["groups"]}
    return {
        "model": model_label(probe["model"], probe["config"].get("attention", "weights")),
        "layers": probe["model"]["num_layers"],
        "heads": len(next(iter(probe["relations"].values()))["heads"]["dep_to_head"][0]),
        "relations": relations,
        "directions": {direction: WORDS[direction] for direction in DIRECTIONS},
        "accuracy": accuracy,
        "chosen": analyses()["noop"].load("chosen_heads")(probe),
        "noop": shares,
        "sentences": list(sentences),
        "views": None if views is None else views["heads"],
    }


def _heatmaps(data: dict) -> str:
    """One grid table per relation and direction; cells carry their head and are reachable by keyboard."""
    figures = []
    first = True
    for relation in data["relations"]:
        chosen = data["chosen"].get(relation)
        for direction, words in data["directions"].items():
            grid = data["accuracy"][relation][direction]
            rows = []
            for layer, values in enumerate(grid):
                cells = []
                for head, value in enumerate(values):
                    is_chosen = bool(chosen and chosen["layer"] == layer and chosen["head"] == head
                                     and chosen["direction"] == direction)
                    label = (f"{relation}, {words}, head {head_name(layer, head)}: "
                             + ("no pairs" if value is None else f"{percent(value)}%")
                             + (" (chosen)" if is_chosen else ""))
                    tabindex = "0" if first else "-1"
                    first = False
                    cells.append(
                        f'<td class="cell{" chosen" if is_chosen else ""}" role="gridcell" tabindex="{tabindex}" '
                        f'aria-selected="false" aria-label="{html_text(label)}" title="{html_text(label)}" '
                        f'data-relation="{html_text(relation)}" data-direction="{direction}" data-layer="{layer}" '
                        f'data-head="{head}" style="background:{heatmap_colour(value)}"></td>')
                rows.append(f'<tr><th scope="row">{layer + 1}</th>{"".join(cells)}</tr>')
            heads = "".join(f'<th scope="col">{head + 1}</th>' for head in range(data["heads"]))
            chosen_text = ""
            if chosen and chosen["direction"] == direction:
                chosen_text = f' · chosen {head_name(chosen["layer"], chosen["head"])}'
            figures.append(
                f'<figure class="map"><figcaption><b>{html_text(relation)}</b> {html_text(words)}'
                f'{html_text(chosen_text)}</figcaption>'
                f'<table class="heat" role="grid" aria-label="{html_text(relation)}, {html_text(words)}: '
                f'accuracy of every head; arrow keys move, Enter shows the head">'
                f'<thead><tr><th></th>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table></figure>')
    scale = "".join(f'<span style="background:{heatmap_colour(step / 10)}"></span>' for step in range(11))
    return (f'<div class="maps">{"".join(figures)}</div>'
            f'<p class="scale" aria-hidden="true">0%<span class="bar">{scale}</span>100% accuracy · layers down, '
            'heads across, from 1 · outlined: the chosen head</p>')


def _section(result: dict | None) -> str:
    """The section a result's analysis gives the page (its ``page_section``, found through the registry)."""
    return "" if result is None else analyses()[result["analysis"]].load("page_section")(result)


def _leaderboard_section(probe: dict, noop: dict | None, others: Sequence[dict]) -> str:
    results = [probe] + ([noop] if noop is not None else []) + list(others)
    board = build_leaderboard(results)
    return ('<section id="tables" aria-labelledby="tables-title"><h2 id="tables-title">Tables</h2>'
            + "".join(html_table(table, "h3") for table in board.tables) + "</section>")


def render_page(probe: dict, *, noop: dict | None = None, views: dict | None = None,
                sentences: Sequence[dict] = (), surface: dict | None = None, others: Sequence[dict] = (),
                command: str = "") -> str:
    """The whole page as one HTML string (see the module docstring)."""
    data = page_data(probe, noop, views, sentences)
    model = probe["model"]
    treebank = probe["treebank"]
    title = f"What the heads of {data['model']} do"
    payload = script_json(data)
    facts = (f"{model['architecture']}, {model['num_layers']} layers x {data['heads']} heads, on "
             f"{Path(str(treebank['path'])).name} ({treebank['sentences_scored']} sentences, "
             f"{treebank['words_scored']} words). Layers and heads count from 1.")
    legend = ('<p class="legend">Arcs above the words: <i style="background:#1a7f37"></i>a dependent of the relation '
              'finds its gold head <i style="background:#cf222e"></i>misses it <i style="background:#8c959f"></i>'
              "other words; thicker and darker: more attention. dep\u2192head: from each word to the word it "
              "attends to most; head\u2192dep: from the word that attends to it most. Bar under each word: its "
              "share of attention to special tokens. Dashed below: the relation's gold arcs, to the head.</p>")
    sections = [
        f'<section id="heads" aria-labelledby="heads-title"><h2 id="heads-title">Heads by relation</h2>'
        f"<p>Accuracy of every head at predicting each word's syntactic head (Clark et al. 2019, section 4). "
        f"Click a cell, or Tab to a map and press Enter (arrow keys move), to see that head in sentences.</p>"
        f"{_heatmaps(data)}</section>",
        '<section id="detail" aria-live="polite" aria-labelledby="detail-title"><h2 id="detail-title">Head</h2>'
        f'<p id="detail-accuracy"></p><div id="detail-noop"></div>{legend}<div id="detail-views" class="views"></div>'
        "</section>",
        _section(noop),
        _leaderboard_section(probe, noop, others),
        _section(surface),
    ]
    anchors = [("heads", "Heads"), ("detail", "Sentence views")] + ([("noop", "No-op test")] if noop else []) \
        + [("tables", "Tables")] + ([("surface", "Surface")] if surface else [])
    nav = " ".join(f'<a href="#{anchor}">{text}</a>' for anchor, text in anchors)
    footer = f"<footer>Made by <code>{html_text(command)}</code>.</footer>" if command else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{html_text(title)}</title>\n<style>{asset('board.css')}{asset('page.css')}</style>\n</head>\n<body>\n"
        f"<header><h1>{html_text(title)}</h1><p>{html_text(facts)}</p><nav>{nav}</nav></header>\n<main>\n"
        + "\n".join(section for section in sections if section)
        + f"\n</main>\n{footer}\n"
        f'<script type="application/json" id="page-data">{payload}</script>\n'
        f"<script>{asset('board.js')}</script>\n<script>{asset('page.js')}</script>\n</body>\n</html>\n"
    )


__all__ = ["render_page", "page_data", "sentence_block", "heatmap_colour"]
