"""Several processes (torchrun, gloo on CPU) give exactly the counts of one process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import counts_of

from probing.cli import main
from probing.engine.distributed import Ranks, from_environment
from probing.errors import ProbingError
from probing.testing import sample_path, tiny_bert

OPTIONS = ("--treebank", str(sample_path()), "--batch-size", "4", "--bootstrap", "25",
           "--relations", "det", "all", "nsubj", "poss")


def test_batches_are_dealt_round_robin():
    shares = [[n for n in range(10) if Ranks(rank=r, world_size=3).owns(n)] for r in range(3)]
    assert shares == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]
    assert sorted(sum(shares, [])) == list(range(10))


def test_no_torchrun_environment_means_one_process(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    ranks = from_environment("cpu")
    assert (ranks.rank, ranks.world_size, ranks.is_main, ranks.active) == (0, 1, True, False)
    assert all(ranks.owns(n) for n in range(5))


def test_malformed_environment_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(ProbingError, match="WORLD_SIZE"):
        from_environment("cpu")


@pytest.mark.slow
def test_two_processes_equal_one(tmp_path, capsys):
    single = tmp_path / "single.json"
    assert main(["score", "--quiet", "--model", tiny_bert(), *OPTIONS, "--output", str(single)]) == 0
    capsys.readouterr()
    double = tmp_path / "double.json"
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
               "-m", "probing", "score", "--quiet", "--model", tiny_bert(), *OPTIONS, "--output", str(double)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert finished.returncode == 0, finished.stderr[-3000:]
    # rank 0 alone prints the table and writes the file
    assert finished.stdout.count(" on the sample treebank (sample.conllu): ") == 1  # the run's header line
    assert finished.stderr.count("wrote ") == 1
    one, two = json.loads(single.read_text()), json.loads(double.read_text())
    assert counts_of(two) == counts_of(one)
    assert two["treebank"]["sentences_scored"] == 75
    assert not (tmp_path / "double.json.checkpoint").exists()


@pytest.mark.slow
def test_two_processes_resume_a_one_process_checkpoint(tmp_path, capsys):
    """A checkpoint holds the counts of all processes so far: any number of processes may resume it."""
    from probing.analyses.probe.api import run_probe
    from probing.analyses.probe.config import ScoreConfig
    from probing.engine.checkpointing import Checkpointer, load

    class Crash(Exception):
        pass

    class Crashing(Checkpointer):
        def chunk_done(self, run, chunk):
            super().chunk_done(run, chunk)
            raise Crash  # after the first chunk (64 sentences), saved

    single = tmp_path / "single.json"
    assert main(["score", "--quiet", "--model", tiny_bert(), *OPTIONS, "--output", str(single)]) == 0
    capsys.readouterr()
    output = tmp_path / "double.json"
    checkpoint = tmp_path / "double.json.checkpoint"
    config = ScoreConfig.from_fields(model=tiny_bert(), treebank=str(sample_path()), batch_size=4, bootstrap=25,
                         relations=("det", "all", "nsubj", "poss"))
    with pytest.raises(Crash):
        run_probe(config, hooks=Crashing(checkpoint, every=0))
    assert load(checkpoint)["passes"]["0"]["consumed"] == 64
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
               "-m", "probing", "score", "--quiet", "--model", tiny_bert(), *OPTIONS, "--output", str(output),
               "--resume", "--checkpoint-every", "0"]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "resuming from" in finished.stderr and "after 64 units" in finished.stderr
    assert counts_of(json.loads(output.read_text())) == counts_of(json.loads(single.read_text()))
    assert not checkpoint.exists()


TORCHRUN_CRASH = """
import sys
from probing.analyses.probe.api import run_probe
from probing.analyses.probe.config import ScoreConfig
from probing.engine.checkpointing import Checkpointer
from probing.engine.distributed import from_environment


class Crashing(Checkpointer):
    def chunk_done(self, run, chunk):
        super().chunk_done(run, chunk)
        sys.exit(3)  # after the first chunk (64 sentences), saved by rank 0 with both processes' counts


config = ScoreConfig.from_fields(model=sys.argv[1], treebank=sys.argv[2], batch_size=4, bootstrap=25,
                     relations=("det", "all", "nsubj", "poss"))
run_probe(config, hooks=Crashing(sys.argv[3], every=0, ranks=from_environment("cpu")))
"""


@pytest.mark.slow
def test_one_process_resumes_a_two_process_checkpoint_to_the_same_input_statistics(tmp_path, capsys):
    """The other way round: two processes save after a chunk, and the file holds both processes' batches in its
    statistics as in its counts, so the resumed result's input block (units and words used) is an uninterrupted
    run's, not one with rank 1's share of the first chunk missing."""
    from probing.engine.checkpointing import load

    single, output = tmp_path / "single.json", tmp_path / "resumed.json"
    checkpoint = tmp_path / "resumed.json.checkpoint"
    assert main(["score", "--quiet", "--model", tiny_bert(), *OPTIONS, "--output", str(single)]) == 0
    script = tmp_path / "crash.py"
    script.write_text(TORCHRUN_CRASH)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(script),
               tiny_bert(), str(sample_path()), str(checkpoint)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert finished.returncode != 0 and checkpoint.is_file(), finished.stderr[-3000:]
    saved = load(checkpoint)["passes"]["0"]
    assert (saved["consumed"], saved["stats"]["units_used"], saved["stats"]["batches"]) == (64, 64, 16)
    capsys.readouterr()
    assert main(["score", "--quiet", "--model", tiny_bert(), *OPTIONS, "--output", str(output), "--resume"]) == 0
    resumed, whole = json.loads(output.read_text()), json.loads(single.read_text())
    assert counts_of(resumed) == counts_of(whole) and resumed["input"] == whole["input"]
