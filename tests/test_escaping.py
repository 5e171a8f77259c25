"""Hostile names and words through every output format, read back by that format's own reader.

Names of relations, models and treebanks and the words of a treebank come from files; each writer passes
them through its format's escaping function (probing.report.escaping). Hypothesis draws names from every
Unicode character and from the pieces that break formats (``<!--``, ``</script>``, ``|``, blank lines,
``=``, LaTeX's specials, U+2028, ``../``, ``<img ...>``, ``[x](javascript:y)``) and checks what a reader of
each format finds: an HTML parser the same elements as for plain names and the names as text, a CSV reader
the same cells (``'`` before a formula), the Markdown table its column count and the names and a CommonMark
reader no HTML or link, LaTeX one row per row, JSON the names, the explore page its data script whole; a
file name never leaves its folder. Figures draw such names too.
"""

from __future__ import annotations

import copy
import csv
import html
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers import markdown_markup
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from probing.cli import main
from probing.data.treebank import Sentence
from probing.report.board import Cell, Leaderboard, Row, Table
from probing.report.escaping import FILE_NAME_BYTES, file_name
from probing.report.page import render_page, sentence_block
from probing.report.renderers import render
from probing.testing import sample_path, tiny_bert

PIECES = ["<!--", "<script>", "</script>", "<b>", "&amp;", "&", '"', "'", "|", "\\", "\\|", "\n", "\n\n", "\r", "\t",
          "=", "+", "-", "@", "=1+1", "%", "$", "$\\frac$", "#", "_", "{", "}", "^", "~", " -> ", "h>d",
          "\u2028", "\u2029", "../", "/", ".", ":", "x", "<img src=x onerror=alert(1)>", "[x](javascript:y)", "](",
          "]:", "][", "&lt;", "<a@b.c>", "<http://x>"]
"""What breaks some format when it is written as it is."""

names = st.one_of(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join),
    st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12),
)
"""A name from a file: format-breaking pieces, or any text."""

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def board_of(models: list[str], relations: list[str], treebank: str) -> Leaderboard:
    """One table: a row per model (its name), a cell per relation, and a baseline row."""
    rows = [Row(model, "model", "held-out", treebank,
                {name: Cell(0.5 + 0.01 * i, [0.4, 0.6], head="2-3", direction="head_to_dep", pairs=10)
                 for name in relations}, rank=str(i + 1)) for i, model in enumerate(models)]
    rows.append(Row("best offset baseline", "baseline", "held-out", treebank,
                    {name: Cell(0.3, head="-2", pairs=10) for name in relations}, rank=str(len(models) + 1)))
    return Leaderboard([Table(list(relations), rows, ["a note"], title=f"On {treebank}")])


def plain_names(models, relations):
    return [f"model{i}" for i in range(len(models))], [f"rel{i}" for i in range(len(relations))]


