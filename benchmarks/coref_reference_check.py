"""An independent count of coreference mentions and baselines, compared with probing coref's.

Reads a CorefUD CoNLL-U file with nothing from probing: its own line reader,
its own Entity= bracket scanner, its own windows (the tokenizer called
directly through transformers), its own antecedents and baselines, each
written from the rules as docs/coref.md states them. It then counts, per
mention type (all, pronoun, proper, nominal): mentions in scored windows,
scored mentions, and the correct answers of the nearest, head-match and
rule-based baselines, plus windows and skipped sentences; and compares them
with probing's numbers for the same file and window:

- by default, probing's windows and scored mentions computed through its own
  modules (no model forward pass is needed for these counts);
- with ``--result FILE.json`` (a ``probing coref`` result), the counts the
  tool wrote, for the file and window that result names (and the model's
  tokenizer it records).

    python benchmarks/coref_reference_check.py --model MODEL_FOLDER --treebank en_gum-ud-dev.conllu --window 512
    python benchmarks/coref_reference_check.py --result minilm-coref.json

Exit status 0 when every count agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

TYPES = ("all", "pronoun", "proper", "nominal")
BASELINES = ("nearest", "head_match", "rule_based")


# ---------------------------------------------------------------------------- a plain reading


def read_documents(path: str) -> list[list[list[dict]]]:
    """Documents -> sentences -> words (dicts of form, upos, feats, head (0-based, -1 root), misc)."""
    documents: list[list[list[dict]]] = []
    sentence: list[dict] = []
    with open(path, encoding="utf-8") as stream:
        for raw in stream:
            line = raw.rstrip("\n").rstrip("\r")
            if line.startswith("# newdoc"):
                documents.append([])
                continue
            if line.startswith("#"):
                continue
            if not line.strip():
                if sentence:
                    if not documents:
                        documents.append([])
                    documents[-1].append(sentence)
                    sentence = []
                continue
            columns = line.split("\t")
            if not columns[0].isdigit():
                continue  # multiword tokens and empty nodes are not words
            sentence.append({"form": columns[1], "upos": columns[3], "feats": columns[5],
                             "head": int(columns[6]) - 1, "misc": columns[9]})
    if sentence:
        documents[-1].append(sentence)
    return [document for document in documents if document]


def brackets(value: str) -> list[tuple[str, str]]:
    """("open" | "one" | "close", EID) for each bracket, scanned left to right."""
    found, i = [], 0
    while i < len(value):
        if value[i] == "(":
            j = i + 1
            while j < len(value) and value[j] not in "()":
                j += 1
            eid = value[i + 1:j].split("-")[0]
            if j < len(value) and value[j] == ")":
                found.append(("one", eid))
                i = j + 1
            else:
                found.append(("open", eid))
                i = j
        else:
            j = value.index(")", i)
            found.append(("close", value[i:j]))
            i = j + 1
    return found


def mentions_of(document: list[list[dict]]) -> list[dict]:
    """Each mention: entity, start and end (sentence, word), head (sentence, word), text, head word's fields."""
    open_spans: dict[str, list[tuple[int, int]]] = {}
    spans = []
    for s, sentence in enumerate(document):
        for w, word in enumerate(sentence):
            items = [item[len("Entity="):] for item in word["misc"].split("|") if item.startswith("Entity=")]
            for kind, eid in brackets(items[0]) if items else []:
                if kind == "open":
                    open_spans.setdefault(eid, []).append((s, w))
                elif kind == "one":
                    spans.append((eid, (s, w), (s, w)))
                else:
                    spans.append((eid, open_spans[eid].pop(), (s, w)))
    assert not any(open_spans.values()), "a mention is left open"
    mentions = []
    for eid, start, end in spans:
        inside = [(s, w) for s in range(start[0], end[0] + 1) for w in range(len(document[s])) if start <= (s, w) <= end]
        head = next((s, w) for s, w in inside
                    if document[s][w]["head"] < 0 or not start <= (s, document[s][w]["head"]) <= end)
        word = document[head[0]][head[1]]
        kind = {"PRON": "pronoun", "PROPN": "proper"}.get(word["upos"], "nominal")
        mentions.append({"entity": eid, "head": head, "type": kind,
                         "text": " ".join(document[s][w]["form"] for s, w in inside).lower(),
                         "head_form": word["form"].lower(), "feats": word["feats"]})
    return mentions


def token_count(tokenizer, words: list[str]) -> int:
    """Pieces with the model's special tokens; a word that gives no piece counts as one unknown token."""
    encoded = tokenizer(words, is_split_into_words=True, add_special_tokens=True)
    pieces = len(encoded["input_ids"])
    owners = {owner for owner in encoded.word_ids() if owner is not None}
    return pieces + sum(1 for index in range(len(words)) if index not in owners)


def windows_of(document: list[list[dict]], length: int, tokenizer) -> tuple[list[list[int]], int]:
    """Sentence numbers of each window (greedy, whole sentences) and how many sentences fit in none."""
    windows, current, too_long = [], [], 0
    for number, sentence in enumerate(document):
        if token_count(tokenizer, [word["form"] for word in sentence]) > length:
            too_long += 1
            if current:
                windows.append(current)
            current = []
            continue
        candidate = current + [number]
        words = [word["form"] for n in candidate for word in document[n]]
        if current and token_count(tokenizer, words) > length:
            windows.append(current)
            candidate = [number]
        current = candidate
    if current:
        windows.append(current)
    return windows, too_long


def agree(first: str, second: str) -> bool:
    def parse(feats):
        return dict(item.split("=", 1) for item in feats.split("|")) if feats not in ("_", "") else {}

    a, b = parse(first), parse(second)
    return all(a[name] == b[name] for name in ("Number", "Gender", "Person") if name in a and name in b)


