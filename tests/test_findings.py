"""Every number a published finding quotes names the file and field it comes from, and agrees with them.

The findings (README's "What it finds" and the docs' paragraphs in :data:`SCOPES`) cite their numbers in one form,
which a reader follows by a click and this test by parsing: the number sits in a Markdown reference link,
``[71.0% [70.6, 71.3]][blimp-bos]``, whose definition names the file (relative to the Markdown file) and, as the
link's title, the field: ``[blimp-bos]: leaderboards/blimp/blimp.json "tables[pairs].rows[...].cells.overall in %"``.
The numbers of the link's text must be, in order and at the precision shown, what the title gives; a number of a
finding outside such a link fails (:data:`VOCABULARY` lists the few that are no finding: an interval's level,
counting from 1). A title is one or more expressions separated by ``; ``:

- a **path** into the JSON: keys joined by dots; ``NAME[TEXT]`` the elements of list NAME with a field equal to
  TEXT (one, unless TEXT holds a ``*``); ``*`` every element or value, a key with ``*`` every matching key,
  ``{a,b}`` those keys; a target that is a folder starts with the name of a JSON file in it, without ``.json``
  (``*`` and ``{a,b}`` allowed). What a path reaches gives its numbers: a number, a head (``{layer, head}`` from
  0, shown from 1 as ``3-9``), an estimate with its interval (``{accuracy | value | share | effect | mean,
  interval | percentiles}``: the estimate, then the interval's ends; the text may stop after the estimate), or a
  list of these.
- a **derivation** (:data:`DERIVATIONS`): ``count(PATH)``, or ``count(PATH >= X)`` (how many pass, then X, so a text
  can say "52 move by 2 points or more"), ``each(PATH)`` (the one value all share), ``mean``, ``median``, ``min``
  and ``max`` of what a path reaches, ``half_width`` of each interval it reaches, and the atlas's own
  ``shared_head(REL)`` and ``transfer_loss(REL)`` (probing.analyses.probe.atlas: what ``probing transfer`` prints).
- ``A - B``, the difference of two of those. A trailing ``in %`` or ``in points`` multiplies the fractions (not the
  counts) by 100.

A number shown with a sign is compared with its sign; one without, with the value's magnitude (the words say
which way: "lose 13.2 points"). Spelled numbers (two to twelve) count as numbers; names that hold digits
(``GPT-2``, ``gemma-3-270m``) and inline code do not.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO

SCOPES = (
    ("README.md", "## What it finds", "\n## "),
    ("leaderboards/README.md", "beside the figures BLiMP's", "\n\n"),
    ("leaderboards/README.md", "**What it gives.**", "\n**What is done.**"),
    ("docs/dark-secrets.md", "**BLiMP** (`probing pairs`", "\n### "),
    ("docs/minimal-pairs.md", "## Published figures", "\n## "),
    ("docs/importance.md", "## What it finds", "\n## "),
)
"""(Markdown file, where its findings start, what ends them): every number between is checked."""

VOCABULARY = (
    r"95% (?:bootstrap |paired |Wilson )?intervals?",  # the intervals' level, the same for every figure
    r"layer-head, from 1",  # how heads are named, not a finding
)
"""Phrases whose numbers are no finding, taken out before the numbers left without a source are counted."""

WORDS = {word: value for value, word in enumerate(
    "two three four five six seven eight nine ten eleven twelve".split(), start=2)}
"""Spelled numbers that a finding may quote (not "one", which English uses for much else)."""

DEFINITION = re.compile(r'^ {0,3}\[([^\]]+)\]:\s+(\S+)\s+"([^"]*)"\s*$', re.MULTILINE)
REFERENCE = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\[([^\]]+)\]")
INLINE = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(([^)\s]+)(?:\s+\"([^\"]*)\")?\)")
NUMBER = re.compile(r"(?<![\w.\-+−/])(?:\d+-\d+(?![\w.\-])|[+\-−]?\d[\d,]*(?:\.\d+)?(?![\w\-]|\.\d)|(?:"
                    + "|".join(WORDS) + r")(?!\w))", re.IGNORECASE)
"""A head (``3-9``), a number (``-17.5``, ``1,200``, ``+2.6``) or a spelled number, not part of a name
(``GPT-2``, ``gemma-3-270m``, ``L6-v2``, ``en_ewt``) or of a path."""


@dataclass(frozen=True)
class Head:
    """A head as the text names it, layer-head from 1 (the JSON counts from 0)."""

    name: str


@functools.lru_cache(maxsize=None)
def load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def split_top(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside brackets and parentheses.

    >>> split_top("a[b.c].d(e.f)", ".")
    ['a[b.c]', 'd(e.f)']
    """
    parts, depth, start, index = [], 0, 0, 0
    while index < len(text):
        char = text[index]
        depth += char in "[(" or -(char in "])")
        if depth == 0 and text.startswith(separator, index):
            parts.append(text[start:index])
            index += len(separator)
            start = index
            continue
        index += 1
    return [*parts, text[start:]]


