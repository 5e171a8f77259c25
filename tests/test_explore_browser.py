"""The explore page and the leaderboard page in a real browser: clicks, keys, sorting, layout, no network.

Runs Debian's headless Chromium over the DevTools protocol (tests/browser.py). Where Chromium is absent
the tests are skipped with one line saying so; under CI (which installs it) its absence is a failure.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from browser import Browser, missing_reason

from probing.cli import main
from probing.data.treebank import read_treebank
from probing.testing import sample_path, tiny_bert

REPO = Path(__file__).resolve().parents[1]
_REASON = missing_reason()
if _REASON and os.environ.get("CI"):
    pytest.fail(f"browser tests cannot run under CI: {_REASON}", pytrace=False)
# every test drives a browser: a child process (chromium), so the slow tier
pytestmark = [pytest.mark.skipif(_REASON is not None, reason=_REASON or ""), pytest.mark.slow]

LIMIT = 40


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("explore")
    output = folder / "page.html"
    argv = ["explore", "--quiet", "--model", tiny_bert(), "--treebank", str(sample_path()), "--limit", str(LIMIT),
            "--bootstrap", "20", "--sentences", "3", "--relations", "det", "dobj", "all", "--output", str(output)]
    assert main(argv) == 0
    return output


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    opened = Browser(tmp_path_factory.mktemp("chromium-profile"))
    yield opened
    opened.close()


def reference_targets(words: list[str], layer: int, head: int) -> list[int]:
    """The word each word attends to most (not itself) in one head, from transformers' own attention:
    rows of a word's pieces averaged, columns summed (the paper's pooling), written out with loops."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_bert())
    model = AutoModel.from_pretrained(tiny_bert(), attn_implementation="eager").eval()
    encoded = tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        attention = model(**encoded, output_attentions=True).attentions[layer][0, head].numpy()  # [query, key]
    owner = encoded.word_ids()
    targets = []
    for i in range(len(words)):
        pieces = [t for t, w in enumerate(owner) if w == i]
        scores = []
        for j in range(len(words)):
            columns = [t for t, w in enumerate(owner) if w == j]
            scores.append(-1.0 if j == i else sum(attention[q, k] for q in pieces for k in columns) / len(pieces))
        targets.append(int(np.argmax(scores)))
    return targets


def shown_view(browser) -> dict:
    return browser.evaluate("""(function(){var d=document.getElementById('detail');
      var svg=d.querySelector('svg.sentence');
      return {head:d.getAttribute('data-head'),relation:d.getAttribute('data-relation'),
        direction:d.getAttribute('data-direction'),views:d.querySelectorAll('svg.sentence').length,
        sentence:+svg.getAttribute('data-sentence'),
        words:Array.prototype.map.call(svg.querySelectorAll('text.word'),function(t){return t.firstChild.textContent;}),
        arcs:Array.prototype.map.call(svg.querySelectorAll('path.arc'),function(p){
          return [+p.getAttribute('data-from'),+p.getAttribute('data-to'),p.getAttribute('class')];}),
        gold:Array.prototype.map.call(svg.querySelectorAll('path.gold'),function(p){
          return [+p.getAttribute('data-from'),+p.getAttribute('data-to')];})};})()""")


def test_clicking_a_cell_shows_that_heads_sentence_views(page, browser):
    url = browser.open(page)
    cell = 'td.cell[data-relation="det"][data-direction="dep_to_head"][data-layer="1"][data-head="2"]'
    browser.click(cell)
    view = shown_view(browser)
    assert (view["head"], view["relation"], view["direction"]) == ("2-3", "det", "dep_to_head")
    assert view["views"] == 3
    sentences = list(read_treebank(sample_path()))
    sentence = sentences[view["sentence"]]
    assert view["words"] == list(sentence.words)
    targets = reference_targets(list(sentence.words), layer=1, head=2)
    assert sorted((start, end) for start, end, _ in view["arcs"]) == sorted(enumerate(targets))
    gold_det = {(i, h) for i, (h, label) in enumerate(zip(sentence.heads, sentence.labels)) if label == "det"}
    assert {tuple(arc) for arc in view["gold"]} == gold_det
    for start, end, kind in view["arcs"]:
        expected = ("correct" if (start, end) in gold_det else "wrong") if any(i == start for i, _ in gold_det) \
            else "other"
        assert kind.split() == ["arc", expected]
    assert browser.evaluate(f"document.querySelector('{cell}').getAttribute('aria-selected')") == "true"
    noop = browser.evaluate("document.querySelector('#detail-noop table').textContent")
    assert "dependents" in noop and "det" in noop
    assert all(request == url for request in browser.requests), browser.requests  # nothing but the page itself


