"""Trees from edge scores: each word's best head (``max``) and the maximum spanning tree (``mst``).

Scores are ``[..., dep, head]``: ``scores[..., d, h]`` is how strongly word h is
the head of word d. Any leading axes (``[batch, layer, head, direction]``, say)
are decoded at once; ``root`` and ``num_words`` are given per sentence and
broadcast over the axes after it.

- :func:`max_heads`: each word's head is its highest-scoring other word, the
  probe's rule: the diagonal is replaced by 0 (a word never prefers itself
  over a positive score), padding is never chosen, ties go to the lowest
  index. Not a tree.
- :func:`mst_heads`: the maximum spanning arborescence rooted at a given word
  (no edge enters it): the tree with the largest sum of raw scores
  (Chu-Liu-Edmonds), for every matrix of the batch at once.

>>> import torch
>>> scores = torch.tensor([[0.0, 0.9, 0.1],   # word 0 prefers word 1
...                        [0.8, 0.0, 0.2],   # word 1 prefers word 0: a cycle
...                        [0.3, 0.3, 0.0]])
>>> max_heads(scores, num_words=3).tolist()
[1, 0, 0]
>>> mst_heads(scores, root=2, num_words=3).tolist()   # break the cycle where it costs least
[1, 2, -1]

How the tree is found, for thousands of small matrices at once
------------------------------------------------------------------
Chu-Liu-Edmonds picks every word's best incoming edge; where these edges
close a cycle it contracts the cycle into one node (an edge entering the
cycle at word v is worth its score minus the score of v's edge inside the
cycle), and repeats on the smaller graph; at the end it unwinds: the edge
chosen into a contracted node enters the cycle at one word, which gives up
its cycle edge. Here every matrix of the batch takes these steps together on
fixed-size arrays:

- a contracted node keeps the index of its lowest member, so a graph of n
  words stays an ``n x n`` array with the other members masked out (-inf);
- cycles are found for all matrices at once by pointer doubling over the
  best-parent array (log2 n gathers), and every cycle of every matrix is
  contracted in the same step by two grouped maxima (heads, then
  dependents; ``scatter_reduce``);
- each entry of the contracted array remembers the original edge it stands
  for, so unwinding needs, per level, only each node's best edge, the cycle
  membership and the map from words to nodes;
- a matrix whose best edges form no cycle is finished and leaves the working
  set, so later levels only touch the few matrices still contracting.

That runs on any device, but on a CPU its many small tensor operations per
level cost more than the work they do: real attention needs up to one level
per word (a head that looks at the previous word makes a chain that is
contracted one word at a time). So on a CPU the same algorithm runs compiled
(:mod:`probing.analyses.trees.compiled`, numba), one matrix after another, giving the
same trees. Measured for all-MiniLM-L6-v2's word attention over en_ewt dev
(2,001 sentences, 6 x 12 heads x 2 directions = 288,144 matrices, one torch
thread, on a shared 2-core CPU): vectorised 4.2-6.2 s of CPU time (and 10x
worse with two torch threads on a busy machine, where every small operation
waits for the other core), compiled 0.7 s; ``benchmarks/run.py --full`` (tree_decoding)
times random attention of the same shape.

Ties are broken the same way every time: a node's best incoming edge is
the highest score with the lowest head index (in the contracted graph, the
node holding the lowest word), and a contracted edge stands for the
highest-scoring original edge, lowest head then lowest dependent on ties.
The tree returned is always one of maximum total score (up to the rounding
of the score differences, which are taken in float32, or float64 for float64
input); among several, which one is fixed by these rules, identical on CPU
and GPU (only gathers, maxima and one subtraction per level, no sums).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["max_heads", "mst_heads", "per_matrix"]


def per_matrix(value, leading: torch.Size, device) -> torch.Tensor:
    """``value`` (an int, or a tensor whose shape starts ``leading``, e.g. ``[batch]``) as long ``leading``.

    >>> per_matrix(torch.tensor([3, 5]), torch.Size([2, 4]), "cpu")[:, 0].tolist()
    [3, 5]
    """
    tensor = torch.as_tensor(value, dtype=torch.long, device=device)
    if tensor.dim() > len(leading) or tuple(tensor.shape) != tuple(leading[: tensor.dim()]):
        raise ValueError(f"per-sentence values of shape {tuple(tensor.shape)} do not start the leading axes {tuple(leading)}")
    return tensor.reshape(tuple(tensor.shape) + (1,) * (len(leading) - tensor.dim())).expand(leading)


def max_heads(scores: torch.Tensor, num_words, *, diagonal: float = 0.0) -> torch.Tensor:
    """Each dependent's highest-scoring head: long ``[..., word]``, -1 for padding words.

    scores: float ``[..., dep, head]`` (not modified). The diagonal is replaced
    by ``diagonal`` (0, the probe's rule for attention, which is never
    negative; pass ``float("-inf")`` for scores that can be negative), padded
    heads are never chosen, and ties go to the lowest index.

    >>> max_heads(torch.tensor([[0.5, 0.2, 0.2], [0.1, 0.0, 0.1], [0.0, 0.0, 0.0]]), 2).tolist()
    [1, 0, -1]
    """
    words = scores.shape[-1]
    leading = scores.shape[:-2]
    count = per_matrix(num_words, leading, scores.device)[..., None]  # [..., 1]
    positions = torch.arange(words, device=scores.device)
    padded = positions >= count  # [..., word]
    replaced = padded[..., None, :] | torch.eye(words, dtype=torch.bool, device=scores.device)
    fill = torch.full((), diagonal, dtype=scores.dtype, device=scores.device)
    fill = torch.where(padded[..., None, :], torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device), fill)
    chosen = torch.where(replaced, fill, scores).max(dim=-1).indices  # first maximum: lowest index on ties
    return chosen.masked_fill(padded, -1)


def mst_heads(scores: torch.Tensor, root, num_words, *, implementation: str = "auto") -> torch.Tensor:
    """The maximum spanning arborescence rooted at ``root``: long ``[..., word]`` of heads.

    scores: float ``[..., dep, head]``, finite (not modified); the raw scores are
    summed. root, num_words: per sentence (ints or tensors whose shape starts
    the leading axes). The root's head is -1, as is every padding word's.
    ``implementation``: ``"vectorised"`` (torch, any device), ``"compiled"``
    (numba, CPU) or ``"auto"`` (compiled for CPU tensors when numba is there,
    else vectorised); both give the same trees.

    >>> mst_heads(torch.zeros(2, 3, 3), root=torch.tensor([0, 1]), num_words=torch.tensor([3, 2])).tolist()
    [[-1, 0, 0], [1, -1, -1]]

    (All scores equal: each word takes the lowest-index head it may; in the
    second sentence word 2 is padding.)
    """
    words = scores.shape[-1]
    leading = scores.shape[:-2]
    device = scores.device
    count = per_matrix(num_words, leading, device).reshape(-1)
    roots = per_matrix(root, leading, device).reshape(-1)
    if bool(((count > 0) & ((roots < 0) | (roots >= count))).any()):
        raise ValueError("every sentence with words needs a root word inside it")
    if words == 0 or count.numel() == 0:
        return torch.full(tuple(leading) + (words,), -1, dtype=torch.long, device=device)
    work_dtype = torch.float64 if scores.dtype == torch.float64 else torch.float32
    flat = scores.reshape(-1, words, words).to(work_dtype)
    if _use_compiled(implementation, device):
        from probing.analyses.trees.compiled import mst_numpy

        heads = torch.from_numpy(mst_numpy(flat.numpy(), roots.numpy(), count.numpy()))
    else:
        heads = _chu_liu_edmonds(flat, roots, count)
    return heads.view(tuple(leading) + (words,))


def _use_compiled(implementation: str, device) -> bool:
    if implementation == "vectorised":
        return False
    if implementation not in ("auto", "compiled"):
        raise ValueError(f"unknown implementation {implementation!r}: use auto, vectorised or compiled")
    from probing.analyses.trees import compiled

    if implementation == "compiled":
        if torch.device(device).type != "cpu" or not compiled.COMPILED:
            raise ValueError("the compiled implementation needs numba and CPU tensors")
        return True
    return torch.device(device).type == "cpu" and compiled.COMPILED


@dataclass
class _Contraction:
    """The cycles contracted at one level, kept for unwinding; one entry per cycle member.

    ``member``/``rep``: flat node ids (matrix * n + node) of the member and of
    the node its cycle becomes (its lowest member); ``cycle``: the member's
    cycle, numbered from 0 within the level; ``head``: the member's head word
    inside the cycle; ``adjusted`` [member, word]: what an edge from each head
    word into the member is worth once the cycle is contracted.
    """

    member: torch.Tensor
    rep: torch.Tensor
    cycle: torch.Tensor
    head: torch.Tensor
    adjusted: torch.Tensor


def _chu_liu_edmonds(scores: torch.Tensor, roots: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """scores [matrix, dep, head] (not modified); roots, count [matrix] -> heads [matrix, word].

    ``rows`` [node, word], flat over nodes (matrix * n + node), holds what each
    head word is worth to a node; a contracted node's row is the maximum of its
    members' adjusted rows. Columns are never merged, so a node's best head is
    always a word and its parent the node holding that word. Only the matrices
    whose best edges still close a cycle (``alive``) are touched at each level,
    and of those only the cycles' rows.
    """
    matrices, n, _ = scores.shape
    device = scores.device
    positions = torch.arange(n, device=device)
    is_word = positions[None, :] < count[:, None]  # [matrix, word]
    is_root = positions[None, :] == roots[:, None]
    takes_head = is_word & ~is_root
    # A head is another word (padding and the diagonal are -inf). The rows of padding and of
    # the root are never read: those nodes take no edge.
    rows = scores.masked_fill(~is_word[:, None, :], float("-inf"))  # a private copy
    rows.diagonal(dim1=1, dim2=2).fill_(float("-inf"))
    rows = rows.view(matrices * n, n)
    best_score, best_head = rows.max(dim=-1)  # [node]: lowest head word on ties

    # [alive, node] state of the matrices still contracting
    alive = torch.arange(matrices, device=device)
    node_of_word = positions.expand(matrices, n)
    active = takes_head  # nodes that still need an incoming edge
    scratch = torch.empty(matrices * n, dtype=torch.long, device=device)
    contractions: list[_Contraction] = []
    while len(alive):
        heads = best_head.view(matrices, n).index_select(0, alive)
        parent = torch.where(active, node_of_word.gather(-1, heads), positions)
        keep, on_cycle, lowest = _cycles(parent, active)
        if not len(keep):
            break
        alive, node_of_word, active = alive[keep], node_of_word[keep], active[keep]
        local, node = on_cycle.nonzero(as_tuple=True)  # members, ordered by matrix then node
        base = alive[local] * n
        member, rep = base + node, base + lowest[local, node]
        reps = member[member == rep]  # one per cycle, in member order
        scratch[reps] = torch.arange(len(reps), device=device)
        cycle = scratch[rep]

        # An edge entering the cycle at member v is worth its score minus v's edge in the cycle.
        adjusted = rows.index_select(0, member) - best_score.index_select(0, member)[:, None]  # [member, word]
        contractions.append(_Contraction(member, rep, cycle, best_head.index_select(0, member), adjusted))
        merged = torch.full((len(reps), n), float("-inf"), dtype=rows.dtype, device=device)
        merged.scatter_reduce_(0, cycle[:, None].expand_as(adjusted), adjusted, "amax", include_self=False)
        rows.index_copy_(0, reps, merged)

        # Contract: members become their cycle's node; only the new nodes need a new best edge.
        group = torch.where(on_cycle, lowest, positions)
        node_of_word = group.gather(-1, node_of_word)
        active = active & (~on_cycle | (group == positions))
        inside = node_of_word[local[member == rep]] == (reps % n)[:, None]  # [cycle, word]: its own words
        score, head = merged.masked_fill(inside, float("-inf")).max(dim=-1)
        best_score.index_copy_(0, reps, score)
        best_head.index_copy_(0, reps, head)
    return _unwind(contractions, best_head, takes_head)


def _cycles(parent: torch.Tensor, needs_head: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The matrices whose best-parent graph has a cycle, its nodes, and each node's lowest fellow member.

    parent [alive, node]; nodes that take no edge point at themselves and are
    never on a cycle. Pointer doubling: after s steps ``jump`` is
    parent^(2^s) and ``lowest`` the least node among the first 2^s on each
    node's path; once 2^s >= n every path has reached its cycle, the nodes
    reached are exactly the cycles' nodes, and on a cycle ``lowest`` is the
    cycle's least node. Returns ``keep`` [kept], the matrices with a cycle,
    and their ``on_cycle`` and ``lowest`` [kept, node].
    """
    n = parent.shape[-1]
    jump = parent
    lowest = torch.arange(n, device=parent.device).expand_as(parent)
    for _ in range(max(1, (n - 1).bit_length())):
        lowest = torch.minimum(lowest, lowest.gather(-1, jump))
        jump = jump.gather(-1, jump)
    on_cycle = torch.zeros_like(needs_head).scatter_(-1, jump, True) & needs_head
    keep = on_cycle.any(dim=-1).nonzero().squeeze(1)
    return keep, on_cycle[keep], lowest[keep]


