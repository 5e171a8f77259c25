"""The repository stands on its own: no machine paths, no links out of it but public URLs, no data or weights."""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import REPO

MACHINE_PATH = re.compile(r"(?<![A-Za-z0-9+/=])/(work|root|tmp)/")  # a path's start, not the inside of base64
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def tracked_files() -> list[str]:
    try:
        listed = subprocess.run(["git", "-C", str(REPO), "ls-files"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout (an installed package has no repository to check)")
    return [name for name in listed.stdout.splitlines() if (REPO / name).is_file()]


def test_the_machine_path_pattern_finds_paths_and_not_base64():
    work, root, tmp = ("/" + name + "/" for name in ("work", "root", "tmp"))  # not written out: this file is scanned
    for path in (f'"{work}shared/x"', f"cd {root}.cache", f"({tmp}out.json)", f"file:{tmp}a"):
        assert MACHINE_PATH.search(path), path
    for encoded in (f"eJx0BOwr0Kz4IO{tmp}4HSuU6vhj8", f"AAAA+{root}AA", f"xx/{work}yy"):
        assert not MACHINE_PATH.search(encoded), encoded


def test_no_machine_path_in_any_tracked_file():
    found = []
    for name in tracked_files():
        data = (REPO / name).read_bytes()
        if not any(b"/" + root + b"/" in data for root in (b"work", b"root", b"tmp")):
            continue  # most files (and every large result) hold none of the three: no regex over them
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue  # figures and other binary files
        for number, line in enumerate(text.splitlines(), start=1):
            if MACHINE_PATH.search(line):
                found.append(f"{name}:{number}: {line.strip()[:100]}")
    assert not found, "machine paths in tracked files:\n" + "\n".join(found)


def test_readme_and_docs_link_only_inside_the_repository_or_to_public_urls():
    pages = [name for name in tracked_files() if name.endswith(".md") and (name == "README.md" or name.startswith(
        ("docs/", "leaderboards/", "benchmarks/")))]
    broken = []
    for name in pages:
        text = (REPO / name).read_text(encoding="utf-8")
        if "../shared" in text:
            broken.append(f"{name}: mentions ../shared, which users do not have")
        for target in LINK.findall(text):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            path = (REPO / name).parent / target.split("#", 1)[0]
            if not path.resolve().is_relative_to(REPO.resolve()) or not path.exists():
                broken.append(f"{name}: link to {target}")
    assert not broken, "\n".join(broken)


def test_no_treebank_data_or_model_weights_are_committed():
    names = tracked_files()
    assert not [name for name in names if name.endswith((".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".onnx"))]
    ud_sentences = re.compile(r"^# sent_id = (weblog|email|answers|reviews|newsgroup|GUM_)", re.MULTILINE)
    committed = [name for name in names if name.endswith((".conllu", ".conll", ".conllx", ".txt", ".md"))
                 and ud_sentences.search((REPO / name).read_text(encoding="utf-8", errors="replace"))]
    assert not committed, f"UD treebank sentences are committed in {committed}"


def test_the_result_file_documentation_is_made_from_the_schema():
    """docs/results.md is the output of `python -m probing.results.schema`: the code is the contract's one source."""
    from probing.results.schema.documentation import markdown

    assert (REPO / "docs" / "results.md").read_text(encoding="utf-8") == markdown() + "\n", (
        "docs/results.md is out of date: run python -m probing.results.schema > docs/results.md")


PACKAGE_IMPORT = re.compile(r"^\s*from (probing(?:\.\w+)*) import \(?([\w, ]+)\)?\s*$", re.MULTILINE)


def test_every_name_a_script_or_page_imports_from_the_package_exists():
    """Scripts outside the package (make.sh's inline Python, benchmarks/, examples/, docs/) import from it too, and
    the tests run only some of them: a module split that moves a name breaks them silently (make.sh's treebank check
    once left every PUD treebank out of the atlas that way)."""
    import importlib

    outside = [name for name in tracked_files() if name.endswith((".sh", ".py", ".md"))
               and not name.startswith(("probing/", "tests/"))]
    assert "leaderboards/make.sh" in outside
    missing = []
    for name in outside:
        for match in PACKAGE_IMPORT.finditer((REPO / name).read_text(encoding="utf-8")):
            module = importlib.import_module(match.group(1))
            for imported in (part.split(" as ")[0].strip() for part in match.group(2).split(",")):
                if imported and not hasattr(module, imported):
                    try:
                        importlib.import_module(f"{match.group(1)}.{imported}")
                    except ImportError:
                        missing.append(f"{name}: from {match.group(1)} import {imported}")
    assert not missing, "\n".join(missing)
