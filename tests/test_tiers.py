"""The test tiers keep their promise: every test that starts a Python process is marked ``slow``.

A child Python process (``sys.executable``, torchrun, a run killed to be resumed, a browser) costs seconds of
start-up and imports before it does anything, so the fast tier (``-m "not slow"``) leaves such tests out
(pyproject.toml's markers; the README's Tests section). This reads every test module's source: a test function
that starts one, itself or through a function of its own module, must carry ``@pytest.mark.slow`` (or its module
a ``pytestmark`` that holds it).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

STARTS_A_PROCESS = {"sys.executable", "kill_once_checkpointed", "Browser"}
"""The names in a function's code that start a Python (or browser) process (torchrun is ``sys.executable -m
torch.distributed.run``)."""

DISPATCHERS = {"run_cli", "assert_refused"}
"""test_hostile's helpers that start a child only for the cases that ask for one: those cases are marked where
they are registered (``refused(..., in_a_child=True)``), and test_refused checks each case against its mark."""


def _is_slow_mark(node: ast.AST) -> bool:
    return "pytest.mark.slow" in ast.unparse(node)


def _names(node: ast.AST) -> set[str]:
    """Every name and dotted name the code of ``node`` uses (strings and docstrings are no code)."""
    return {ast.unparse(part) for part in ast.walk(node) if isinstance(part, (ast.Name, ast.Attribute))}


def _called(node: ast.AST) -> set[str]:
    """The plain names ``node`` calls."""
    return {call.func.id for call in ast.walk(node) if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)}


def _starters(tree: ast.Module) -> set[str]:
    """The module's own functions that start a process, directly or through another of its functions."""
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    direct = {name for name, node in functions.items() if name not in DISPATCHERS and _names(node) & STARTS_A_PROCESS}
    calls = {name: _called(node) for name, node in functions.items()}
    starters, grown = set(direct), True
    while grown:
        grown = False
        for name in functions:
            if name not in starters and name not in DISPATCHERS and calls[name] & starters:
                starters.add(name)
                grown = True
    return starters


def unmarked_process_tests(path: Path) -> list[str]:
    """``path::test`` for each test of the module that starts a process and is not marked slow.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     module = Path(folder) / "test_x.py"
    ...     _ = module.write_text("import sys, subprocess\\n"
    ...                           "def child():\\n    subprocess.run([sys.executable, '-c', 'pass'])\\n"
    ...                           "def test_a():\\n    child()\\n"
    ...                           "@pytest.mark.slow\\ndef test_b():\\n    child()\\n"
    ...                           "def test_c():\\n    pass\\n")
    ...     [name.split("::")[1] for name in unmarked_process_tests(module)]
    ['test_a']
    """
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    if any(isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets)
           and _is_slow_mark(node.value) for node in tree.body):
        return []
    starters = _starters(tree)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test")):
            continue
        starts = _names(node) & STARTS_A_PROCESS or _called(node) & starters
        if starts and not any(_is_slow_mark(decorator) for decorator in node.decorator_list):
            found.append(f"{path.name}::{node.name}")
    return found


def test_every_test_that_starts_a_python_process_is_marked_slow():
    modules = sorted(TESTS.glob("test_*.py"))
    assert len(modules) > 50  # the glob found the test modules
    unmarked = [name for module in modules for name in unmarked_process_tests(module)]
    assert unmarked == [], "mark these @pytest.mark.slow: " + ", ".join(unmarked)