def test_keyboard_moves_between_cells_and_enter_shows_the_head(page, browser):
    browser.open(page)
    browser.evaluate('document.querySelector(\'td.cell[data-relation="all"][data-direction="head_to_dep"]'
                     '[data-layer="0"][data-head="0"]\').focus()')
    browser.key("ArrowRight", 39)
    browser.key("ArrowDown", 40)
    browser.key("Enter", 13)
    view = shown_view(browser)
    assert (view["head"], view["relation"], view["direction"]) == ("2-2", "all", "head_to_dep")
    focused = browser.evaluate("document.activeElement.getAttribute('data-head')+','+"
                               "document.activeElement.getAttribute('tabindex')")
    assert focused == "1,0"  # the one cell of the grids in the tab order is the focused one


def test_a_link_opens_the_page_on_a_head(page, browser):
    browser.open(page)
    browser.send("Page.navigate", url=page.resolve().as_uri() + "#head=dobj:head_to_dep:2-4")
    assert browser.evaluate("location.hash") == "#head=dobj:head_to_dep:2-4"
    view = shown_view(browser)
    assert (view["head"], view["relation"], view["direction"]) == ("2-4", "dobj", "head_to_dep")
    browser.click('td.cell[data-relation="det"][data-direction="dep_to_head"][data-layer="0"][data-head="0"]')
    assert browser.evaluate("location.hash") == "#head=det:dep_to_head:1-1"  # the address follows the clicks


def sorted_column(browser, table: int, column: int) -> tuple[list[str], str]:
    rows = browser.evaluate(f"""(function(){{var t=document.querySelectorAll('table.board')[{table}];
      return [Array.prototype.map.call(t.querySelectorAll('tbody tr:not(.group-head)'),function(r){{
        return r.children[1].getAttribute('data-sort')+'|'+r.children[{column}].getAttribute('data-sort');}}),
        t.querySelectorAll('thead th')[{column}].getAttribute('aria-sort')];}})()""")
    return rows[0], rows[1]


def test_sorting_a_table_reorders_it_and_says_so(page, browser, tmp_path):
    results = [REPO / "leaderboards" / treebank / "results" / f"{name}.json" for treebank in ("en_ewt", "en_gum")
               for name in ("all-MiniLM-L6-v2", "all-mpnet-base-v2")]
    board = tmp_path / "board.html"
    assert main(["leaderboard", *map(str, results), "--format", "html", "--output", str(board)]) == 0
    browser.open(board)
    before, state = sorted_column(browser, 0, 2)  # dobj
    assert state == "none"
    browser.click("table.board thead th:nth-child(3) button")
    descending, state = sorted_column(browser, 0, 2)
    assert state == "descending" and descending != before
    groups = browser.evaluate("document.querySelectorAll('table.board tbody').length")
    for group in np.array_split(np.arange(len(descending)), groups):  # rows stay within their treebank's group
        values = [float(descending[i].split("|")[1]) for i in group]
        assert values == sorted(values, reverse=True)
    browser.evaluate("document.querySelector('table.board thead th:nth-child(3) button').focus()")
    browser.key("Enter", 13)
    ascending, state = sorted_column(browser, 0, 2)
    assert state == "ascending" and ascending != descending
    assert browser.evaluate("document.documentElement.scrollWidth") <= 1280  # fits 1280 px, nothing cut off


