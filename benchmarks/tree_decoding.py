"""How long whole-tree decoding takes for one model's attention over a treebank-sized corpus.

Decodes random attention-shaped word attention (rows drawn from a softmax,
part of each row left to the dropped special tokens) for every layer, head
and direction with ``max`` and ``mst``, in length-sorted batches as the
engine makes them (at most 32 sentences, at most 2**16 attention cells), and
prints the seconds. Sentence lengths come from ``--treebank FILE`` when
given, else from a fixed draw shaped like en_ewt dev (2,001 sentences, mean
12.6 words, median 10, longest 75).

    python benchmarks/tree_decoding.py                      # MiniLM's shape: 6 layers x 12 heads
    python benchmarks/tree_decoding.py --layers 12 --heads 12 --treebank dev.conllu
    python benchmarks/tree_decoding.py --model MODEL_DIR --treebank dev.conllu   # the real model's attention

With ``--model`` the real model runs over ``--treebank`` through probing's engine, and the script
times, per repeat, the forward passes (attention returned), the pooling to words, and decoding the
real word attention (``max`` and ``mst``, both directions, every layer and head; ``mst`` rooted at the
gold root) and the whole TreeCounts update that ``probing trees`` makes per batch.

Wall time depends on what else the machine runs; the process CPU time
printed beside it does less so (with one thread it is the work itself).
The target is the model's own forward pass over the same sentences (about
4 s for all-MiniLM-L6-v2 on en_ewt dev on a 2-core CPU).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from probing.trees.decode import max_heads, mst_heads

MAX_BATCH = 32
MAX_CELLS = 1 << 16


def treebank_lengths(path: str) -> list[int]:
    from probing.treebank import read_treebank

    return [len(sentence) for sentence in read_treebank(path)]


def en_ewt_dev_like_lengths(count: int = 2001, seed: int = 0) -> list[int]:
    """A gamma draw with en_ewt dev's mean and spread (mean 12.6, sd 9.3), clipped to 1..75."""
    rng = np.random.default_rng(seed)
    mean, sd = 12.57, 9.3
    shape = (mean / sd) ** 2
    draws = rng.gamma(shape, mean / shape, size=count)
    return [int(x) for x in np.clip(np.rint(draws), 1, 75)]


def batches(lengths: list[int]) -> list[list[int]]:
    groups, group = [], []
    for length in sorted(lengths):
        if group and (len(group) == MAX_BATCH or (len(group) + 1) * length**2 > MAX_CELLS):
            groups.append(group)
            group = []
        group.append(length)
    return groups + [group] if group else groups


def random_word_attention(lengths: list[int], layers: int, heads: int, generator) -> torch.Tensor:
    """float32 [batch, layer, head, word, word]: softmax rows scaled by 0.3..1 (the rest went to specials)."""
    batch, words = len(lengths), max(lengths)
    logits = 3 * torch.randn(batch, layers, heads, words, words, generator=generator)
    padding = torch.arange(words)[None, :] >= torch.tensor(lengths)[:, None]  # [batch, word]
    logits.masked_fill_(padding[:, None, None, None, :], float("-inf"))
    share = 0.3 + 0.7 * torch.rand(batch, layers, heads, words, 1, generator=generator)
    attention = torch.softmax(logits, dim=-1) * share
    return attention.masked_fill(padding[:, None, None, :, None], 0.0)