def _unwind(contractions: list[_Contraction], best_head: torch.Tensor, takes_head: torch.Tensor) -> torch.Tensor:
    """Expand the contracted cycles, last level first, into each word's head [matrix, word].

    ``best_head`` [node] holds every node's last best head word. A cycle's
    node hands its head word to the member that edge is worth most to (the
    first such member on ties, as the contraction's maximum took it), and
    every other member keeps its edge inside the cycle.
    """
    matrices, n = takes_head.shape
    head = best_head.clone()
    for level in reversed(contractions):
        into = head[level.rep]  # the head word chosen for each member's cycle
        worth = level.adjusted.gather(1, into[:, None]).squeeze(1)  # [member]
        cycles = int(level.cycle.max()) + 1
        best = torch.full((cycles,), float("-inf"), dtype=worth.dtype, device=worth.device)
        best.scatter_reduce_(0, level.cycle, worth, "amax", include_self=False)
        order = torch.arange(len(worth), device=worth.device)
        candidate = torch.where(worth == best[level.cycle], order, len(worth))
        first = torch.full((cycles,), len(worth), dtype=torch.long, device=worth.device)
        first.scatter_reduce_(0, level.cycle, candidate, "amin", include_self=True)
        head[level.member] = torch.where(order == first[level.cycle], into, level.head)
    return torch.where(takes_head, head.view(matrices, n), torch.full_like(head.view(matrices, n), -1))
