"""The committed leaderboards are reproducible: scoring again gives every count of their result files.

Each committed result records the options it was made with (bootstrap replicates, seed, random
init, treebank); the same command now must give identical per-head and per-offset counts,
identical bootstrap replicate counts and the same held-out choices. all-MiniLM-L6-v2 is checked
here (about a minute per file on two cores); the larger checkpoints go through the same code and are
not rerun by the tests (``ONLY=probe bash leaderboards/make.sh`` rescores them all).
"""

from __future__ import annotations

import json
import pytest

from probing.cli import main
from probing.results.schema import decode_array, validate

from conftest import REPO, real_model, real_treebank

pytestmark = pytest.mark.real_data

COMMITTED = REPO / "leaderboards"


def counts(result: dict) -> dict:
    """What must not change: every count, the bootstrap replicates, and what was chosen on dev."""
    arrays = {name: decode_array(encoded).tolist() for name, encoded in result["bootstrap"]["arrays"].items()}
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