def alternatives(pattern: str) -> list[str]:
    """A file name's ``{a,b}`` spelt out (the one brace a name may hold).

    >>> alternatives("m-{ar,de}_pud-trees"), alternatives("m-*_pud")
    (['m-ar_pud-trees', 'm-de_pud-trees'], ['m-*_pud'])
    """
    found = re.fullmatch(r"(.*)\{(.*)\}(.*)", pattern)
    return [pattern] if not found else [found[1] + choice + found[3] for choice in found[2].split(",")]


def wild(pattern: str) -> bool:
    """Whether a path segment may reach several things: a glob, or ``{a,b}`` (these keys)."""
    return "*" in pattern or "?" in pattern or "{" in pattern


def step(values: list, segment: str, many: bool) -> tuple[list, bool]:
    """One segment of a path applied to every value reached so far (see the module's docstring). Where the path
    may reach several things (a ``*`` came before), a value without the segment's key is left out; else it fails.

    >>> step([{"a": {"x": 1}, "b": {"x": 2}}], "*", False)
    ([{'x': 1}, {'x': 2}], True)
    >>> step([{"rows": [{"model": "m, k1", "v": 1}, {"model": "m, k4", "v": 4}]}], "rows[m, k4]", False)
    ([{'model': 'm, k4', 'v': 4}], False)
    """
    key, _, selector = segment.partition("[")
    many = many or wild(key)
    found = []
    for value in values:
        if isinstance(value, Path) and value.is_dir():  # a folder: the segment names its JSON files, without .json
            names = sorted({path.name for name in alternatives(key) for path in value.glob(f"{name}.json")})
            if not names or not (wild(key) or names == [f"{key}.json"]):
                raise KeyError(f"no file {key}.json in {value.name}")
            found += [value / name for name in names]
            continue
        value = load(value) if isinstance(value, Path) else value
        if isinstance(value, list) and (key == "*" or key.isdigit()):
            found += value if key == "*" else [value[int(key)]]
        elif isinstance(value, dict) and key.startswith("{") and key.endswith("}"):  # {a,b}: these keys
            found += [value[name] for name in key[1:-1].split(",")]
        elif isinstance(value, dict) and wild(key):
            found += [item for name, item in value.items() if fnmatch.fnmatchcase(name, key)]
        elif isinstance(value, dict) and key in value:
            found.append(value[key])
        elif not many:
            raise KeyError(f"no {key!r} here")
    if selector:  # NAME[TEXT]: the elements of the list with a field equal to (or matching) TEXT
        text = selector[:-1]
        found = [item for listed in found for item in listed if isinstance(item, dict)
                 and any(isinstance(field, str) and fnmatch.fnmatchcase(field, text) for field in item.values())]
        if not wild(text) and len(found) != 1 and not many:
            raise KeyError(f"{len(found)} elements of {key!r} have a field {text!r}")
        many = many or wild(text)
    return found, many


def resolve(source: Path, path: str) -> list:
    """What ``path`` reaches in ``source`` (a JSON file, or a folder of them)."""
    values, many = [source], False
    for segment in split_top(path, "."):
        values, many = step(values, segment, many)
    return values


