"""One home each for scoring tokens, scoring a batch of pairs and the pass over pairs, read from the source.

``probing pairs`` and ``probing ablate --metric minimal-pairs`` once had a batch loop over pairs each, and the
chunked log-softmax of a sentence's tokens was written in more than one place. These tests fail when either comes
back: a log-softmax or logsumexp outside probing/model/token_scores.py, a loop over pairs outside the one pass
(probing/engine/pair_passes.py), a batch of pairs scored anywhere but in an accumulator's per-batch hook.
tests/test_pairs_engine.py checks the same from the running code.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "probing"


def _called(node: ast.AST) -> str | None:
    """The name a call calls (``f(...)``, ``x.f(...)``: f), else None."""
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id
        if isinstance(node.func, ast.Attribute):
            return node.func.attr
    return None


def _calls() -> list[tuple[str, str, str, bool]]:
    """Every call in the package: (module path, the enclosing function, the name called, inside a loop)."""
    found = []

    def visit(node: ast.AST, path: str, function: str, looping: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner, loop = function, looping
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner, loop = child.name, False  # a function defined in a loop runs where it is called
            elif isinstance(child, (ast.For, ast.While, ast.comprehension)):
                loop = True
            name = _called(child)
            if name:
                found.append((path, function, name, looping))
            visit(child, path, inner, loop)

    for file in sorted(PACKAGE.rglob("*.py")):
        visit(ast.parse(file.read_text(encoding="utf-8")), file.relative_to(PACKAGE).as_posix(), "", False)
    return found


CALLS = _calls()


def callers(*names: str) -> set[tuple[str, str]]:
    return {(path, function) for path, function, name, _ in CALLS if name in names}


def test_token_log_probabilities_are_computed_in_one_module():
    places = {path for path, _ in callers("log_softmax", "logsumexp")}
    assert places == {"model/token_scores.py"}, places


def test_the_token_scorers_are_read_only_through_the_row_scorer():
    """Whole logits or the LM head's chunks: the row scorer chooses, and the next-token loss reads the chunks."""
    assert callers("scored_log_probs", "row_log_probs") == {("model/token_scores.py", "log_probs")}
    assert {path for path, _ in callers("token_log_probs")} == {"model/token_scores.py", "analyses/ablation/metrics.py"}


def test_a_batch_of_pairs_is_scored_by_one_function_called_once_per_batch_by_the_pass():
    # the rows of a batch are laid out and scored in model/pair_rows.py only
    assert {path for path, _ in callers("prefix_shared_log_probs", "whole")} == {"model/pair_rows.py"}
    # the one scorer of a batch is called by the per-batch hooks the pass calls (probing pairs' accumulator, the
    # ablation's metric), never in a loop of its own
    assert callers("batch_log_probs") == {("analyses/pairs/scoring.py", "update"),
                                          ("analyses/ablation/metrics.py", "measure")}
    assert not [call for call in CALLS if call[2] == "batch_log_probs" and call[3]]


def test_pairs_are_batched_by_the_one_pass_only():
    assert callers("pair_batches") == {("engine/pair_passes.py", "run_pair_pass")}
    assert callers("run_pair_pass") == {("engine/run.py", "run_pairs"), ("analyses/pairs/scoring.py", "pair_log_probs")}
    # grouping by length is the engine's, for a treebank's batches and for the pairs' (no third loop over groups)
    assert {path for path, _ in callers("length_groups")} == {"engine/batching.py", "engine/pair_passes.py"}
