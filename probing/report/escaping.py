"""One escaping function per output format: names from files (relations, models, treebanks, words) are text.

Every writer of a format passes each piece of text it did not write itself
through that format's function here, so that a name can never become markup,
a formula, a new row or a path:

- :func:`html_text`: HTML text and attribute values (``&<>"'``);
- :func:`script_json`: JSON inside a ``<script>`` element (``<``, ``>``, ``&``,
  U+2028 and U+2029 as ``\\uXXXX``, so no ``</script>`` or ``<!--`` can end or
  bend the element, and the text is still the same JSON);
- :func:`markdown_cell` and :func:`markdown_text`: a table cell keeps its
  column (``|`` escaped), every text its line (line breaks as spaces), and no
  text becomes HTML, an autolink or a link (``<`` and an entity's ``&`` as
  entities, a ``]`` that would close a link as ``\\]``);
- :func:`latex_text`: LaTeX's special characters, and no blank line that would
  end a row's paragraph;
- :func:`csv_cell`: a cell a spreadsheet would run as a formula (``= + - @``,
  TAB or CR first) starts with ``'`` instead, as spreadsheet tools recommend;
  numbers stay numbers; :func:`csv_text` writes rows of such cells;
- :func:`file_name`: a name as one file-name component that stays in its folder;
- :func:`relative_url`: a relative file path as the path of a link that stays relative.

Figures need no function: every figure is made by :func:`probing.report.drawing.new_figure`,
which draws every text of it as plain text (a ``$`` is not mathtext there).

>>> html_text('<b title="x">&</b>')
'&lt;b title=&quot;x&quot;&gt;&amp;&lt;/b&gt;'
>>> script_json({"word": "</script><!--"})
'{"word":"\\\\u003c/script\\\\u003e\\\\u003c!--"}'
>>> markdown_cell("a|b\\nc")
'a\\\\|b c'
>>> markdown_cell("<img src=x onerror=alert(1)>"), markdown_cell("[click](javascript:alert(1))")
('&lt;img src=x onerror=alert(1)>', '[click\\\\](javascript:alert(1))')
>>> latex_text("50% & more_x")
'50\\\\% \\\\& more\\\\_x'
>>> csv_cell("=HYPERLINK(1)"), csv_cell("-2"), csv_cell("-"), csv_cell(3)
("'=HYPERLINK(1)", '-2', '-', 3)
>>> file_name("../../x/PWNED"), file_name("nmod:poss")
('%2E.%2F..%2Fx%2FPWNED', 'nmod_poss')
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import re
import urllib.parse
from collections.abc import Iterable

LINE_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")
"""Every character that some reader takes as the end of a line (str.splitlines' set)."""


def html_text(text) -> str:
    """Text as HTML text or as an attribute value (quoted with ``"``)."""
    return html.escape(str(text), quote=True)


SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(data) -> str:
    """``data`` as compact JSON that may stand inside ``<script type="application/json">``: the HTML tokenizer
    sees no ``<`` (no ``</script>``, no ``<!--`` that would put it into a script-escape state), and a
    JavaScript reader no raw line separator; ``JSON.parse`` gives the same data back."""
    text = json.dumps(data, separators=(",", ":"))
    return re.sub("[<>&\u2028\u2029]", lambda found: SCRIPT_ESCAPES[found.group()], text)


MARKDOWN_MARKUP = re.compile(r"\\|<|&(?=#[0-9]+;|#[xX][0-9a-fA-F]+;|[A-Za-z][A-Za-z0-9]*;)|\](?=[(\[:])")
"""What turns Markdown text into markup: a backslash (it could undo the escapes here), ``<`` (every HTML tag,
comment and autolink starts with it, an e-mail autolink with almost any character after it), an ``&`` that
starts an entity (the text would show another character),
and a ``]`` that closes a link: ``](`` an inline link or image, ``][`` a reference, ``]:`` a definition
(a bare ``[text]`` links nowhere without one, so an interval's ``[85.1, 88.4]`` stays as it is)."""
MARKDOWN_ESCAPES = {"\\": "\\\\", "<": "&lt;", "&": "&amp;", "]": "\\]"}


def one_line(text) -> str:
    """Text on one line: each run of line breaks as one space (for every format whose rows are lines)."""
    return LINE_BREAKS.sub(" ", str(text))


def markdown_text(text) -> str:
    """Text on one line of Markdown (a heading, a list item), shown as it is: line breaks as one space, and
    :data:`MARKDOWN_MARKUP` escaped. ``<`` becomes an entity rather than ``\\<``, because not every Markdown
    reader takes that escape (Python-Markdown does not); ``>``, ``*``, ``_``, ``:`` and ``-`` stay, so that
    ``h>d``, ``en_ewt``, ``nmod:poss`` and ``all-MiniLM-L6-v2`` read as they are.

    >>> markdown_text("a\\\\b &amp; <b>[x]: y\\nz")
    'a\\\\\\\\b &amp;amp; &lt;b>[x\\\\]: y z'
    """
    return MARKDOWN_MARKUP.sub(lambda found: MARKDOWN_ESCAPES[found.group()[0]], one_line(text))


def markdown_cell(text) -> str:
    """A Markdown table cell: :func:`markdown_text`, with ``|`` escaped too, so that the cell keeps its column."""
    return markdown_text(text).replace("|", "\\|")


def markdown_row(cells) -> str:
    """One line of a Markdown table, every cell through :func:`markdown_cell` (a name read from a result may hold
    ``|``, line breaks or markup).

    >>> markdown_row(["x|<b>", "**1.0**"])
    '| x\\\\|&lt;b> | **1.0** |'
    """
    return "| " + " | ".join(markdown_cell(cell) for cell in cells) + " |"


MARKDOWN_TABLES = ("github", "pipe")
"""The formats of ``tabulate`` that write a Markdown table (its ``html`` format escapes its cells itself)."""


def tabulate_cells(rows, headers, tablefmt: str):
    """``rows`` and ``headers`` as a table in ``tabulate``'s ``tablefmt`` must get them: for a Markdown table,
    every cell through :func:`markdown_cell` (a token or relation name may hold ``<s>`` or ``|``); otherwise
    as they are.

    >>> tabulate_cells([["<s>", 1]], ["a|b"], "github")
    ([['&lt;s>', '1']], ['a\\\\|b'])
    """
    if tablefmt not in MARKDOWN_TABLES:
        return rows, headers
    return [[markdown_cell(cell) for cell in row] for row in rows], [markdown_cell(title) for title in headers]


LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
}


