"""The committed leaderboards are reproducible: scoring again gives every count of their result files.

Each committed result records the options it was made with (bootstrap replicates, seed, random
init, treebank); the same command now must give identical per-head and per-offset counts,
identical bootstrap replicate counts and the same held-out choices. all-MiniLM-L6-v2 is checked
here for every kind of result (the probe on both treebanks and inits; norms, trees, coreference and the
no-op test), about a minute per file on two cores; the larger checkpoints go through the same code and
are not rerun by the tests (``bash leaderboards/make.sh`` rescores them all). Counts are exact, save the
near-ties of the norms reading (NEAR_TIES); floats agree to the bound FLOAT_TOLERANCE states.
"""

from __future__ import annotations

import json

import pytest
from conftest import REPO, real_model, real_treebank

from probing.cli import main
from probing.results.schema.arrays import decode_array
from probing.results.schema.validation import validate

pytestmark = pytest.mark.real_data

COMMITTED = REPO / "leaderboards"


def counts(result: dict) -> dict:
    """What must not change: every count, the bootstrap replicates, and what was chosen on dev."""
    arrays = {name: decode_array(encoded).tolist() for name, encoded in result["state"].items()}
    heldout = {name: {"dev": entry["dev"], "heldout": entry["heldout"]}
               for name, entry in result["heldout"]["relations"].items()}
    treebank = {key: result["treebank"][key] for key in ("sha256", "sentences_total", "sentences_scored",
                                                            "words_scored", "skipped", "unk_substituted_words")}
    return {"relations": result["relations"], "bootstrap": arrays, "heldout": heldout, "treebank": treebank}


@pytest.mark.parametrize("treebank", ["en_ewt", "en_gum"])
@pytest.mark.parametrize("random_init", [False, True], ids=["trained", "random-init"])
@pytest.mark.slow
def test_minilm_results_come_out_the_same(treebank, random_init, tmp_path, capsys):
    name = "all-MiniLM-L6-v2" + ("-random-init" if random_init else "")
    committed = validate(json.loads((COMMITTED / treebank / "results" / f"{name}.json").read_text()))
    for split in ("dev", "test"):
        real_treebank(treebank, split)  # skip (with the reason) when the treebank is not available
    boot = committed["bootstrap"]
    output = tmp_path / "again.json"
    argv = ["score", "--quiet", "--model", real_model("minilm"), "--treebank", treebank,
            "--bootstrap", str(boot["replicates"]), "--seed", str(boot["seed"]), "--output", str(output)]
    assert main(argv + (["--random-init"] if random_init else [])) == 0
    capsys.readouterr()
    again = json.loads(output.read_text())
    assert counts(again) == counts(committed)


VARIES = ("tool", "environment", "timing", "created")
"""The blocks that say when, where and how fast a result was made: all that may differ in a rerun."""

VARYING_FIELDS = ("created", "seconds", "name_or_path", "path", "chosen_from", "digest", "parameters_sha256",
                  "attention_path")
"""Fields anywhere in a result that name the machine's paths, the time, or a hash of trained float weights; and
``model.attention_path`` (fused or eager), which results gained after the committed ones were made and which
says how the weights were computed, not what they are (both paths agree to float error, tests/test_layers.py)."""

ADDED_SINCE = ("options",)
"""Fields that results gained after the committed ones were made: ``config.options``, every option that can change
a number as the command line gave it (a record of how the numbers were made, not a number). Compared where both
results hold one; a committed result without it is not redone for it."""

FLOAT_TOLERANCE = 2e-6
"""The committed files were made on two threads and the tests run on one: float32 attention summed in another
order differs in its last bits, so a float may differ by 2e-6 (one in the last of the 6 decimals that shares
are rounded to) or by one part in 100,000 of a running sum (measured: up to 1.1e-6)."""


def made_again(result: dict) -> dict:
    """A result without the blocks that vary between runs."""
    return {key: value for key, value in result.items() if key not in VARIES}


