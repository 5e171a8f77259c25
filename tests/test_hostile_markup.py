"""Hostile input, round 3 (issue 45, item 3): markup from result files never reaches a table, a heading or a link.

Names in result files (models, relations, treebanks, languages) and a ``--title`` are text in every format:
in Markdown they never become HTML, a link or a new row (read back by a CommonMark reader,
``helpers.markdown_markup``); a figure draws a ``$`` as a dollar sign, not as mathtext; a leaderboard page
links only to files relative to it. Each accepted case (:data:`ACCEPTED`) runs a command (exit 0) and checks
what it wrote; each refused one (:data:`REFUSED`) is held to :func:`test_hostile.assert_refused`.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers import markdown_markup
from test_hostile import Case, Env, assert_refused, env, heldout_result, payload_results, registrar, run_cli, valid_result

from probing.cli import main
from probing.testing import sample_split, tiny_bert

SHARED_FIXTURES = (env, heldout_result, payload_results, valid_result)
"""test_hostile's fixtures that the tests here ask for (``env`` and what it is made of): pytest finds them here."""

IMG = "<img src=x onerror=alert(1)>"
LINK = "[click](javascript:alert(1))"
MATH = "$\\frac{a}{$"
"""What mathtext fails to parse (a fraction never closed)."""


@dataclass
class Accepted:
    """A command that must exit 0, and ``check(stdout)`` of what it wrote."""

    argv: list[str]
    check: Callable[[str], None]


ACCEPTED: dict[str, Callable[[Env], Accepted]] = {}
REFUSED: dict[str, Callable[[Env], Case]] = {}
accepted = registrar(ACCEPTED)
refused = registrar(REFUSED)


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)(?:\\\\)*\|", line))


def assert_plain_markdown(text: str, shown: str, links: frozenset[str] = frozenset()) -> None:
    """No markup in ``text`` but links to ``links`` (the files it was written with), every table's rows as
    wide as its header, and ``shown`` (a name as the reader sees it) in it."""
    markup = [found for found in markdown_markup(text) if found.split(": ", 1)[1] not in links]
    assert markup == [], markup
    tables = re.split(r"\n(?!\|)", text)
    for block in tables:
        rows = [line for line in block.splitlines() if line.startswith("|")]
        assert len({_unescaped_pipes(line) for line in rows}) <= 1, rows
    assert shown in text, shown


def _result_with(env: Env, *, model: str | None = None, relation: str | None = None, treebank: str | None = None
                 ) -> Path:
    """The valid probe result with its model, its relation ``det`` or its treebank's path renamed."""
    result = json.loads(env.result.read_text())
    if model is not None:
        result["model"]["name"] = model
    if relation is not None:
        result["relations"] = {(relation if name == "det" else name): entry
                               for name, entry in result["relations"].items()}
    if treebank is not None:
        result["treebank"]["path"] = treebank
    path = env.tmp / "hostile.json"
    path.write_text(json.dumps(result))
    return path


# ---------------------------------------------------------------------------- leaderboard --format md

LEADERBOARD_NAMES = {
    "model <img>": ({"model": IMG}, "&lt;img src=x onerror=alert(1)>"),
    "model [link](javascript:)": ({"model": LINK}, "[click\\](javascript:alert(1))"),
    "relation <img>": ({"relation": IMG}, "&lt;img src=x onerror=alert(1)>"),
    "relation [link](javascript:)": ({"relation": LINK}, "[click\\](javascript:alert(1))"),
    "treebank <img>": ({"treebank": f"/data/{IMG}.conllu"}, "&lt;img src=x onerror=alert(1)>"),
}

for _label, (_fields, _shown) in LEADERBOARD_NAMES.items():

    @accepted(f"leaderboard --format md: a {_label} is text")
    def _(env, fields=_fields, shown=_shown):
        output = env.tmp / "board.md"
        return Accepted(["leaderboard", str(_result_with(env, **fields)), "--output", str(output)],
                        lambda out: assert_plain_markdown(output.read_text(encoding="utf-8"), shown))


@pytest.fixture(scope="module")
def chosen_result(tmp_path_factory) -> Path:
    """An ``ablate --chosen det --k 1`` result of the tiny BERT (masked-LM loss, two random sets)."""
    folder = tmp_path_factory.mktemp("chosen")
    sample_split(20, 20, folder)
    assert main(["score", "--quiet", "--model", tiny_bert(), "--treebank", str(folder / "dev.conllu"), "--limit",
                 "5", "--bootstrap", "0", "--output", str(folder / "dev.json")]) == 0
    path = folder / "chosen.json"
    assert main(["ablate", "--quiet", "--model", tiny_bert(), "--treebank", str(folder / "test.conllu"), "--chosen",
                 "det", "--k", "1", "--random", "2", "--select-on", str(folder / "dev.json"), "--metric", "mlm",
                 "--limit", "3", "--bootstrap", "5", "--output", str(path)]) == 0
    return path


@accepted("report: a model folder named <img> heads the README as text")
def _(env):
    model = env.tmp / IMG
    shutil.copytree(env.model, model)
    output = env.tmp / "report"

    def check(out):
        files = frozenset(path.name for path in output.iterdir())
        assert_plain_markdown((output / "README.md").read_text(encoding="utf-8"),
                              "# What the heads of &lt;img src=x onerror=alert(1)> look at", links=files)

    return Accepted(["report", "--quiet", "--model", str(model), "--limit", "4", "--bootstrap", "10", "--output",
                     str(output)], check)


