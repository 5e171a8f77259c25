"""The input side with a near-zero model: what a fast accelerator would leave of a run's time.

The model is one BERT layer of 16 hidden units (two heads of 8) with a real
tokenizer (all-MiniLM-L6-v2's WordPiece), so its forward pass costs next to
nothing and what is measured is the rest: reading and validating the
treebank, tokenising, aligning, padding, pooling, counting. On en_ewt dev
four times over (8,004 sentences), with 0, 1 and 2 worker processes
(``--workers``), paired repeats (the runs of a repeat back to back):

- the input side alone: sentences per second of the pass's chunks made ready
  (probing.engine.feeding), nothing run on them;
- the whole run (``run_probe``, 1,000 bootstrap replicates) over the plain
  loop: split each sentence's words out of the file, tokenise them in batches
  of 32 and run the same model with its attentions returned, nothing else.

    python benchmarks/input_side.py [--repeats 3] [--treebank FILE] [--tokenizer FOLDER]

(en_ewt dev from ``$PROBING_TREEBANKS``, the tokenizer from ``$PROBING_MODELS``.)
The section "The input side in worker processes" of benchmarks/RESULTS.md
comes from it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

# One tokenizer thread for the plain loop and the run alike: a run with workers sets this for its forked
# workers, and once set it holds for the rest of the process, so leaving it unset would time the plain loop's
# first repeat one way and the others another. One thread is the plain loop's faster setting on this 2-core
# machine (1.0-1.1 s against 1.0-1.4 s with the tokenizer's own threads), the stricter comparison.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402

from probing.analyses.probe.api import run_probe  # noqa: E402
from probing.analyses.probe.config import ScoreConfig  # noqa: E402
from probing.data.inputs import InputSource  # noqa: E402
from probing.engine.feeding import ChunkPlan, prepared_chunks  # noqa: E402
from probing.model.loading import load_model  # noqa: E402

WORKERS = (0, 1, 2)
BATCH_SIZE = 32


def near_zero_model(tokenizer_folder: str, folder: Path) -> str:
    """One BERT layer of 16 hidden units with the given tokenizer, saved to ``folder``."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_folder)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=512, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def fourfold(treebank: Path, folder: Path) -> str:
    path = folder / "x4.conllu"
    text = treebank.read_text(encoding="utf-8")
    path.write_text((text.rstrip("\n") + "\n\n") * 4, encoding="utf-8")
    return str(path)


def split_words(path: str) -> list[list[str]]:
    """Each sentence's word forms, straight from the file (multiword ranges and empty nodes left out)."""
    sentences, words = [], []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            fields = line.rstrip("\n").split("\t")
            if len(fields) == 10 and fields[0].isdigit():
                words.append(fields[1])
            elif not line.strip() and words:
                sentences.append(words)
                words = []
    if words:
        sentences.append(words)
    return sentences


def plain_loop(loaded, path: str) -> float:
    """Split words, tokenise 32 sentences at a time, run the model with attentions returned."""
    started = time.perf_counter()
    sentences = split_words(path)
    with torch.inference_mode():
        for start in range(0, len(sentences), BATCH_SIZE):
            encoded = loaded.tokenizer(sentences[start : start + BATCH_SIZE], is_split_into_words=True, padding=True,
                                       truncation=True, return_tensors="pt")
            loaded.base(input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"],
                        output_attentions=True)
    return time.perf_counter() - started


def input_side(loaded, path: str, workers: int) -> tuple[float, int]:
    """Seconds to make every chunk of the pass ready, and the sentences in them."""
    started = time.perf_counter()
    plan = ChunkPlan(InputSource.treebank(path), BATCH_SIZE, loaded.max_length(), prepend=loaded.prepend_token_id)
    sentences = sum(len(chunk.units) for chunk in prepared_chunks(plan, loaded.tokenizer, workers=workers))
    return time.perf_counter() - started, sentences


def whole_run(loaded, path: str, workers: int) -> float:
    started = time.perf_counter()
    run_probe(ScoreConfig.from_fields(model=loaded.name_or_path, treebank=path, workers=workers), loaded=loaded)
    return time.perf_counter() - started


def _spin(_=None) -> float:
    started = time.perf_counter()
    total = 0
    for number in range(10_000_000):
        total += number
    return time.perf_counter() - started


def side_by_side() -> float:
    """How fast one CPU-bound Python process runs while another runs beside it, as a share of its speed alone:
    what two processes (a worker and the main one) can get out of this machine's cores together."""
    import multiprocessing

    alone = _spin()
    with multiprocessing.get_context("fork").Pool(2) as pool:
        together = pool.map(_spin, range(2))
    return alone / max(together)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--treebank", help="a CoNLL-U file (default: en_ewt dev from $PROBING_TREEBANKS)")
    parser.add_argument("--tokenizer", help="a checkpoint folder whose tokenizer to use (default: all-MiniLM-L6-v2 "
                                            "from $PROBING_MODELS)")
    args = parser.parse_args()
    treebank = Path(args.treebank or Path(os.environ["PROBING_TREEBANKS"]) / "en_ewt" / "en_ewt-ud-dev.conllu")
    tokenizer = args.tokenizer or str(Path(os.environ["PROBING_MODELS"]) / "all-MiniLM-L6-v2")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        loaded = load_model(near_zero_model(tokenizer, folder / "model"))
        path = fourfold(treebank, folder)
        whole_run(loaded, path, 0)  # warm-up: the first run reads the file into the page cache
        runs: dict[str, list[float]] = {}
        sentences = 0
        for repeat in range(args.repeats):
            runs.setdefault("plain", []).append(plain_loop(loaded, path))
            for workers in WORKERS:
                seconds, sentences = input_side(loaded, path, workers)
                runs.setdefault(f"input {workers}", []).append(seconds)
                runs.setdefault(f"whole {workers}", []).append(whole_run(loaded, path, workers))
            print(f"repeat {repeat + 1}/{args.repeats}: " + ", ".join(f"{name} {values[-1]:.2f} s"
                                                                      for name, values in runs.items()), file=sys.stderr)
    print(report(runs, sentences, args.repeats, side_by_side()))


def report(runs: dict[str, list[float]], sentences: int, repeats: int, share: float) -> str:
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    lines = [f"{sentences} sentences, {repeats} paired repeats, torch threads {torch.get_num_threads()}, "
             f"load average after {load}; two CPU-bound processes side by side each run at {share:.0%} of "
             "the speed of one alone", "",
             "| workers | input side alone | sentences/s | whole run | whole / plain loop |",
             "| --- | --- | --- | --- | --- |"]
    for workers in WORKERS:
        ratio = statistics.median(whole / plain for whole, plain in zip(runs[f"whole {workers}"], runs["plain"]))
        alone = statistics.median(runs[f"input {workers}"])
        lines.append(f"| {workers} | {alone:.2f} s | {sentences / alone:.0f} | "
                     f"{statistics.median(runs[f'whole {workers}']):.2f} s | {ratio:.2f} |")
    lines.append(f"\nplain loop: {statistics.median(runs['plain']):.2f} s (median)")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
