"""An independent check of ``probing trees``: every head's MST (and MAX) UAS, computed from scratch.

Nothing of probing's scoring path is used to make the reference numbers:

- sentences are read with the ``conllu`` package (integer ids only; a sentence without exactly one root
  word is skipped), and a word is scored unless it is the gold root or its UPOS is PUNCT;
- the model runs through plain ``transformers`` (``AutoModel``, eager attention, ``output_attentions``),
  one sentence at a time, words given pre-split to the fast tokenizer;
- word attention is built by this script's own matrices: ``W = F A T``, where ``T`` [token, word] sums a
  word's pieces' columns and ``F`` [word, token] averages its pieces' rows (special tokens belong to no word);
- each layer, head and direction is decoded by this script's own recursive Chu-Liu-Edmonds on float64
  scores (``W[d, h]`` for dep_to_head, ``W[h, d]`` for head_to_dep), rooted at the gold root, and by argmax
  (diagonal 0, ties to the lowest index).

The counts are compared with those of ``probing trees`` on the same file: a result JSON of an in-sample run
on it (``--result``), or, without one, the same accumulator run through probing's engine here. The script
prints how many [direction, layer, head] cells are equal, and for each differing cell the two counts; then,
for each differing cell, it finds the sentences whose two trees differ and scores both trees under both
word attentions (this script's float64 one and probing's float32 one): when the two trees' scores are equal to
rounding, both are maximum spanning trees and the difference is a tie broken differently.

    python benchmarks/trees_reference_check.py --model MODEL_DIR --treebank en_ewt-ud-dev.conllu
    python benchmarks/trees_reference_check.py --model MODEL_DIR --treebank dev.conllu --result dev-trees.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

DIRECTIONS = ("dep_to_head", "head_to_dep")


# ---------------------------------------------------------------------------- reading


def read_sentences(path: str, limit: int | None = None) -> list[dict]:
    """Every sentence: words, gold heads (0-based, -1 for the root) and UPOS; integer ids only."""
    import conllu

    sentences = []
    with open(path, encoding="utf-8") as stream:
        for index, tokens in enumerate(conllu.parse_incr(stream)):
            if limit is not None and index >= limit:
                break
            words = [token for token in tokens if isinstance(token["id"], int)]
            sentences.append({
                "index": index,
                "words": [token["form"] for token in words],
                "heads": [int(token["head"]) - 1 for token in words],
                "upos": [token["upos"] for token in words],
            })
    return sentences


# ---------------------------------------------------------------------------- word attention


def word_attention(model, tokenizer, words: list[str]) -> tuple[np.ndarray, int] | None:
    """float64 [layer, head, word, word] of one sentence, and how many words had to become the unknown token."""
    encoded = tokenizer(words, is_split_into_words=True, return_tensors="pt")
    word_ids = encoded.word_ids()
    missing = [w for w in range(len(words)) if w not in word_ids]
    if missing:  # a word with no piece is given as the unknown token, as the project's contract says
        words = [tokenizer.unk_token if w in missing else word for w, word in enumerate(words)]
        encoded = tokenizer(words, is_split_into_words=True, return_tensors="pt")
        word_ids = encoded.word_ids()
    if encoded["input_ids"].shape[1] > tokenizer.model_max_length:
        return None
    with torch.no_grad():
        output = model(**encoded, output_attentions=True)
    attention = torch.stack(output.attentions, dim=1)[0].double().numpy()  # [layer, head, token, token]
    tokens, n = len(word_ids), len(words)
    to_words = np.zeros((tokens, n))  # T: sums the columns of a word's pieces
    for token, word in enumerate(word_ids):
        if word is not None:
            to_words[token, word] = 1.0
    from_words = (to_words / to_words.sum(axis=0, keepdims=True)).T  # F: averages the rows of a word's pieces
    return from_words @ attention @ to_words, len(missing)


# ---------------------------------------------------------------------------- decoding


def chu_liu_edmonds(scores: np.ndarray, root: int) -> list[int]:
    """Heads of the maximum spanning arborescence of ``scores[d, h]`` rooted at ``root`` (its head -1)."""
    matrix = np.array(scores, dtype=np.float64)
    np.fill_diagonal(matrix, -np.inf)
    matrix[root, :] = -np.inf
    return _contract(matrix, root)


def _contract(matrix: np.ndarray, root: int) -> list[int]:
    n = len(matrix)
    heads = matrix.argmax(axis=1).tolist()  # each word's best head (lowest index on ties)
    heads[root] = -1
    cycle = _find_cycle(heads, root)
    if cycle is None:
        return heads
    inside = set(cycle)
    rest = [v for v in range(n) if v not in inside]
    position = {v: i for i, v in enumerate(rest)}
    node = len(rest)  # the contracted cycle
    smaller = np.full((node + 1, node + 1), -np.inf)
    smaller[:node, :node] = matrix[np.ix_(rest, rest)]
    leaving = matrix[np.ix_(rest, cycle)]  # a cycle word heads a word outside
    smaller[:node, node] = leaving.max(axis=1)
    leaving_from = leaving.argmax(axis=1)
    kept = np.array([matrix[d, heads[d]] for d in cycle])
    entering = matrix[np.ix_(cycle, rest)] - kept[:, None]  # a word outside heads a cycle word, which drops its edge
    smaller[node, :node] = entering.max(axis=0)
    entering_at = entering.argmax(axis=0)
    np.fill_diagonal(smaller, -np.inf)
    inner = _contract(smaller, position[root])
    result = list(heads)
    for d in rest:
        h = inner[position[d]]
        result[d] = -1 if h == -1 else (cycle[leaving_from[position[d]]] if h == node else rest[h])
    h = inner[node]
    result[cycle[entering_at[h]]] = rest[h]
    return result


def _find_cycle(heads: list[int], root: int) -> list[int] | None:
    """A cycle of the head pointers, or None; each word is walked from at most once."""
    state = [0] * len(heads)  # 0 unseen, 1 on the current walk, 2 done
    for start in range(len(heads)):
        path, v = [], start
        while v != -1 and state[v] == 0:
            state[v] = 1
            path.append(v)
            v = heads[v]
        if v != -1 and state[v] == 1:
            return path[path.index(v):]
        for w in path:
            state[w] = 2
    return None


def argmax_heads(scores: np.ndarray) -> list[int]:
    matrix = np.array(scores, dtype=np.float64)
    np.fill_diagonal(matrix, 0.0)
    return [int(np.argmax(row)) for row in matrix]


# ---------------------------------------------------------------------------- the check


def reference_counts(model_dir: str, treebank: str, limit: int | None) -> dict:
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    layers, heads_per_layer = model.config.num_hidden_layers, model.config.num_attention_heads
    mst = np.zeros((2, layers, heads_per_layer), dtype=np.int64)
    arg = np.zeros_like(mst)
    words_scored = sentences_scored = skipped = too_long = unk = 0
    seconds = {"model": 0.0, "decoding": 0.0}
    for sentence in read_sentences(treebank, limit):
        gold = sentence["heads"]
        roots = [w for w, h in enumerate(gold) if h == -1]
        if len(roots) != 1:
            skipped += 1
            continue
        started = time.perf_counter()
        pooled = word_attention(model, tokenizer, sentence["words"])
        seconds["model"] += time.perf_counter() - started
        if pooled is None:
            too_long += 1
            continue
        attention, substituted = pooled
        unk += substituted
        scored = [w for w, (h, upos) in enumerate(zip(gold, sentence["upos"])) if h != -1 and upos != "PUNCT"]
        sentences_scored += 1
        words_scored += len(scored)
        started = time.perf_counter()
        for r, direction in enumerate(DIRECTIONS):
            for layer in range(layers):
                for head in range(heads_per_layer):
                    W = attention[layer, head]
                    scores = W if direction == "dep_to_head" else W.T
                    tree = chu_liu_edmonds(scores, roots[0])
                    best = argmax_heads(scores)
                    mst[r, layer, head] += sum(tree[w] == gold[w] for w in scored)
                    arg[r, layer, head] += sum(best[w] == gold[w] for w in scored)
        seconds["decoding"] += time.perf_counter() - started
    return {"mst": mst, "max": arg, "words": words_scored, "sentences": sentences_scored, "skipped": skipped,
            "too_long": too_long, "unk": unk, "seconds": seconds}


def probing_counts(model_dir: str, treebank: str, limit: int | None, result: str | None) -> dict:
    """The counts of ``probing trees``: from a result file, or the same accumulator run here."""
    if result:
        data = json.loads(Path(result).read_text(encoding="utf-8"))
        block = data["trees"]
    else:
        from probing.analyses.trees.accumulator import TreesAccumulator
        from probing.data.inputs import InputSource
        from probing.engine.passes import run_pass
        from probing.model.loading import load_model

        loaded = load_model(model_dir)
        counts = TreesAccumulator(loaded.num_layers, loaded.num_heads)
        started = time.perf_counter()
        run_pass(loaded, InputSource.treebank(treebank, limit=limit), [counts])
        print(f"probing's pass (engine, TreeCounts): {time.perf_counter() - started:.1f} s")
        block = counts.result()["trees"]
    grids = {decoding: np.stack([np.asarray(block["decodings"][decoding]["uas"][d]) for d in DIRECTIONS])
             for decoding in ("max", "mst")}
    return {**grids, "words": block["words"], "sentences": block["sentences"]["scored"]}


def explain(model_dir: str, treebank: str, limit: int | None, cells: list[tuple[int, int, int]]) -> None:
    """For each differing cell: the sentences whose reference and probing trees differ, and both trees' scores."""
    from transformers import AutoModel, AutoTokenizer

    from probing.analyses.trees.decode import mst_heads
    from probing.data.inputs import InputSource
    from probing.engine.accumulator import Accumulator
    from probing.engine.passes import run_pass
    from probing.model.loading import load_model

    heads_of = sorted({(layer, head) for _, layer, head in cells})

    class Recorder(Accumulator):
        analysis = "recorder"

        def __init__(self):
            super().__init__()
            self.attention = {}

        def update(self, view):
            for row, unit in enumerate(view.batch.units):
                n = int(view.batch.num_words[row])
                self.attention[unit.index] = {cell: view.word_attention[row, cell[0], cell[1], :n, :n].clone()
                                              for cell in heads_of}

    recorder = Recorder()
    run_pass(load_model(model_dir), InputSource.treebank(treebank, limit=limit), [recorder])
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    for r, layer, head in cells:
        found = []
        for sentence in read_sentences(treebank, limit):
            roots = [w for w, h in enumerate(sentence["heads"]) if h == -1]
            pooled = word_attention(model, tokenizer, sentence["words"])
            if len(roots) != 1 or pooled is None:
                continue
            mine = pooled[0][layer, head]
            theirs = recorder.attention[sentence["index"]][(layer, head)]
            if r == 1:
                mine, theirs = mine.T, theirs.T
            tree = chu_liu_edmonds(mine, roots[0])
            other = mst_heads(theirs.contiguous(), roots[0], len(tree)).tolist()
            if tree != other:
                def score(matrix, heads):
                    return sum(float(matrix[d, h]) for d, h in enumerate(heads) if h >= 0)
                theirs64 = theirs.double().numpy()
                found.append((sentence["index"], score(mine, tree) - score(mine, other),
                              score(theirs64, tree) - score(theirs64, other)))
        print(f"  {DIRECTIONS[r]} {layer + 1}-{head + 1}: {len(found)} sentences with different trees")
        for index, gap_mine, gap_theirs in found:
            print(f"    sentence {index}: reference tree minus probing tree, scored by this script's float64 "
                  f"attention {gap_mine:+.2e}, by probing's float32 attention {gap_theirs:+.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a local checkpoint folder")
    parser.add_argument("--treebank", required=True, help="a CoNLL-U file")
    parser.add_argument("--result", help="a probing trees result JSON made in-sample on --treebank")
    parser.add_argument("--limit", type=int, help="only the first N sentences")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--explain", action="store_true",
                        help="for each differing cell, find the sentences whose trees differ and score both trees")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    started = time.perf_counter()
    reference = reference_counts(args.model, args.treebank, args.limit)
    print(f"reference: {reference['sentences']} sentences, {reference['words']} scored words, "
          f"{reference['skipped']} skipped (not one root), {reference['too_long']} too long, {reference['unk']} words "
          f"given as the unknown token; model {reference['seconds']['model']:.1f} s, decoding "
          f"{reference['seconds']['decoding']:.1f} s, total {time.perf_counter() - started:.1f} s")
    theirs = probing_counts(args.model, args.treebank, args.limit, args.result)
    print(f"probing trees: {theirs['sentences']} sentences, {theirs['words']} scored words")
    for decoding in ("mst", "max"):
        mine, other = reference[decoding], theirs[decoding]
        differing = np.argwhere(mine != other)
        print(f"{decoding.upper()} UAS: {mine.size - len(differing)} of {mine.size} [direction, layer, head] cells "
              f"equal; largest difference {int(np.abs(mine - other).max())} words of {reference['words']}")
        for r, layer, head in differing:
            print(f"  {DIRECTIONS[r]} {layer + 1}-{head + 1}: reference {mine[r, layer, head]}, "
                  f"probing {other[r, layer, head]}")
        if len(differing) and args.explain:
            explain(args.model, args.treebank, args.limit, [tuple(int(x) for x in cell) for cell in differing])


if __name__ == "__main__":
    main()
