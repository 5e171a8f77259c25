"""Plain reference decoders for the tree tests: a recursive Chu-Liu-Edmonds and brute force.

Written for clarity, not speed, and independently of the vectorised code in
``probing.analyses.trees.decode``: dictionaries of edges, one contraction per call.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np


def reference_mst(scores, root: int) -> list[int]:
    """Heads of a maximum spanning arborescence of ``scores[dep][head]`` rooted at ``root`` (its head -1)."""
    n = len(scores)
    edges = {(h, d): float(scores[d][h]) for d in range(n) for h in range(n) if d != h and d != root}
    chosen = _cle(frozenset(range(n)), edges, root, next_id=n)
    return [-1 if d == root else chosen[d] for d in range(n)]


def _cle(nodes, edges, root, next_id):
    best = {}
    for d in nodes:
        if d == root:
            continue
        incoming = [(w, -h, h) for (h, dd), w in edges.items() if dd == d]
        best[d] = max(incoming)[2]
    cycle = _find_cycle(best)
    if cycle is None:
        return best
    contracted = next_id
    new_edges, origin = {}, {}
    for (h, d), w in edges.items():
        if h in cycle and d in cycle:
            continue
        if d in cycle:
            key, value = (h, contracted), w - edges[(best[d], d)]
        elif h in cycle:
            key, value = (contracted, d), w
        else:
            key, value = (h, d), w
        if key not in new_edges or value > new_edges[key]:
            new_edges[key], origin[key] = value, (h, d)
    inner = _cle((nodes - cycle) | {contracted}, new_edges, root, next_id + 1)
    result = {}
    for d, h in inner.items():
        head, dep = origin[(h, d)]
        result[dep] = head
        if d == contracted:
            entry = dep
    for v in cycle:
        if v != entry:
            result[v] = best[v]
    return result


def _find_cycle(parent):
    for start in parent:
        path, node = [], start
        while node in parent and node not in path:
            path.append(node)
            node = parent[node]
        if node in path:
            return frozenset(path[path.index(node):])
    return None


@functools.lru_cache(maxsize=None)
def all_trees(n: int, root: int) -> np.ndarray:
    """Every arborescence on n words rooted at ``root``: int [tree, word] of heads (root's -1)."""
    others = [d for d in range(n) if d != root]
    trees = []
    for choice in itertools.product(range(n), repeat=len(others)):
        heads = [-1] * n
        for d, h in zip(others, choice):
            heads[d] = h
        if any(heads[d] == d for d in others):
            continue
        if all(_reaches(heads, d, root, n) for d in others):
            trees.append(heads)
    return np.array(trees, dtype=np.int64).reshape(-1, n)


def _reaches(heads, start, root, n):
    node = start
    for _ in range(n):
        if node == root:
            return True
        node = heads[node]
    return node == root


def tree_score(scores, heads) -> float:
    return float(sum(scores[d][h] for d, h in enumerate(heads) if h >= 0))


def brute_force_best(scores, root: int) -> float:
    """The largest total score of any arborescence rooted at ``root``."""
    scores = np.asarray(scores, dtype=np.float64)
    n = len(scores)
    trees = all_trees(n, root)
    if n == 1:
        return 0.0
    deps = np.array([d for d in range(n) if d != root], dtype=np.int64)
    return float(scores[deps[None, :], trees[:, deps]].sum(axis=1).max())


def is_arborescence(heads, root: int) -> bool:
    n = len(heads)
    if heads[root] != -1:
        return False
    for d in range(n):
        if d == root:
            continue
        if not 0 <= heads[d] < n or heads[d] == d or not _reaches(heads, d, root, n):
            return False
    return True
