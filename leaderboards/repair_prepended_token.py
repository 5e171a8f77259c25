"""Run once: the committed BLiMP results and their parts get the ``model.prepended_token`` their run really used.

Until the fix in probing.analyses.pairs.api, a ``probing pairs`` result copied the sink token that attention passes
prepend (``<|im_start|>`` for SmolLM2-135M-Instruct, null for gemma-3-270m, whose tokenizer puts ``<bos>`` first
itself) into ``model.prepended_token``, whatever ``--context`` the run was scored after. The token the run did put
before every sentence is the one its context option resolved to, which each result recorded as
``pairs.context_token`` (null after ``--context none``). This script writes that token into the field and changes
nothing else: the field's text is replaced in place (the file must hold it once), the new text must parse to the
old result with only that field changed, each file is replaced atomically, and ``leaderboards/pieces.tsv`` gets
the new sha256 of every part it lists, as ``record_piece`` in leaderboards/make.sh records it (its command
unchanged: the part is what that command makes now). Running it again changes nothing.

    python3 leaderboards/repair_prepended_token.py
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from probing.atomic import write_text_atomic

BLIMP = Path("leaderboards/blimp")
PIECES = Path("leaderboards/pieces.tsv")
OPTIONS = ("bos", "eos", "none")
"""``--context`` values that name a rule rather than a token (probing.analyses.pairs.scoring.CONTEXTS)."""


def prepended(result: dict) -> str | None:
    """The token a minimal-pairs run put before every sentence: the one its ``--context`` resolved to.

    >>> prepended({"config": {"context": "none"}, "pairs": {"context_token": None}}) is None
    True
    >>> prepended({"config": {"context": "<|endoftext|>"}, "pairs": {"context_token": "<|endoftext|>"}})
    '<|endoftext|>'
    """
    context, token = result["config"]["context"], result["pairs"]["context_token"]
    if (context == "none") != (token is None) or (context not in OPTIONS and token != context):
        raise ValueError(f"--context {context} does not agree with the recorded context token {token!r}")
    return token


def repaired(text: str) -> str | None:
    """The file's text with the field rewritten, or None when it already says what was prepended."""
    result = json.loads(text)
    old, new = result["model"]["prepended_token"], prepended(result)
    if old == new:
        return None
    before, after = (f'"prepended_token": {json.dumps(value)}' for value in (old, new))
    if text.count(before) != 1:
        raise ValueError(f"{before} is not in the file exactly once")
    fixed = text.replace(before, after)
    result["model"]["prepended_token"] = new
    if json.loads(fixed) != result:
        raise ValueError("the rewritten text is not the result with only model.prepended_token changed")
    return fixed


def main() -> int:
    pieces = PIECES.read_text(encoding="utf-8").splitlines(keepends=True)
    changed = 0
    for path in sorted(BLIMP.glob("results/*.json")) + sorted(BLIMP.glob("parts/*/*.json")):
        fixed = repaired(path.read_text(encoding="utf-8"))
        if fixed is None:
            continue
        write_text_atomic(fixed, path)
        digest = hashlib.sha256(fixed.encode("utf-8")).hexdigest()
        for number, line in enumerate(pieces):
            output, _, command = line.split("\t", 2)
            if output == str(path):
                pieces[number] = f"{output}\t{digest}\t{command}"
        changed += 1
    write_text_atomic("".join(pieces), PIECES)
    print(f"{changed} files rewritten", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