@pytest.mark.parametrize("width, mobile", [(1280, False), (390, True)])
def test_the_page_fits_a_desktop_and_a_phone(page, browser, width, mobile):
    browser.resize(width, 900, mobile)
    try:
        browser.open(page)
        assert browser.evaluate("document.documentElement.scrollWidth") <= width
        assert browser.evaluate("document.querySelectorAll('svg.sentence').length") == 3
    finally:
        browser.send("Emulation.clearDeviceMetricsOverride")


HOSTILE_WORDS = [["<!--<script>", "</script><img/src=x/onerror=window.pwned=1>", "<b>bold</b>", "&amp;", "a\u2028b"],
                 ["|", "$\\frac$", "'\"", "<svg/onload=window.pwned=2>", "]]>", "<!--"]]
"""Two sentences of words that are markup, a script's end, an entity, a line separator, a formula."""


def hostile_treebank(path: Path) -> Path:
    lines = []
    for words in HOSTILE_WORDS:
        lines += [f"{i}\t{word}\t_\tX\t_\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'det'}\t_\t_"
                  for i, word in enumerate(words, start=1)] + [""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def no_markup_from_the_data(browser) -> None:
    assert browser.evaluate("typeof window.pwned") == "undefined"
    assert browser.evaluate("document.querySelectorAll('img, svg:not(.sentence), script[src]').length") == 0
    assert browser.evaluate("document.querySelectorAll('script').length") == 3


def test_hostile_words_are_text_and_the_data_script_parses(browser, tmp_path):
    output = tmp_path / "hostile.html"
    assert main(["explore", "--quiet", "--model", tiny_bert(), "--treebank", str(hostile_treebank(tmp_path / "h.conllu")),
                 "--bootstrap", "0", "--sentences", "2", "--relations", "det", "all", "--output", str(output)]) == 0
    browser.open(output)
    no_markup_from_the_data(browser)
    assert browser.evaluate("JSON.parse(document.getElementById('page-data').textContent).sentences.length") == 2
    shown = browser.evaluate("""Array.prototype.map.call(document.querySelectorAll('#detail svg.sentence'),
      function(svg){return Array.prototype.map.call(svg.querySelectorAll('text.word'),
        function(t){return t.firstChild.textContent;});})""")
    assert shown == HOSTILE_WORDS  # drawn by the page's script, as text


def test_hostile_relation_names_are_text_in_the_heatmaps_and_the_head_view(browser, page, tmp_path):
    from probing.report.page import render_page

    folder = tmp_path / "results"
    assert main(["explore", "--quiet", "--model", tiny_bert(), "--treebank", str(sample_path()), "--limit", "8",
                 "--bootstrap", "0", "--relations", "det", "all", "--save-results", str(folder),
                 "--output", str(tmp_path / "plain.html")]) == 0
    probe, noop = (json.loads((folder / name).read_text()) for name in ("probe.json", "noop.json"))
    names = ["<img/src=x/onerror=window.pwned=3>", "</script><!--"]
    probe["relations"] = dict(zip(names, probe["relations"].values()))
    noop["noop"]["relations"] = dict(zip(names, noop["noop"]["relations"].values()))
    output = tmp_path / "relations.html"
    output.write_text(render_page(probe, noop=noop), encoding="utf-8")
    browser.open(output)
    browser.click(f'td.cell[data-relation={json.dumps(names[0])}][data-direction="dep_to_head"]')
    no_markup_from_the_data(browser)
    assert browser.evaluate("document.getElementById('detail').getAttribute('data-relation')") == names[0]
    rows = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('#detail-noop tbody tr'),"
                            "function(r){return r.children[0].textContent;})")
    assert rows == names  # the no-op table of the head, written by the page's script
    captions = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('figure.map figcaption b'),"
                                "function(b){return b.textContent;})")
    assert captions == [name for name in names for _ in range(2)]


def test_the_page_asks_for_nothing_outside_itself(page):
    text = page.read_text(encoding="utf-8")
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text
    assert "<link" not in text and "src=" not in text


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