def latex_text(text) -> str:
    """LaTeX's special characters escaped, line breaks as one space (a blank line would end a row).

    >>> latex_text("en_ewt\\n\\nnext")
    'en\\\\_ewt next'
    """
    return "".join(LATEX_SPECIAL.get(char, char) for char in one_line(text))


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet takes a cell to begin a formula with (OWASP's list)."""
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value):
    """A CSV cell: text that would start a formula gets a leading ``'``; numbers (``-2``, ``+1``, ``-0.5``),
    a lone ``-`` (no value; one character holds no formula) and values that are not text stay as they are."""
    if (isinstance(value, str) and len(value) > 1 and value.startswith(FORMULA_STARTS)
            and not NUMBER.fullmatch(value)):
        return "'" + value
    return value


def csv_text(rows: Iterable[list]) -> str:
    r"""Rows as CSV (``\n`` line ends, quotes where needed), every cell through :func:`csv_cell`. A row with a
    carriage return in a cell is quoted whole: the csv module quotes only the line end's characters, and a
    bare CR would end the row for every reader.

    >>> csv_text([["a", "=b"], [1, "c\rd"]])
    'a,\'=b\n"1","c\rd"\n'
    """
    out = io.StringIO()
    plain, quoted = csv.writer(out, lineterminator="\n"), csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for row in rows:
        cells = [csv_cell(value) for value in row]
        (quoted if any(isinstance(cell, str) and "\r" in cell for cell in cells) else plain).writerow(cells)
    return out.getvalue()


FILE_NAME_KEEPS = frozenset("-_.+=@,()")
"""Characters a file-name component keeps besides letters and digits."""
FILE_NAME_BYTES = 200
"""The longest component made, in UTF-8 bytes: room for a suffix under the usual limit of 255."""


def file_name(name: str) -> str:
    """``name`` as one file-name component that cannot leave its folder or hide: ``:`` as ``_`` (the UD
    subtype of ``nmod:poss``), every other character but letters, digits and ``-_.+=@,()`` as ``%XX`` of its
    UTF-8 bytes, a leading dot as ``%2E``; a long result is cut and ends in a hash of the whole name."""
    text = "".join(char if char.isalnum() or char in FILE_NAME_KEEPS else
                   "_" if char == ":" else "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
                   for char in str(name)) or "%"  # no other name gives a lone % (each is %XX)
    if text.startswith("."):
        text = "%2E" + text[1:]
    if len(text.encode("utf-8")) > FILE_NAME_BYTES:
        digest = hashlib.sha256(str(name).encode("utf-8", "surrogatepass")).hexdigest()[:16]
        text = text.encode("utf-8")[: FILE_NAME_BYTES - 17].decode("utf-8", "ignore") + "~" + digest
    return text


URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
"""How a URL with a scheme begins (``javascript:``, ``https:``, ``C:`` of a Windows path)."""


def is_relative_path(path: str) -> bool:
    """Whether ``path`` names a place relative to a folder: not absolute, no URL scheme, no host.

    >>> [is_relative_path(path) for path in ("plots", "../plots", "/srv/plots", "//host/x", "javascript:x")]
    [True, True, False, False, False]
    """
    return not (path.startswith(("/", "\\")) or URL_SCHEME.match(path))


def relative_url(path: str) -> str:
    """A relative file path (``/`` between folders) as the path of a link: each part percent-encoded, so that
    no ``:`` makes it a scheme, no ``#`` or ``?`` ends it early, and the link names that very file.

    >>> relative_url("plots/a b#1:x.png")
    'plots/a%20b%231%3Ax.png'
    """
    if not is_relative_path(path):
        raise ValueError(f"not a relative path: {path!r}")
    return "/".join(urllib.parse.quote(part, safe="") for part in path.split("/"))
