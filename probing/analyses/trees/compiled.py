"""The maximum spanning tree of many small matrices on the CPU, compiled with numba.

The same algorithm as the vectorised :func:`probing.analyses.trees.decode.mst_heads`
(level by level: every cycle of the best-edge graph is contracted at once,
cycles' rows are merged but columns never are, then unwound) with the same
arithmetic (one subtraction per level in the scores' own float type) and
the same tie rules, so both give the same tree; one matrix at a time, in a
compiled loop. On a CPU this is several times faster than the vectorised
code, whose many small tensor operations per contraction level cost more
than the work they do (benchmarks/run.py --full, tree_decoding; the measurements are in
the docstring of :mod:`probing.analyses.trees.decode`).

``numba`` compiles the kernel on first use and caches it beside this file
(a few seconds once; probing.compiling). Without numba the functions stay
plain Python (correct, far too slow for real use): ``COMPILED`` says which.
"""

from __future__ import annotations

import numpy as np

from probing.compiling import COMPILED, compiled  # noqa: F401 (COMPILED: decode.py asks whether it is compiled)


def mst_numpy(scores: np.ndarray, roots: np.ndarray, count: np.ndarray) -> np.ndarray:
    """heads int64 [matrix, word] of scores [matrix, dep, head] (float32 or float64), roots and count [matrix]."""
    heads = np.empty(scores.shape[:2], dtype=np.int64)
    _decode_all(np.ascontiguousarray(scores), roots.astype(np.int64), count.astype(np.int64), heads)
    return heads


@compiled
def _first_max(row, k, skip, node_of_word, rep):  # pragma: no cover - compiled by numba
    """Index and value of the first maximum of row[:k], leaving out (with ``skip``) the words inside node ``rep``."""
    best, value = 0, -np.inf
    found = False
    for h in range(k):
        if skip and node_of_word[h] == rep:
            continue
        if not found or row[h] > value:
            best, value, found = h, row[h], True
    return best, value


@compiled
def _decode_all(scores, roots, count, heads):  # pragma: no cover - compiled by numba
    matrices, n = scores.shape[0], scores.shape[1]
    rows = np.empty((n, n), dtype=scores.dtype)
    best_score = np.empty(n, dtype=scores.dtype)
    best_head = np.zeros(n, dtype=np.int64)
    node_of_word = np.empty(n, dtype=np.int64)
    active = np.zeros(n, dtype=np.bool_)
    parent = np.empty(n, dtype=np.int64)
    walk = np.empty(n, dtype=np.int64)
    rep_of = np.empty(n, dtype=np.int64)
    # Records for unwinding: each cycle of size L removes L - 1 >= L / 2 nodes, so all the
    # cycles of one matrix hold fewer than 2n members.
    member = np.empty(2 * n, dtype=np.int64)
    member_rep = np.empty(2 * n, dtype=np.int64)
    member_head = np.empty(2 * n, dtype=np.int64)
    adjusted = np.empty((2 * n, n), dtype=scores.dtype)
    cycle_start = np.empty(2 * n + 1, dtype=np.int64)
    for m in range(matrices):
        _decode_one(
            scores[m], roots[m], count[m], heads[m], rows, best_score, best_head, node_of_word, active, parent,
            walk, rep_of, member, member_rep, member_head, adjusted, cycle_start,
        )


@compiled
def _decode_one(
    scores, root, k, heads, rows, best_score, best_head, node_of_word, active, parent, walk, rep_of,
    member, member_rep, member_head, adjusted, cycle_start,
):  # pragma: no cover - compiled by numba
    for d in range(heads.shape[0]):
        heads[d] = -1
    if k <= 1:
        return
    for d in range(k):
        for h in range(k):
            rows[d, h] = scores[d, h]
        rows[d, d] = -np.inf
        node_of_word[d] = d
        active[d] = d != root
        if d != root:
            best_head[d], best_score[d] = _first_max(rows[d], k, False, node_of_word, -1)
    members = 0
    cycles = 0
    cycle_start[0] = 0
    while True:
        # The best-edge graph's cycles: walk from every node, marking the walk by its start.
        for x in range(k):
            parent[x] = node_of_word[best_head[x]] if active[x] else x
            walk[x] = -1
            rep_of[x] = -1
        level_cycles = 0
        for x in range(k):
            if not active[x] or walk[x] != -1:
                continue
            y = x
            while active[y] and walk[y] == -1:
                walk[y] = x
                y = parent[y]
            if active[y] and walk[y] == x:  # closed a cycle through y: label it by its least node
                lowest = y
                z = parent[y]
                while z != y:
                    lowest = min(lowest, z)
                    z = parent[z]
                rep_of[y] = lowest
                z = parent[y]
                while z != y:
                    rep_of[z] = lowest
                    z = parent[z]
                level_cycles += 1
        if level_cycles == 0:
            break
        # Record every cycle's members in node order (cycle by cycle, ordered by their least node)
        # with their rows adjusted by their edge inside the cycle, and merge the rows.
        for c in range(k):
            if rep_of[c] != c:
                continue
            for v in range(c, k):
                if rep_of[v] != c:
                    continue
                member[members] = v
                member_rep[members] = c
                member_head[members] = best_head[v]
                for h in range(k):
                    adjusted[members, h] = rows[v, h] - best_score[v]
                members += 1
            for h in range(k):
                merged = -np.inf
                for i in range(cycle_start[cycles], members):
                    if adjusted[i, h] > merged:
                        merged = adjusted[i, h]
                rows[c, h] = merged
            cycles += 1
            cycle_start[cycles] = members
        for w in range(k):
            if rep_of[node_of_word[w]] >= 0:
                node_of_word[w] = rep_of[node_of_word[w]]
        for v in range(k):
            if rep_of[v] >= 0 and rep_of[v] != v:
                active[v] = False
        for c in range(k):
            if rep_of[c] == c:
                best_head[c], best_score[c] = _first_max(rows[c], k, True, node_of_word, c)
    # Unwind, last cycle first: the cycle's node hands its head to the first member that
    # edge is worth most to; the other members keep their edges inside the cycle.
    for d in range(k):
        heads[d] = best_head[d]
    for c in range(cycles - 1, -1, -1):
        into = heads[member_rep[cycle_start[c]]]
        entry, worth = -1, -np.inf
        for i in range(cycle_start[c], cycle_start[c + 1]):
            if entry < 0 or adjusted[i, into] > worth:
                entry, worth = i, adjusted[i, into]
        for i in range(cycle_start[c], cycle_start[c + 1]):
            heads[member[i]] = into if i == entry else member_head[i]
    heads[root] = -1
