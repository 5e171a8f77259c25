"""Install hints install this project: PyPI's ``probing`` is an unrelated distribution, so nothing the package
prints or the docs say may send a user to ``pip install 'probing[...]'``, and the distribution's own name (which
its test extra refers to) is not ``probing``."""

from __future__ import annotations

import re
import tomllib

from conftest import REPO

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
HINT = re.compile(r"pip install (-e )?'?([^'\s\"]+)'?")


def shipped_text():
    for path in [*sorted((REPO / "probing").rglob("*.py")), REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        yield path, path.read_text(encoding="utf-8")


def test_the_distribution_is_not_pypis_probing_and_refers_to_itself_by_its_name():
    name = PROJECT["name"]
    assert name.lower() != "probing"
    extras = PROJECT["optional-dependencies"]
    selves = [req for reqs in extras.values() for req in reqs if re.match(r"probing\b", req)]
    assert selves and all(req.startswith(f"{name}[") and req[len(name) + 1:-1] in extras for req in selves), selves


def test_every_extras_hint_installs_from_the_clone_and_names_an_extra_that_exists():
    extras = set(PROJECT["optional-dependencies"])
    seen = 0
    for path, text in shipped_text():
        assert "probing[" not in text, f"{path.relative_to(REPO)} sends users to PyPI's unrelated 'probing'"
        for editable, target in HINT.findall(text):
            wanted = re.fullmatch(r"\.\[([\w,-]+)\]", target)
            if wanted:
                seen += 1
                assert editable and set(wanted.group(1).split(",")) <= extras, f"{path.relative_to(REPO)}: {target}"
    assert seen  # the hints exist, so the check above checked something