# ---------------------------------------------------------------------------- probing transfer


def _languages(env: Env, hostile: str, relation: str | None = None) -> list[str]:
    """Two held-out results of one model: one on ``de_pud``, one on a treebank path ``hostile`` (its
    relation ``det`` renamed ``relation`` in both, when given)."""
    paths = []
    for number, path in enumerate(("de_pud", hostile)):
        result = json.loads(env.heldout.read_text())
        result["treebank"]["path"] = path
        if relation is not None:  # renamed in place: the counts in its state follow the relations' order
            for block in (result["relations"], result["heldout"]["relations"]):
                renamed = {(relation if name == "det" else name): entry for name, entry in block.items()}
                block.clear()
                block.update(renamed)
            result["config"]["relations"] = [relation if name == "det" else name
                                             for name in result["config"]["relations"]]
        paths.append(env.tmp / f"language{number}.json")
        paths[-1].write_text(json.dumps(result))
    return [str(path) for path in paths]


@accepted("transfer: a treebank path with |, a line break and <img> stays in its cell")
def _(env):
    output = env.tmp / "atlas.md"
    return Accepted(["transfer", *_languages(env, f"a|b\n{IMG}"), "--output", str(output)],
                    lambda out: assert_plain_markdown(output.read_text(encoding="utf-8"),
                                                      "| a\\|b &lt;img src=x onerror=alert(1)>: "))


@accepted("transfer: a relation named [link](javascript:) heads its matrix as text")
def _(env):
    output = env.tmp / "atlas.md"
    return Accepted(["transfer", *_languages(env, "fr_pud", relation=LINK), "--output", str(output)],
                    lambda out: assert_plain_markdown(output.read_text(encoding="utf-8"),
                                                      "## [click\\](javascript:alert(1)): heads across languages"))


@accepted("transfer --title: markup in the title is text in the heading")
def _(env):
    return Accepted(["transfer", *_languages(env, "fr_pud"), "--title", f"{IMG} {LINK}"],
                    lambda out: assert_plain_markdown(out, "# &lt;img src=x onerror=alert(1)> [click\\](javascript"))


@accepted("transfer --figure: a language named $\\frac{a}{$ is drawn as it is, not as mathtext")
def _(env):
    figure = env.tmp / "atlas.png"

    def check(out):
        assert figure.read_bytes().startswith(b"\x89PNG")

    return Accepted(["transfer", *_languages(env, MATH), "--title", MATH, "--output", str(env.tmp / "atlas.md"),
                     "--figure", str(figure)], check)


# ---------------------------------------------------------------------------- leaderboard --format html links


class Links(HTMLParser):
    """Every ``href`` of a page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.hrefs = []

    def handle_starttag(self, tag, attrs):
        self.hrefs += [value for name, value in attrs if name == "href"]


@accepted("leaderboard --format html: a plot whose file name holds # and : is linked by a relative URL to it")
def _(env):
    result = env.tmp / "run#1:x.json"
    result.write_bytes(env.result.read_bytes())
    (env.tmp / "plots").mkdir()
    (env.tmp / "plots" / "run#1:x.png").write_bytes(b"\x89PNG")
    output = env.tmp / "board.html"

    def check(out):
        links = Links()
        links.feed(output.read_text(encoding="utf-8"))
        assert links.hrefs == ["plots/run%231%3Ax.png"], links.hrefs

    return Accepted(["leaderboard", str(result), "--format", "html", "--output", str(output)], check)


for _option, _value in (("--plots", "javascript:alert(1)//"), ("--pages", "https://example.com/pages"),
                        ("--plots", "/srv/plots")):

    @refused(f"leaderboard --format html {_option} {_value}: links stay relative")
    def _(env, option=_option, value=_value):
        output = env.tmp / "board.html"
        if option == "--plots" and value.startswith("javascript:"):  # the plot exists there: it would be linked
            folder = env.tmp / value
            folder.mkdir(parents=True)
            (folder / f"{env.result.stem}.png").write_bytes(b"\x89PNG")
        return Case(["leaderboard", str(env.result), "--format", "html", option, value, "--output", str(output)],
                    [f"{option} {value}", "relative to --output, not a URL or an absolute path"],
                    inputs=[env.result], absent=[output])


# ---------------------------------------------------------------------------- the tests


SLOW = {"report: a model folder named <img> heads the README as text"}
"""Cases that run a model through several analyses (over 10 s)."""


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name
                                  for name in ACCEPTED])
def test_names_stay_text(name, env, capsys):
    case = ACCEPTED[name](env)
    code, out, err = run_cli(case.argv, capsys)
    assert code == 0, err
    case.check(out)


@pytest.mark.parametrize("name", REFUSED)
def test_refused(name, env, capsys):
    assert_refused(REFUSED[name](env), env, capsys)


@pytest.mark.slow  # its fixture runs ablate --chosen
@pytest.mark.parametrize("name", ["model <img>", "model [link](javascript:)"])
def test_the_ablate_chosen_table_shows_a_model_name_as_text(name, chosen_result, env, capsys):
    result = json.loads(chosen_result.read_text())
    result["model"]["name"] = LEADERBOARD_NAMES[name][0]["model"]
    path = env.tmp / "chosen.json"
    path.write_text(json.dumps(result))
    code, out, err = run_cli(["leaderboard", str(path)], capsys)
    assert code == 0, err
    assert_plain_markdown(out, LEADERBOARD_NAMES[name][1] + ", det top 1")
