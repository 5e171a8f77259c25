"""The package's layers (docs/architecture.md): which module may import which, no import cycle, and every module
importable on its own.

The import graph is read from the source (``import`` statements anywhere in a module, those inside functions
included: an import deferred into a function still ties two modules together). Layers, lowest first; a module
may import its own layer and the ones below it, never one above:

0. foundations: ``errors``, ``registry``, ``naming``, ``atomic``, ``plugins``, ``version``, ``compiling``
1. ``data``: treebanks, inputs, named treebanks, documents
2. ``results``: schema, validated reading and writing, merging, result objects
3. ``stats``: the Poisson bootstrap, intervals, selection, held-out rules, transfer
4. ``report``: tables, renderers, figures, pages (no torch)
5. ``model``: loading, tokenizers, hooks, extraction
6. ``engine``: the pass over batches and the counts it adds up
7. ``analyses``: one package per analysis; one analysis imports another only where :data:`BUILDS_ON` says why
8. ``commands``: the command line
9. facades: ``cli``, ``api``, ``testing``, the package itself
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "probing"

LAYERS = {
    **dict.fromkeys(("errors", "registry", "naming", "atomic", "plugins", "version", "compiling"), 0),
    "data": 1, "results": 2, "stats": 3, "report": 4, "model": 5, "engine": 6, "analyses": 7,
    "commands": 8, **dict.fromkeys(("cli", "api", "testing", "__main__"), 9),
}

BUILDS_ON = {
    ("heads", "surface"): "the heads map colours every head by its surface behaviour, so heads runs surface's "
                          "accumulator beside its own over the same batches",
    ("noop", "probe"): "the no-op test measures each head on the probe's relation pairs (its collect_pairs), so that "
                       "its relations are exactly the probe's",
    ("trees", "probe"): "head ensembles are chosen among each relation's best single heads, which trees counts with "
                        "the probe's accumulator in its first pass",
    ("ablation", "pairs"): "ablate's minimal-pairs metric scores BLiMP under disabled heads exactly as probing pairs "
                           "does: its sentence log-probabilities and its resamples within paradigms",
    ("ablation", "probe"): "ablate --chosen --select-on TREEBANK counts each relation's heads on DEV with the probe's "
                           "accumulator before choosing the heads it disables",
    ("importance", "ablation"): "the importance map is read from an ablate --each-head result (its scores and paired "
                                "replicates), chooses each relation's head as ablate --chosen does and ranks it by "
                                "the board's permutation rule, and its board shares the causal board's columns and Holm",
    **{("overview", other): "probing report runs heads, the probe and the gradients over one pass and writes their "
                            "results and tables into one folder"
       for other in ("heads", "surface", "probe", "gradients")},
    **{("explore", other): "probing explore runs the probe, the no-op test and the sentence views over one pass and "
                           "shows them on one page"
       for other in ("probe", "noop", "views")},
}
"""(analysis, analysis it imports) -> why: the compositions the layout allows inside the analyses layer."""


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (resolved to the longest module name)."""
    return {name: set(targets) for name, targets in _parsed_graph(PACKAGE).items()}


@functools.lru_cache(maxsize=4)
def _parsed_graph(package: Path) -> dict[str, frozenset[str]]:
    """:func:`import_graph` of ``package``, parsed once a session: every test of the layout reads the same files."""
    known = modules()

    def owner(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {owner(alias.name) for alias in node.names if alias.name.startswith("probing")}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                if base.split(".")[0] == "probing":
                    targets |= {f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else owner(base)
                                for alias in node.names}
        graph[name] = frozenset(target for target in targets if target and target != name)
    return graph


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS["__main__"] if len(parts) == 1 else LAYERS[parts[1]]


def test_every_module_has_a_layer():
    assert [name for name in modules() if name != "probing" and name.split(".")[1] not in LAYERS] == []


def test_no_module_imports_a_layer_above_its_own():
    upward = sorted(f"{module} -> {target}" for module, targets in import_graph().items() for target in targets
                    if layer(target) > layer(module))
    assert upward == []


def test_no_analysis_imports_another_unless_it_builds_on_it():
    crossing = set()
    for module, targets in import_graph().items():
        for target in targets:
            if module.startswith("probing.analyses.") and target.startswith("probing.analyses."):
                pair = (module.split(".")[2], target.split(".")[2])
                if pair[0] != pair[1] and pair not in BUILDS_ON:
                    crossing.add(f"{module} -> {target}")
    assert sorted(crossing) == []


def test_the_import_graph_has_no_cycle():
    graph, order, low, stack, on_stack, cycles = import_graph(), {}, {}, [], set(), []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        order[module] = low[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        for target in graph[module]:
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in graph:
        if module not in order:
            visit(module)
    assert cycles == []


def test_the_checker_sees_an_upward_import_and_a_cycle(tmp_path, monkeypatch):
    fake = tmp_path / "probing"
    (fake / "data").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "data" / "__init__.py").write_text("")
    (fake / "errors.py").write_text("from probing.data import reader\n")
    (fake / "data" / "reader.py").write_text("def f():\n    from probing import errors\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    graph = import_graph()
    assert graph["probing.errors"] == {"probing.data.reader"} and graph["probing.data.reader"] == {"probing.errors"}
    with pytest.raises(AssertionError):
        test_no_module_imports_a_layer_above_its_own()
    with pytest.raises(AssertionError):
        test_the_import_graph_has_no_cycle()


@pytest.mark.slow
def test_every_module_imports_on_its_own():
    """Each module in a fresh interpreter: an import that works only after another module loaded is a hidden
    cycle or a missing import."""
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}

    def attempt(name: str) -> str | None:
        done = subprocess.run([sys.executable, "-c", f"import {name}"], env=env, capture_output=True, text=True)
        return None if done.returncode == 0 else f"{name}: {done.stderr.strip().splitlines()[-1]}"

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures = [failure for failure in pool.map(attempt, sorted(modules())) if failure]
    assert failures == []
