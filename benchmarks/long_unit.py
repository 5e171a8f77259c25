"""Peak memory of one long unit through ``probing surface`` and ``probing score``-style counting.

One line of the first WORDS words of en_ewt dev (about 2,000 SmolLM2 tokens
for 1,500 words) goes through ``probing surface --text`` in a fresh process;
its peak resident memory (the child's ``ru_maxrss``) and the result's numbers
are printed. Run it against two checkouts to compare them::

    python benchmarks/long_unit.py --model $PROBING_MODELS/SmolLM2-135M-Instruct
    python benchmarks/long_unit.py --model ... --code /path/to/other/checkout

The figures of benchmarks/RESULTS.md's section "One long unit" come from it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def long_line(treebank: Path, words: int) -> str:
    """The first ``words`` word forms of a CoNLL-U file, one line (multiword tokens' parts left out)."""
    forms: list[str] = []
    with treebank.open(encoding="utf-8") as lines:
        for line in lines:
            fields = line.rstrip("\n").split("\t")
            if len(fields) == 10 and fields[0].isdigit():
                forms.append(fields[1])
                if len(forms) == words:
                    break
    return " ".join(forms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--words", type=int, default=1500)
    parser.add_argument("--treebank", default=None, help="a CoNLL-U file (default: en_ewt dev from $PROBING_TREEBANKS)")
    parser.add_argument("--code", default=str(HERE.parent), help="the checkout whose probing runs (default: this one)")
    parser.add_argument("--analysis", default="surface")
    args = parser.parse_args()
    treebank = Path(args.treebank) if args.treebank else Path(os.environ["PROBING_TREEBANKS"]) / "en_ewt" / "en_ewt-ud-dev.conllu"
    with tempfile.TemporaryDirectory() as folder:
        text = Path(folder) / "long.txt"
        text.write_text(long_line(treebank, args.words) + "\n", encoding="utf-8")
        output = Path(folder) / "result.json"
        environment = {**os.environ, "PYTHONPATH": args.code}
        command = [sys.executable, "-m", "probing", args.analysis, "--model", args.model, "--text", str(text),
                   "--max-length", "4096", "--batch-size", "1", "--quiet", "--output", str(output)]
        started = time.perf_counter()
        subprocess.run(command, check=True, env=environment, cwd=args.code, stdout=subprocess.DEVNULL)
        seconds = time.perf_counter() - started
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        result = json.loads(output.read_text(encoding="utf-8"))
    surface = result.get("surface", {})
    print(json.dumps({
        "code": args.code, "words": args.words, "words_in_result": result["input"].get("words"),
        "attention_path": result["model"].get("attention_path", "returned (before layer-by-layer reading)"),
        "peak_resident_mib": round(peak_mib), "seconds": round(seconds, 1),
        "queries": surface.get("queries"), "units": surface.get("units"),
        "heads": surface.get("heads", {}).get("entropy"),
    }))


if __name__ == "__main__":
    main()