def real_model(args) -> None:
    """Forward pass vs. decoding the real attention of ``--model`` over ``--treebank``."""
    from probing.analyses.trees import TreesAccumulator
    from probing.engine import Accumulator, run_pass
    from probing.inputs import InputSource
    from probing.models import load_model
    from probing.trees.counts import single_root

    class Timer(Accumulator):
        analysis = "timer"

        def __init__(self):
            super().__init__()
            self.seconds = {"pooling": 0.0, "max": 0.0, "mst": 0.0, "TreeCounts update": 0.0}
            self.counts = None

        def update(self, view):
            batch = view.batch
            begin = time.perf_counter()
            attention = view.word_attention  # cached: pooled once here
            self.seconds["pooling"] += time.perf_counter() - begin
            scores = torch.stack([attention, attention.transpose(-1, -2)], dim=1)
            roots = [single_root(s) for s in batch.sentences]
            roots = torch.tensor([root if isinstance(root, int) else 0 for root in roots])
            begin = time.perf_counter()
            max_heads(scores, batch.num_words)
            self.seconds["max"] += time.perf_counter() - begin
            begin = time.perf_counter()
            mst_heads(scores, roots, batch.num_words)
            self.seconds["mst"] += time.perf_counter() - begin
            begin = time.perf_counter()
            self.counts.add(attention, batch.sentences, batch.num_words)
            self.seconds["TreeCounts update"] += time.perf_counter() - begin

    loaded = load_model(args.model, device=args.device)
    source = InputSource.treebank(args.treebank)
    for repeat in range(args.repeats):
        timer = Timer()
        timer.counts = TreesAccumulator(loaded.num_layers, loaded.num_heads)
        begin = time.perf_counter()
        stats = run_pass(loaded, source, [timer])
        total = time.perf_counter() - begin
        parts = ", ".join(f"{name} {value:.2f} s" for name, value in timer.seconds.items())
        print(f"repeat {repeat + 1}: {stats.units_used} sentences in {stats.batches} batches; forward "
              f"{stats.seconds_model:.2f} s, {parts}; whole pass {total:.2f} s; decoding (max + mst) / forward = "
              f"{(timer.seconds['max'] + timer.seconds['mst']) / stats.seconds_model:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--treebank", help="take sentence lengths from this CoNLL-U file")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own choice)")
    parser.add_argument("--model", help="time the real model's attention over --treebank instead of random attention")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.model:
        if not args.treebank:
            parser.error("--model needs --treebank")
        real_model(args)
        return

    lengths = treebank_lengths(args.treebank) if args.treebank else en_ewt_dev_like_lengths()
    generator = torch.Generator().manual_seed(0)
    inputs = []
    for group in batches(lengths):
        attention = random_word_attention(group, args.layers, args.heads, generator).to(args.device)
        roots = [int(torch.randint(0, n, (1,), generator=generator)) for n in group]
        inputs.append((attention, torch.tensor(group, device=args.device), torch.tensor(roots, device=args.device)))
    print(
        f"{len(lengths)} sentences ({sum(lengths)} words, {sum(n * n for n in lengths)} word pairs, "
        f"longest {max(lengths)}) in {len(inputs)} batches; "
        f"{args.layers} layers x {args.heads} heads x 2 directions; device {args.device}; "
        f"torch threads {torch.get_num_threads()}"
    )
    for repeat in range(args.repeats):
        seconds = {"max": 0.0, "mst": 0.0}
        cpu = {"max": 0.0, "mst": 0.0}
        for attention, num_words, root in inputs:
            # [batch, layer, head, direction, dep, head]: dep_to_head is W, head_to_dep its transpose
            scores = torch.stack([attention, attention.transpose(-1, -2)], dim=3)
            for name, decode in (("max", lambda: max_heads(scores, num_words)), ("mst", lambda: mst_heads(scores, root, num_words))):
                if args.device != "cpu":
                    torch.cuda.synchronize()
                begin, begin_cpu = time.perf_counter(), time.process_time()
                decode()
                if args.device != "cpu":
                    torch.cuda.synchronize()
                seconds[name] += time.perf_counter() - begin
                cpu[name] += time.process_time() - begin_cpu
        print(
            f"repeat {repeat + 1}: wall max {seconds['max']:.2f} s, mst {seconds['mst']:.2f} s, "
            f"both {sum(seconds.values()):.2f} s (process CPU {sum(cpu.values()):.2f} s)"
        )


if __name__ == "__main__":
    main()