def differences(a, b, path: str = "") -> list[str]:
    """The paths at which two results differ: integers and strings exactly, floats within FLOAT_TOLERANCE,
    encoded arrays decoded (so a difference is named by its index), VARYING_FIELDS not at all."""
    if isinstance(a, dict) and isinstance(b, dict):
        if {"dtype", "data", "shape"} <= set(a) and {"dtype", "data", "shape"} <= set(b):
            return differences(decode_array(a).tolist(), decode_array(b).tolist(), path)
        return [found for key in sorted(set(a) | set(b), key=str) if key not in VARYING_FIELDS
                and not (key in ADDED_SINCE and (key not in a or key not in b))
                for found in differences(a.get(key), b.get(key), f"{path}.{key}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [found for index, (x, y) in enumerate(zip(a, b)) for found in differences(x, y, f"{path}[{index}]")]
    if isinstance(a, float) and isinstance(b, float):
        return [] if abs(a - b) <= max(FLOAT_TOLERANCE, 1e-5 * abs(b)) else [f"{path}: {a} != {b}"]
    return [] if a == b else [f"{path}: {str(a)[:80]} != {str(b)[:80]}"]


def _rerun(kind: str, treebank: str, tmp_path) -> list[str]:
    """The command line leaderboards/make.sh runs for ``kind`` (its replicates: 500, and 100 for the no-op test;
    seed 0); a file made otherwise differs in its config, which the comparison includes."""
    replicates, seed = ("100" if kind == "noop" else "500"), "0"
    model = real_model("minilm")
    output = str(tmp_path / "again.json")
    common = ["--model", model, "--bootstrap", replicates, "--seed", seed]
    if kind == "norms":
        return ["score", *common, "--treebank", treebank, "--attention", "norms", "--output", output]
    if kind == "trees":
        return ["trees", *common, "--treebank", treebank, "--drop-probe-weights", "--output", output]
    if kind == "coref":
        return ["coref", *common, "--treebank", treebank, "--window", "512", "--output", output]
    probe = str(COMMITTED / treebank / "results" / "all-MiniLM-L6-v2.json")
    return ["explore", *common, "--treebank", f"{treebank}:test", "--result", probe,
            "--save-results", str(tmp_path), "--output", str(tmp_path / "page.html")]


NEAR_TIES = {"norms": 1}
"""Kinds whose counts may differ on a few heads, where a word's attention to two words is within float error
of a tie (docs/results.md): value-vector norms are sums of float32 products, and on another thread count a
near-tie goes the other way. At most this many heads may then differ, in their counts and replicates only."""


@pytest.mark.parametrize("kind, treebank", [("norms", "en_ewt"), ("trees", "en_ewt"), ("coref", "en_gum"),
                                            ("noop", "en_ewt")])
@pytest.mark.slow
def test_every_kind_of_minilm_result_comes_out_the_same(kind, treebank, tmp_path, capsys):
    committed = validate(json.loads((COMMITTED / treebank / "results" / f"all-MiniLM-L6-v2-{kind}.json").read_text()))
    for split in ("dev", "test"):
        real_treebank(treebank, split)
    assert main([*_rerun(kind, treebank, tmp_path), "--quiet"]) == 0
    capsys.readouterr()
    again = json.loads((tmp_path / ("noop.json" if kind == "noop" else "again.json")).read_text())
    found = differences(made_again(again), made_again(committed))
    heads = {_head_of(line) for line in found}
    assert None not in heads and len(heads) <= NEAR_TIES.get(kind, 0), found[:10]


def _head_of(line: str) -> str | None:
    """The ``[layer][head]`` a differing count belongs to (None for anything but a count of one head)."""
    import re

    path, _, values = line.partition(": ")
    left, _, right = values.partition(" != ")
    found = re.search(r"(\[\d+\]\[\d+\])$", path)
    if not (found and left.isdigit() and right.isdigit()):
        return None
    return found.group(1)
