"""No analysis sees the command line: argparse and the command object stay in probing/commands.

An analysis is handed what it runs on (an :class:`probing.engine.run.EngineRun`, plain values), never the
parsed options or the command that holds them, so that the Python API, a notebook and a command run it alike.
Each module under probing/analyses/ is read with ``ast`` (nothing is imported) and refused when it imports
argparse, names ``argparse.Namespace``, reads an ``.args.`` attribute of anything, or takes a parameter named
``command`` and reads an attribute of it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ANALYSES = Path(__file__).resolve().parents[1] / "probing" / "analyses"


def command_line_uses(tree: ast.AST) -> list[str]:
    """Each place where ``tree`` reaches for the command line, as ``line: what``.

    >>> command_line_uses(ast.parse("def f(command):\\n    return command.loaded"))
    ['2: attribute of the parameter command (f)']
    >>> command_line_uses(ast.parse("def f(command: str):\\n    return f'made by {command}'"))
    []
    """
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "argparse" for alias in node.names):
            found.append(f"{node.lineno}: import argparse")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "argparse":
            found.append(f"{node.lineno}: from argparse import")
        elif isinstance(node, ast.Attribute) and node.attr == "Namespace" and _named(node.value, "argparse"):
            found.append(f"{node.lineno}: argparse.Namespace")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "args":
            found.append(f"{node.lineno}: .args.{node.attr}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            found += _command_parameter_uses(node)
    return found


def _named(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _command_parameter_uses(function) -> list[str]:
    arguments = function.args
    names = [argument.arg for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    if "command" not in names:
        return []
    body = function.body if isinstance(function.body, list) else [function.body]
    label = getattr(function, "name", "lambda")
    return [f"{node.lineno}: attribute of the parameter command ({label})"
            for statement in body for node in ast.walk(statement)
            if isinstance(node, ast.Attribute) and _named(node.value, "command")]


MODULES = sorted(ANALYSES.rglob("*.py"))


def test_the_analyses_are_found():
    assert len(MODULES) > 50 and ANALYSES / "trees" / "run.py" in MODULES


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(ANALYSES)))
def test_no_analysis_reads_argparse_or_a_command_object(path):
    uses = command_line_uses(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    assert not uses, f"{path.relative_to(ANALYSES.parent)} reaches for the command line: {uses}"