def numbers_of(value) -> list:
    """The numbers (or heads) that a value reached by a path stands for, in the order the text shows them."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{value!r} is not a number")
    if isinstance(value, (int, float)):
        return [value]
    if isinstance(value, str):
        return [Head(value.split()[0])]
    if isinstance(value, list):
        return [number for item in value for number in numbers_of(item)]
    if {"layer", "head"} <= set(value) and isinstance(value["head"], int):
        return [Head(f"{value['layer'] + 1}-{value['head'] + 1}")]
    for estimate in ("accuracy", "value", "share", "effect", "mean"):
        if estimate in value:
            spread = value.get("interval") or value.get("percentiles") or []
            return [value[estimate], *spread]
    raise ValueError(f"no number in {sorted(value)}")


def measured(values: list) -> list[float]:
    """The single numbers of what a path reached, for a derivation over them."""
    found = [number for value in values for number in numbers_of(value)[:1]]
    if not found or not all(isinstance(number, (int, float)) for number in found):
        raise ValueError("a derivation needs numbers")
    return found


def count(source: Path, argument: str) -> list:
    """``count(PATH)``: how many things PATH reaches; ``count(PATH >= X)``: how many of their numbers pass, then X
    (so that a text may quote the bound it counts by: "52 paradigms move by 2 points or more")."""
    path, operator, threshold = re.fullmatch(r"(.*?)(?:\s+(>=|<=|>|<|==)\s+(\S+))?", argument).groups()
    values = resolve(source, path)
    if operator is None:
        return [len(values)]
    limit = float(threshold)
    passes = {">=": lambda x: x >= limit, "<=": lambda x: x <= limit, ">": lambda x: x > limit,
              "<": lambda x: x < limit, "==": lambda x: x == limit}[operator]
    return [sum(passes(number) for number in measured(values)), limit]


def each(source: Path, argument: str) -> list:
    """``each(PATH)``: the one value every thing PATH reaches has ("all 1,000 sentences of each"); fails when
    they differ."""
    found = measured(resolve(source, argument))
    if len(set(found)) != 1:
        raise ValueError(f"not one value but {sorted(set(found))}")
    return found[:1]


def over(summary):
    """A derivation that summarises the numbers of an expression (``mean(...)``, ``min(...)``)."""
    return lambda source, argument: [summary(measured(evaluate(source, argument)))]


def half_width(source: Path, argument: str) -> list:
    """``half_width(PATH)``: half the width of each interval (a [low, high] pair) the path reaches."""
    return [(high - low) / 2 for low, high in resolve(source, argument)]


def atlas_derivation(name: str):
    """The atlas summary's own derivation ``name`` (probing.analyses.probe.atlas), on a transfer file's relation."""
    def derive(source: Path, relation: str) -> list:
        from probing.analyses.probe import atlas

        found = getattr(atlas, name)(load(source), relation)
        return list(found) if isinstance(found, tuple) else [found]  # transfer_loss: in points already
    return derive


DERIVATIONS = {
    "count": count, "each": each, "mean": over(statistics.fmean), "median": over(statistics.median), "min": over(min),
    "max": over(max), "half_width": half_width, "shared_head": atlas_derivation("shared_head"),
    "transfer_loss": atlas_derivation("transfer_loss"),
}


def evaluate(source: Path, expression: str) -> list:
    """The numbers an expression of a title gives, from ``source`` (see the module's docstring)."""
    expression = expression.strip()
    scale = 1
    for suffix in (" in %", " in points"):
        if expression.endswith(suffix):
            expression, scale = expression[: -len(suffix)], 100
    terms = split_top(expression, " - ")
    if len(terms) == 2:
        first, second = (measured(evaluate(source, term)) for term in terms)
        if len(first) != 1 or len(second) != 1:
            raise ValueError("a difference needs one number on each side")
        values = [first[0] - second[0]]
    else:
        call = re.fullmatch(r"(\w+)\((.*)\)", expression)
        if call and call.group(1) in DERIVATIONS:
            values = DERIVATIONS[call.group(1)](source, call.group(2))
        else:
            values = resolve(source, expression)
    numbers = [number for value in values for number in numbers_of(value)]
    return [number * scale if isinstance(number, float) else number for number in numbers]  # counts stay counts


def agrees(shown: str, value) -> bool:
    """Whether the text's ``shown`` is ``value`` at the precision shown (signed only when a sign is shown).

    >>> agrees("71.0", 71.04), agrees("+2.6", 2.56), agrees("2.6", -2.6), agrees("+2.6", -2.6), agrees("-0.0", 0.01)
    (True, True, True, False, True)
    >>> agrees("1,200", 1200), agrees("seven", 7), agrees("3-9", Head("3-9")), agrees("3-9", 0.39)
    (True, True, True, False)
    """
    if isinstance(value, Head):
        return shown == value.name
    text = shown.replace("−", "-").replace(",", "")
    if text.lower() in WORDS:
        return value == WORDS[text.lower()]
    if not isinstance(value, (int, float)) or re.fullmatch(r"\d+-\d+", text):
        return False
    decimals = len(text.partition(".")[2])
    if text[0] in "+-":
        formatted = f"{value:+.{decimals}f}"
        return formatted == text or float(formatted) == float(text) == 0  # zero shows either sign
    return f"{abs(value):.{decimals}f}" == text


@dataclass
class Finding:
    """A scope of a Markdown file: its text and the link definitions the file holds."""

    markdown: Path
    text: str
    definitions: dict[str, tuple[str, str]]


def findings(markdown: str, start: str, end: str) -> Finding:
    path = REPO / markdown
    whole = path.read_text(encoding="utf-8")
    assert start in whole, f"{markdown}: no {start!r}"
    text = whole.split(start, 1)[1].split(end, 1)[0]
    definitions = {label.lower(): (target, title) for label, target, title in DEFINITION.findall(whole)}
    return Finding(path, text, definitions)


def checked(source: Path, title: str, shown: list[str]) -> list[str]:
    """What is wrong with the numbers ``shown`` of one link whose title is ``title``: [] when every one agrees."""
    try:
        given = [evaluate(source, expression) for expression in split_top(title, "; ")]
    except (KeyError, ValueError, IndexError, TypeError, OSError) as error:
        return [f"{title!r} in {source.name}: {error}"]
    problems, queue = [], list(shown)
    for numbers in given:
        taken = 0
        while queue and taken < len(numbers) and agrees(queue[0], numbers[taken]):
            queue.pop(0)
            taken += 1
        if not taken:
            wanted = numbers[0] if numbers else "nothing"
            text = f"{wanted:.4g}" if isinstance(wanted, float) else getattr(wanted, "name", wanted)
            problems.append(f"{queue[0] if queue else 'nothing'} shown where {title!r} gives {text}")
            break
    if queue and not problems:
        problems.append(f"{', '.join(queue)} shown beyond what {title!r} gives")
    return problems


def problems_of(finding: Finding) -> list[str]:
    """Every number of the finding that has no source or disagrees with it, with its context."""
    lines = [line for line in finding.text.splitlines()
             if not line.lstrip().startswith("|") and not DEFINITION.match(line)]  # the table has its own test
    text = re.sub(r"`[^`]*`", " ", "\n".join(lines))
    problems = []

    def trace(match: re.Match, target: str | None, title: str | None) -> str:
        inner = match.group(1)
        shown = NUMBER.findall(inner)
        if not shown:
            return inner
        where = " ".join(inner.split())
        if title is None or target is None:
            problems.append(f"[{where}]: no field named beside it")
            return ""
        problems.extend(f"[{where}]: {problem}" for problem in checked(finding.markdown.parent / target, title, shown))
        return ""

    def reference(match: re.Match) -> str:
        target, title = finding.definitions.get(match.group(2).lower(), (None, None))
        if target is None:
            problems.append(f"[{match.group(1)}][{match.group(2)}]: no such link definition")
            return ""
        return trace(match, target, title)

    text = REFERENCE.sub(reference, text)
    text = INLINE.sub(lambda match: trace(match, match.group(2), match.group(3)), text)
    for phrase in VOCABULARY:
        text = re.sub(phrase, " ", text)
    for line in text.splitlines():
        for number in NUMBER.findall(line):
            problems.append(f"{number}: no source (in {' '.join(line.split())[:100]!r})")
    return problems


@pytest.mark.parametrize("markdown, start, end", SCOPES, ids=[f"{scope[0]}: {scope[1][:24]}" for scope in SCOPES])
def test_every_number_of_the_findings_is_its_sources(markdown, start, end):
    problems = problems_of(findings(markdown, start, end))
    assert not problems, f"{len(problems)} numbers of {markdown} without their source:\n" + "\n".join(problems)


def test_the_findings_table_quotes_the_committed_leaderboard():
    """Every cell of the README's findings table is the committed en_ewt leaderboard's, to the decimal and head."""
    leaderboard = load(REPO / "leaderboards" / "en_ewt" / "leaderboard.json")
    probe = next(table for table in leaderboard["tables"] if table["key"] == "probe")
    rows = {row["model"]: row for row in probe["rows"]}
    section = findings(*SCOPES[0]).text
    header, _, *body = [line for line in section.splitlines() if line.startswith("|")]
    relations = [cell.strip() for cell in header.strip("|").split("|")][1:]
    assert relations == probe["relations"]
    assert len(body) >= 4
    for line in body:
        model, *cells = [cell.strip() for cell in line.strip("|").split("|")]
        row = rows[model.replace("**", "")]
        for relation, cell in zip(relations, cells):
            quoted = row["cells"][relation]
            assert cell == f"{100 * quoted['accuracy']:.1f} ({quoted['head']})", (model, relation)


def test_the_trees_finding_names_the_decoding_of_each_figure():
    """The README's whole-tree figures say which decoding they are: MST where the text says so, argmax where it
    points to the leaderboard's columns, which do decode by argmax."""
    finding = findings(*SCOPES[0])
    decoded = {label: title for label, (target, title) in finding.definitions.items() if label.startswith("trees-")}
    assert all(".mst." in decoded[label] for label in ("trees-head", "trees-attn", "trees-vectors", "trees-distances"))
    assert ".argmax." in decoded["trees-argmax"] and "by argmax: [54.3, 72.1 and 67.5%][trees-argmax]" in " ".join(
        finding.text.split())
    leaderboard = (REPO / "leaderboards" / "en_ewt" / "leaderboard.md").read_text(encoding="utf-8")
    assert "| attn UAS (argmax) " in leaderboard and "| attn+vectors UAS (argmax) " in leaderboard


LEADERBOARD = "leaderboards/en_ewt/leaderboard.json"
"""A committed file the tests of the form itself read (its probe table: MiniLM's dobj cell is 74.0 [71.5, 76.5])."""


def problems_in(text: str, *definitions: tuple[str, str, str]) -> list[str]:
    """The problems the test finds in a hand-written finding whose links are ``definitions`` (label, file, title)."""
    links = {label: (target, title) for label, target, title in definitions}
    return problems_of(Finding(REPO / "README.md", text, links))


MINILM_DOBJ = ("m", LEADERBOARD, "tables[probe].rows[all-MiniLM-L6-v2].cells.dobj in %")


def test_a_number_that_agrees_with_its_field_passes_and_one_that_differs_fails():
    assert problems_in("MiniLM finds [74.0% [71.5, 76.5]][m] of objects.", MINILM_DOBJ) == []
    assert problems_in("MiniLM finds [74.0%][m] of objects.", MINILM_DOBJ) == []  # the interval may be left out
    wrong = problems_in("MiniLM finds [74.1% [71.5, 76.5]][m] of objects.", MINILM_DOBJ)
    assert len(wrong) == 1 and "74.1 shown where" in wrong[0] and "74" in wrong[0]
    beyond = problems_in("MiniLM finds [74.0% [71.5, 76.5] and 3][m] of objects.", MINILM_DOBJ)
    assert len(beyond) == 1 and "3 shown beyond" in beyond[0]


def test_a_number_without_a_source_fails_spelled_or_not_and_names_do_not_count():
    problems = problems_in("MiniLM finds 74.0% of objects with seven heads; GPT-2, gemma-3-270m and 3-9 "
                           "(95% interval).")
    assert [problem.split(":")[0] for problem in problems] == ["74.0", "seven", "3-9"]
    assert problems_in("MiniLM's [head][nowhere] finds [74.0%][nowhere].") == [  # a broken link, numbers or not
        "[head][nowhere]: no such link definition", "[74.0%][nowhere]: no such link definition"]


def test_a_field_that_is_not_there_fails_with_its_path():
    missing = problems_in("[74.0%][m]", ("m", LEADERBOARD, "tables[probe].rows[all-MiniLM-L6-v2].cells.dobjj in %"))
    assert len(missing) == 1 and "dobjj" in missing[0]
    nowhere = problems_in("[74.0%][m]", ("m", LEADERBOARD, "tables[probe].rows[no such model].cells.dobj in %"))
    assert len(nowhere) == 1 and "no such model" in nowhere[0]


def test_derived_numbers_are_computed_from_the_file():
    difference = ("d", LEADERBOARD, "tables[probe].rows[all-MiniLM-L6-v2].cells.dobj.accuracy - "
                                    "tables[probe].rows[all-mpnet-base-v2].cells.dobj.accuracy in points")
    assert problems_in("MiniLM is [7.8 points][d] ahead.", difference) == []
    assert problems_in("MiniLM is [7.9 points][d] ahead.", difference) != []
    counted = ("c", LEADERBOARD, "count(tables[probe].rows[all-*].cells.dobj.accuracy >= 0.7) in %")
    assert problems_in("[3 rows reach 70%][c]", counted) == []  # MiniLM 74.0, with norms 75.5; MPNet with norms 70.4
    assert problems_in("[4 rows reach 70%][c]", counted) != [] and problems_in("[3 rows reach 60%][c]", counted) != []