class Elements(HTMLParser):
    """Every element's tag (in order) and the text of every ``td`` (and ``th`` button)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.cells, self._text = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag in ("td", "th"):
            self._text = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._text is not None:
            self.cells.append("".join(self._text))
            self._text = None

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)


def parsed(text: str) -> Elements:
    parser = Elements()
    parser.feed(text)
    parser.close()
    return parser


hostile_boards = st.tuples(st.lists(names, min_size=1, max_size=3, unique=True),
                           st.lists(names, min_size=1, max_size=3, unique=True), names)


@SETTINGS
@given(hostile_boards)
def test_html_shows_names_as_text_and_makes_no_element(drawn):
    models, relations, treebank = drawn
    page = parsed(render(board_of(models, relations, treebank), "html"))
    plain = parsed(render(board_of(*plain_names(models, relations), "treebank"), "html"))
    assert page.tags == plain.tags  # no element from a name
    for model in models:
        assert model in page.cells
    for relation in relations:
        assert relation in page.cells  # the column header's button


@SETTINGS
@given(hostile_boards)
def test_csv_reads_back_the_same_cells_with_formulas_quoted(drawn):
    models, relations, treebank = drawn
    rows = list(csv.reader(io.StringIO(render(board_of(models, relations, treebank), "csv"), newline="")))
    assert len(rows) == 1 + len(models) + 1
    assert len({len(row) for row in rows}) == 1

    def shown(text: str) -> str:
        return "'" + text if len(text) > 1 and text[0] in "=+-@\t\r" and not NUMBER.fullmatch(text) else text

    assert [row[1] for row in rows[1:-1]] == [shown(model) for model in models]
    assert {row[4] for row in rows[1:]} == {shown(treebank)}
    assert [rows[0][5 + 7 * i] for i in range(len(relations))] == [shown(f"{name}_acc_pct") for name in relations]
    assert all(NUMBER.fullmatch(cell) for row in rows for cell in row if len(cell) > 1 and cell[0] in "=+-@\t\r")


NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
"""An entity as CommonMark reads one (with its ``;``; ``html.unescape`` alone also takes ``&lt`` without)."""


def _cells(line: str) -> list[str]:
    """A Markdown table line's cells: split at each ``|`` that no backslash escapes, escapes and entities undone
    (an escaped ``&`` starts no entity)."""
    cells, current, position = [], "", 0
    while position < len(line):
        char = line[position]
        if char == "\\" and position + 1 < len(line):
            current, position = current + line[position + 1], position + 2
            continue
        entity = ENTITY.match(line, position)
        if entity:
            current, position = current + html.unescape(entity.group()), entity.end()
            continue
        if char == "|":
            cells.append(current.strip())
            current = ""
        else:
            current += char
        position += 1
    return cells[1:]


def one_line(name: str) -> str:
    return re.sub("[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+", " ", name).strip()


@SETTINGS
@given(hostile_boards)
def test_markdown_keeps_its_columns_and_the_names(drawn):
    models, relations, treebank = drawn
    text = render(board_of(models, relations, treebank), "md")
    assert markdown_markup(text) == []  # no HTML, link or image from a name
    lines = text.splitlines()
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 2 + len(models) + 1  # every row on one line
    widths = {len(_cells(line)) for line in table}
    assert widths == {4 + len(relations) + 1}, table
    assert _cells(table[0])[4:-1] == [one_line(name) for name in relations]
    assert [_cells(line)[1] for line in table[2:-1]] == [one_line(model) for model in models]
    assert sum(line.startswith("# ") for line in lines) == 1  # the title stayed one heading


@SETTINGS
@given(hostile_boards)
def test_latex_rows_stay_rows(drawn):
    models, relations, treebank = drawn
    text = render(board_of(models, relations, treebank), "latex")
    assert "\n\n" not in text.strip("\n")
    lines = text.splitlines()
    body = lines[lines.index("\\midrule") + 1: lines.index("\\bottomrule")]
    assert len(body) == len(models) + 1 and all(line.endswith(" \\\\") for line in body)
    header = lines[lines.index("\\toprule") + 1]
    for line in [header, *body]:
        assert len(re.split(r"(?<!\\)&", line)) == 4 + len(relations) + 1, line
    assert not re.search(r"(?<!\\)[%#]", "\n".join(body))  # no comment, no parameter


@SETTINGS
@given(hostile_boards)
def test_json_gives_the_names_back(drawn):
    models, relations, treebank = drawn
    data = json.loads(render(board_of(models, relations, treebank), "json"))
    assert data["relations"] == relations and [row["model"] for row in data["rows"][:-1]] == models
    assert {row["treebank"] for row in data["rows"]} == {treebank}


# ---------------------------------------------------------------------------- the explore page


@pytest.fixture(scope="module")
def explored(tmp_path_factory) -> tuple[dict, dict]:
    """The probe and no-op results of a small explore run."""
    folder = tmp_path_factory.mktemp("explored")
    assert main(["explore", "--quiet", "--model", tiny_bert(), "--treebank", str(sample_path()), "--limit", "6",
                 "--bootstrap", "0", "--relations", "det", "all", "--save-results", str(folder),
                 "--output", str(folder / "page.html")]) == 0
    return (json.loads((folder / "probe.json").read_text()), json.loads((folder / "noop.json").read_text()))


def renamed(results: tuple[dict, dict], relations: list[str], model: str) -> tuple[dict, dict]:
    """Both results with their relations (det, all) and their model renamed."""
    probe, noop = copy.deepcopy(results)
    probe["relations"] = dict(zip(relations, probe["relations"].values()))
    noop["noop"]["relations"] = dict(zip(relations, noop["noop"]["relations"].values()))
    for result in (probe, noop):
        result["model"]["name"] = model
    return probe, noop


class Scripts(Elements):
    """Also the text of every ``script`` element, as the HTML tokenizer ends it."""

    def __init__(self):
        super().__init__()
        self.scripts, self._script = [], None

    def handle_starttag(self, tag, attrs):
        super().handle_starttag(tag, attrs)
        if tag == "script":
            self._script = []

    def handle_endtag(self, tag):
        super().handle_endtag(tag)
        if tag == "script":
            self.scripts.append("".join(self._script))
            self._script = None

    def handle_data(self, data):
        super().handle_data(data)
        if self._script is not None:
            self._script.append(data)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(names, min_size=2, max_size=2, unique=True), names, st.lists(names, min_size=2, max_size=6))
def test_the_page_holds_hostile_names_and_words_as_text(explored, relations, model, words):
    probe, noop = renamed(explored, relations, model)
    sentence = Sentence(words=tuple(words), heads=(-1,) + (0,) * (len(words) - 1),
                        labels=("root",) + ("dep",) * (len(words) - 1), upos=("X",) * len(words))
    page = render_page(probe, noop=noop, sentences=[sentence_block(sentence, 0, relations)], command="probing x")
    plain_probe, plain_noop = renamed(explored, ["rel0", "rel1"], "model")
    plain = render_page(plain_probe, noop=plain_noop, sentences=[sentence_block(sentence, 0, ["rel0", "rel1"])],
                        command="probing x")
    found, expected = Scripts(), Scripts()
    found.feed(page)
    expected.feed(plain)
    assert found.tags == expected.tags  # no element from a name or a word
    assert len(found.scripts) == 3
    data = json.loads(found.scripts[0])
    assert data["relations"] == relations and data["model"] == model
    assert data["sentences"][0]["words"] == words
    assert not re.search("[<>&\u2028\u2029]", found.scripts[0])


# ---------------------------------------------------------------------------- file names and figures


@SETTINGS
@given(names)
def test_a_file_name_stays_in_its_folder(name):
    component = file_name(name)
    assert component not in ("", ".", "..") and not component.startswith(".")
    assert "/" not in component and "\\" not in component and "\x00" not in component
    assert len(component.encode("utf-8")) <= FILE_NAME_BYTES
    assert all(char.isprintable() for char in component)
    folder = Path("/views")
    assert (folder / f"{component}-1-2.svg").resolve().parent == folder


@SETTINGS
@given(st.lists(st.text(st.characters(exclude_categories=("Cs",)), max_size=30), min_size=2, max_size=2,
                unique=True))
def test_different_names_make_different_file_names(pair):
    first, second = (name.replace(":", "_") for name in pair)  # ':' is written '_' (nmod:poss -> nmod_poss)
    if first != second:
        assert file_name(pair[0]) != file_name(pair[1])


HOSTILE_FIGURE_NAMES = ["$\\frac$", "$\\frac{a}{$", "a$b$c", "<b>&</b>", "x\n\ny", "\\", "../../x", "%s{}"]


@pytest.mark.parametrize("name", HOSTILE_FIGURE_NAMES)
def test_figures_draw_hostile_names_as_text(explored, name, tmp_path):
    from xml.etree import ElementTree

    from probing.analyses.probe.plots import plot_overview, plot_relation
    from probing.analyses.views.figure import write_views

    probe, _ = renamed(explored, [name, "all"], name)
    probe["treebank"]["path"] = f"/data/{name}.conllu"
    plot_overview(probe, tmp_path / "overview.svg")
    plot_relation(probe, name, tmp_path / "relation.png")
    words = [name, "b", f"c{name}"]
    sentence = {"index": 0, "words": words, "heads": [1, -1, 1], "labels": ["det", "root", "det"],
                "pairs": {name: [[0, 1]]}}
    values = [[1, 0, 1], [0.6, 0.5, 0.7], [1, 0, 1], [0.5, 0.6, 0.7], [0.2, 0.3, 0.1], [0.0, 0.0, 0.0]]
    written = write_views(tmp_path / "views", f"{name}-1-2", [sentence], [values], name, "dep_to_head", name)
    assert all(path.parent == tmp_path / "views" for path in written)
    for svg in (tmp_path / "overview.svg", written[0]):
        assert ElementTree.parse(svg).getroot().tag.endswith("svg")