def plain_counts(path: str, length: int, tokenizer) -> dict:
    """Every count the check compares, by the plain reading."""
    counts = {"windows": 0, "too_long": 0, "mentions": Counter(), "scored": Counter(),
              **{baseline: Counter() for baseline in BASELINES}}
    for document in read_documents(path):
        mentions = mentions_of(document)
        windows, too_long = windows_of(document, length, tokenizer)
        counts["windows"] += len(windows)
        counts["too_long"] += too_long
        for window in windows:
            offsets, position = {}, 0
            for number in window:
                offsets[number] = position
                position += len(document[number])
            inside = [{**m, "at": offsets[m["head"][0]] + m["head"][1]} for m in mentions if m["head"][0] in offsets]
            for mention in inside:
                counts["mentions"]["all"] += 1
                counts["mentions"][mention["type"]] += 1
                earlier = [m for m in inside if m["at"] < mention["at"]]
                right = {m["at"] for m in earlier if m["entity"] == mention["entity"]}
                if not right:
                    continue
                nearest = max(m["at"] for m in earlier)
                same_head = [m["at"] for m in earlier if m["head_form"] == mention["head_form"]]
                head_match = max(same_head) if same_head else None
                rule = None
                for test in (lambda m, mention=mention: m["text"] == mention["text"],
                             lambda m, mention=mention: m["head_form"] == mention["head_form"],
                             lambda m, mention=mention: agree(m["feats"], mention["feats"]), lambda m: True):
                    passing = [m["at"] for m in earlier if test(m)]
                    if passing:
                        rule = max(passing)
                        break
                for kind in ("all", mention["type"]):
                    counts["scored"][kind] += 1
                    counts["nearest"][kind] += nearest in right
                    counts["head_match"][kind] += head_match in right
                    counts["rule_based"][kind] += rule in right
    return counts


# ---------------------------------------------------------------------------- probing's numbers


def tool_counts_from_modules(path: str, length: int, tokenizer) -> dict:
    from probing.analyses.coref.antecedents import scored_mentions
    from probing.data.treebank import read_treebank
    from probing.engine.batching import window_rule

    rule = window_rule(tokenizer, length)
    counts = {"windows": 0, "too_long": 0, "mentions": Counter(), "scored": Counter(),
              **{baseline: Counter() for baseline in BASELINES}}
    for window in rule.units(read_treebank(path), source=path):
        if rule.measure(window.words) > length:
            counts["too_long"] += 1
            continue
        counts["windows"] += 1
        for mention in window.mentions:
            counts["mentions"]["all"] += 1
            counts["mentions"][mention.type] += 1
        for scored in scored_mentions(window.mentions):
            for kind in ("all", scored.type):
                counts["scored"][kind] += 1
                for baseline, right in zip(BASELINES, scored.correct):
                    counts[baseline][kind] += right
    return counts


def tool_counts_from_result(result: dict) -> dict:
    coref = result["coref"]
    counts = {"windows": coref["windows"], "too_long": result["input"]["skipped"].get("too_long", 0),
              "mentions": Counter(coref["mentions"]), "scored": Counter(coref["scored"])}
    for baseline in BASELINES:
        counts[baseline] = Counter({kind: coref["baselines"][kind][baseline] for kind in TYPES})
    return counts


def compare(label: str, plain: dict, tool: dict) -> bool:
    rows = [("windows", plain["windows"], tool["windows"]), ("sentences too long", plain["too_long"], tool["too_long"])]
    for name in ("mentions", "scored", *BASELINES):
        for kind in TYPES:
            rows.append((f"{name} {kind}", plain[name][kind], tool[name][kind]))
    print(f"\n## {label}\n\n| count | plain reading | probing | same |\n| --- | ---: | ---: | --- |")
    for name, mine, theirs in rows:
        print(f"| {name} | {mine} | {theirs} | {'yes' if mine == theirs else 'NO'} |")
    for kind in TYPES:
        scored = plain["scored"][kind]
        if scored:
            rates = ", ".join(f"{baseline} {100 * plain[baseline][kind] / scored:.1f}%" for baseline in BASELINES)
            print(f"\n{kind}: {scored} scored mentions; {rates}", end="")
    print()
    return all(mine == theirs for _, mine, theirs in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--result", nargs="*", default=[], help="probing coref result files to check")
    parser.add_argument("--model", help="model folder whose tokenizer cuts the windows (without --result)")
    parser.add_argument("--treebank", nargs="*", default=[], help="CorefUD CoNLL-U files (without --result)")
    parser.add_argument("--window", type=int, default=None, help="window length in tokens (default: the model's)")
    args = parser.parse_args()
    from transformers import AutoTokenizer

    agreed = True
    for path in args.result:
        with open(path, encoding="utf-8") as stream:
            result = json.load(stream)
        tokenizer = AutoTokenizer.from_pretrained(result["model"]["name_or_path"])
        treebank, length = result["input"]["path"], result["coref"]["window"]
        if result["config"].get("limit") or (result["config"].get("shard") or None):
            print(f"{path}: a --limit or --shard run covers part of the file; the check needs a whole run")
            return 1
        agreed &= compare(f"{path} ({treebank}, window {length})", plain_counts(treebank, length, tokenizer),
                          tool_counts_from_result(result))
    if args.treebank:
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        length = args.window or tokenizer.model_max_length
        for treebank in args.treebank:
            agreed &= compare(f"{treebank} (window {length}, probing's modules)",
                              plain_counts(treebank, length, tokenizer), tool_counts_from_modules(treebank, length, tokenizer))
    print("\nall counts agree" if agreed else "\nSOME COUNTS DIFFER")
    return 0 if agreed else 1


if __name__ == "__main__":
    sys.exit(main())
