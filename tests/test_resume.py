"""Checkpoints: a run killed with SIGKILL and resumed ends with the counts of an uninterrupted run."""

from __future__ import annotations

import json
import re

import pytest
import torch
from conftest import counts_of
from helpers import kill_once_checkpointed

from probing.analyses.probe.api import run_probe
from probing.analyses.probe.config import ScoreConfig
from probing.cli import main
from probing.engine import checkpointing
from probing.engine.checkpointing import Checkpointer
from probing.errors import ProbingError
from probing.testing import sample_path, tiny_bert

SLOW_OPTIONS = ("--limit", "640", "--batch-size", "4", "--bootstrap", "40", "--relations", "det", "all")
"""640 sentences in ten chunks of 64 (batch size x 16): long enough to be killed half-way."""


@pytest.fixture(scope="module")
def ewt_long():
    """A treebank long enough (640 sentences) to be killed half-way: en_ewt dev."""
    from conftest import real_treebank

    return str(real_treebank("en_ewt", "dev"))


class Crash(Exception):
    """Stands in for a fault after some chunks (the file is left as a kill would leave it)."""


class CrashingCheckpointer(Checkpointer):
    def __init__(self, *args, crash_after: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.crash_after = crash_after

    def chunk_done(self, run, chunk):
        super().chunk_done(run, chunk)
        if self._consumed >= self.crash_after:
            raise Crash


def crashed_checkpoint(path, crash_after: int = 20, **options) -> None:
    """Leave at ``path`` the checkpoint of the sample run, crashed after ``crash_after`` sentences."""
    config = ScoreConfig.from_fields(model=tiny_bert(), treebank=str(sample_path()), batch_size=1, bootstrap=10, **options)
    with pytest.raises(Crash):
        run_probe(config, hooks=CrashingCheckpointer(path, every=0, crash_after=crash_after))
    assert path.is_file()


def score(capsys, *args: str) -> int:
    code = main(["score", "--quiet", "--model", tiny_bert(), *args])
    capsys.readouterr()
    return code


@pytest.mark.real_data
@pytest.mark.slow
def test_sigkill_mid_way_then_resume_gives_identical_counts(tmp_path, capsys, ewt_long):
    ewt_dev = ewt_long
    reference = tmp_path / "reference.json"
    assert score(capsys, "--treebank", ewt_dev, *SLOW_OPTIONS, "--output", str(reference)) == 0

    output = tmp_path / "killed.json"
    checkpoint = checkpointing.default_path(output)
    command = ["score", "--quiet", "--model", tiny_bert(), "--treebank", ewt_dev, *SLOW_OPTIONS,
               "--output", str(output), "--checkpoint-every", "0"]
    kill_once_checkpointed(command, checkpoint, timeout=180)
    assert not output.exists()
    saved = checkpointing.load(checkpoint)["passes"]["0"]
    assert not saved["complete"] and 0 < saved["consumed"] < 640 and saved["consumed"] % 64 == 0

    assert score(capsys, "--treebank", ewt_dev, *SLOW_OPTIONS, "--output", str(output), "--checkpoint-every", "0",
                 "--resume") == 0
    assert counts_of(json.loads(output.read_text())) == counts_of(json.loads(reference.read_text()))
    assert not checkpoint.exists()  # removed once the result is written


def test_resume_after_a_crash_in_process(tmp_path, capsys):
    reference = tmp_path / "reference.json"
    common = ("--treebank", str(sample_path()), "--batch-size", "1", "--bootstrap", "10")
    assert score(capsys, *common, "--output", str(reference)) == 0
    checkpoint = tmp_path / "run.ckpt"
    crashed_checkpoint(checkpoint, crash_after=32)
    assert checkpointing.load(checkpoint)["passes"]["0"]["consumed"] == 32
    output = tmp_path / "resumed.json"
    assert score(capsys, *common, "--output", str(output), "--checkpoint", str(checkpoint), "--resume") == 0
    resumed, whole = json.loads(output.read_text()), json.loads(reference.read_text())
    assert counts_of(resumed) == counts_of(whole)
    assert resumed["treebank"]["sentences_scored"] == 75
    assert resumed["timing"]["seconds_total"] > 0


def test_refuses_to_resume_a_different_run(tmp_path, capsys):
    checkpoint = tmp_path / "run.ckpt"
    crashed_checkpoint(checkpoint)
    for option, value, field in (("--relations", "det", "accumulators.0.probe.relations"),
                                 ("--seed", "3", "accumulators.0.probe.bootstrap"),
                                 ("--pool-from", "first", "options.pool_from")):
        code = main(["score", "--quiet", "--model", tiny_bert(), "--treebank", str(sample_path()), "--batch-size",
                     "1", "--bootstrap", "10", option, value, "--checkpoint", str(checkpoint), "--resume"])
        err = capsys.readouterr().err
        assert code == 2 and "another run" in err and field in err, err
    assert checkpoint.is_file()  # refusing never destroys the checkpoint


def test_refuses_a_different_treebank_or_model(tmp_path):
    checkpoint = tmp_path / "run.ckpt"
    crashed_checkpoint(checkpoint)
    other_treebank = tmp_path / "other.conllu"
    other_treebank.write_text(sample_path().read_text(encoding="utf-8").replace("\tdog\t", "\tDog\t", 1), encoding="utf-8")
    cases = [
        (ScoreConfig.from_fields(model=tiny_bert(), treebank=str(other_treebank), batch_size=1, bootstrap=10), "input.sha256"),
        (ScoreConfig.from_fields(model=tiny_bert(seed=1), treebank=str(sample_path()), batch_size=1, bootstrap=10),
         "model.fingerprint"),
        (ScoreConfig.from_fields(model=tiny_bert(), treebank=str(sample_path()), batch_size=2, bootstrap=10), "options.batch_size"),
    ]
    for config, field in cases:
        with pytest.raises(ProbingError, match=field):
            run_probe(config, hooks=Checkpointer(checkpoint, every=0, resume=True))


def test_refuses_other_weights_copied_into_the_same_folder(tmp_path):
    """The folder's name is the same; its weights are not: the fingerprint tells them apart."""
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(tiny_bert(), folder)
    checkpoint = tmp_path / "run.ckpt"
    config = ScoreConfig.from_fields(model=str(folder), treebank=str(sample_path()), batch_size=1, bootstrap=10)
    with pytest.raises(Crash):
        run_probe(config, hooks=CrashingCheckpointer(checkpoint, every=0, crash_after=20))
    shutil.copy(__import__("pathlib").Path(tiny_bert(seed=1)) / "model.safetensors", folder / "model.safetensors")
    with pytest.raises(ProbingError, match="model.fingerprint"):
        run_probe(config, hooks=Checkpointer(checkpoint, every=0, resume=True))


def same_size_and_time_other_weights(folder) -> None:
    """Put another model's weights into ``folder`` keeping the file's size and modification time, as
    ``cp -p`` or ``rsync -t`` of a same-shaped checkpoint would."""
    import os
    from pathlib import Path

    weights = Path(folder) / "model.safetensors"
    before = weights.stat()
    other = (Path(tiny_bert(seed=1)) / "model.safetensors").read_bytes()
    assert len(other) == before.st_size and other != weights.read_bytes()
    weights.write_bytes(other)
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = weights.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_refuses_other_weights_of_the_same_size_and_modification_time(tmp_path):
    """The fingerprint is read from the bytes on every load: a file's size and mtime vouch for nothing."""
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(tiny_bert(), folder)
    checkpoint = tmp_path / "run.ckpt"
    config = ScoreConfig.from_fields(model=str(folder), treebank=str(sample_path()), batch_size=1, bootstrap=10)
    with pytest.raises(Crash):
        run_probe(config, hooks=CrashingCheckpointer(checkpoint, every=0, crash_after=20))
    same_size_and_time_other_weights(folder)
    with pytest.raises(ProbingError, match="model.fingerprint"):
        run_probe(config, hooks=Checkpointer(checkpoint, every=0, resume=True))


def test_merge_refuses_shards_of_other_weights_of_the_same_size_and_modification_time(tmp_path, capsys):
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(tiny_bert(), folder)
    parts = [tmp_path / f"part{index}.json" for index in range(2)]
    for index, part in enumerate(parts):
        if index == 1:
            same_size_and_time_other_weights(folder)
        assert main(["score", "--quiet", "--model", str(folder), "--treebank", str(sample_path()), "--bootstrap",
                     "0", "--shard", f"{index}/2", "--output", str(part)]) == 0
    capsys.readouterr()
    assert main(["merge", *map(str, parts), "--output", str(tmp_path / "merged.json")]) == 2
    assert "model.fingerprint" in capsys.readouterr().err
    assert not (tmp_path / "merged.json").exists()


def test_an_existing_checkpoint_needs_resume(tmp_path, capsys):
    output = tmp_path / "r.json"
    crashed_checkpoint(checkpointing.default_path(output))
    code = main(["score", "--quiet", "--model", tiny_bert(), "--treebank", str(sample_path()), "--batch-size", "1",
                 "--bootstrap", "10", "--output", str(output)])
    assert code == 2 and "pass --resume" in capsys.readouterr().err
    assert not output.exists()


def test_resume_without_a_checkpoint_starts_over(tmp_path, capsys):
    output = tmp_path / "r.json"
    code = main(["score", "--quiet", "--model", tiny_bert(), "--limit", "5", "--bootstrap", "0", "--output",
                 str(output), "--resume"])
    assert code == 0 and "starting from the beginning" in capsys.readouterr().err
    assert json.loads(output.read_text())["treebank"]["sentences_scored"] == 5


def test_resume_needs_somewhere_to_look(capsys):
    assert main(["score", "--quiet", "--model", tiny_bert(), "--limit", "2", "--resume"]) == 2
    assert "--resume" in capsys.readouterr().err


def test_a_damaged_checkpoint_is_a_clear_error(tmp_path):
    checkpoint = tmp_path / "run.ckpt"
    checkpoint.write_bytes(b"PK\x03\x04 not really a checkpoint")
    with pytest.raises(ProbingError, match="not a readable probing checkpoint"):
        Checkpointer(checkpoint, resume=True)
    torch.save({"something": "else"}, checkpoint)
    with pytest.raises(ProbingError, match="not a probing checkpoint"):
        Checkpointer(checkpoint, resume=True)


def test_checkpoint_writes_leave_no_temporary_files(tmp_path):
    checkpoint = tmp_path / "run.ckpt"
    crashed_checkpoint(checkpoint, crash_after=40)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.ckpt"]
    saved = checkpointing.load(checkpoint)["passes"]["0"]
    assert saved["consumed"] == 48  # chunks of 16 with --batch-size 1
    assert int(saved["accumulators"][0]["sentences"]) == 48


def test_the_same_weights_with_another_tokenizer_are_another_model(tmp_path):
    """A folder whose tokenizer was replaced reads different tokens: its fingerprint differs too."""
    import shutil

    from probing.model.loading import load_model

    folder = tmp_path / "model"
    shutil.copytree(tiny_bert(), folder)
    before = load_model(str(folder)).fingerprint
    vocabulary = folder / "tokenizer.json"
    vocabulary.write_text(vocabulary.read_text(encoding="utf-8").replace('"[UNK]"', '"[UNKNOWN]"'), encoding="utf-8")
    assert load_model(str(folder)).fingerprint != before


class BatchCrashingCheckpointer(Checkpointer):
    """Saves after every batch (``every`` a hair above 0) and stands in for a fault after ``crash_after`` batches:
    mid-chunk, where a chunk-end save would have lost the chunk's batches."""

    def __init__(self, *args, crash_after: int, **kwargs):
        super().__init__(*args, every=1e-9, **kwargs)
        self.crash_after, self.batches = crash_after, 0

    def batch_done(self, run):
        super().batch_done(run)
        self.batches += 1
        if self.batches >= self.crash_after:
            raise Crash


def test_a_save_between_batches_resumes_mid_chunk_to_identical_counts(tmp_path, capsys):
    """Batch size 1: chunks of 16 sentences. Killed after 20 batches, the file holds one whole chunk and 4 batches
    of the next; the resumed run makes that chunk again, skips those 4, and ends with the uninterrupted run's
    counts and input statistics."""
    reference, output, checkpoint = tmp_path / "reference.json", tmp_path / "resumed.json", tmp_path / "run.ckpt"
    common = ("--treebank", str(sample_path()), "--batch-size", "1", "--bootstrap", "10")
    assert score(capsys, *common, "--output", str(reference)) == 0
    config = ScoreConfig.from_fields(model=tiny_bert(), treebank=str(sample_path()), batch_size=1, bootstrap=10)
    with pytest.raises(Crash):
        run_probe(config, hooks=BatchCrashingCheckpointer(checkpoint, crash_after=20))
    saved = checkpointing.load(checkpoint)["passes"]["0"]
    assert (saved["consumed"], saved["batches"], saved["stats"]["units_used"]) == (16, 4, 20)
    # what a grid's plan says of the piece (a treebank's total is known at the end of its pass only)
    assert re.fullmatch(r"pass 1: 20 units in \d+ s", checkpointing.progress(checkpoint))
    code = main(["score", "--quiet", "--model", tiny_bert(), *common, "--output", str(output), "--checkpoint",
                 str(checkpoint), "--resume"])
    assert code == 0 and "after 16 units and 4 batches" in capsys.readouterr().err
    resumed, whole = json.loads(output.read_text()), json.loads(reference.read_text())
    assert counts_of(resumed) == counts_of(whole)
    assert resumed["input"] == whole["input"] and resumed["treebank"] == whole["treebank"]


def test_an_ablation_stopped_between_batches_resumes_to_the_uninterrupted_result(tmp_path, capsys, monkeypatch):
    """The causal board's case: one chunk is the whole run (300 sentences), each batch runs every condition. A run
    stopped (Ctrl-C) after 3 of its 6 batches keeps them; the resumed run scores the other 3 and writes the result
    of an uninterrupted run, every condition's state included."""
    from helpers import tiny_model

    whole, stopped, checkpoint = tmp_path / "whole.json", tmp_path / "stopped.json", tmp_path / "run.checkpoint"
    common = ["ablate", "--quiet", "--model", tiny_model("llama"), "--metric", "lm", "--treebank", str(sample_path()),
              "--limit", "24", "--batch-size", "4", "--each-layer", "--bootstrap", "20", "--checkpoint-every", "1e-9"]
    assert main([*common, "--output", str(whole)]) == 0
    saved, counted = Checkpointer.batch_done, []

    def stop_after_three(self, run):
        saved(self, run)
        counted.append(run.stats.units_used)
        if len(counted) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(Checkpointer, "batch_done", stop_after_three)
    assert main([*common, "--output", str(stopped), "--checkpoint", str(checkpoint)]) == 130
    assert checkpointing.load(checkpoint)["passes"]["0"]["batches"] == 3 and not stopped.exists()
    counted.clear()
    monkeypatch.setattr(Checkpointer, "batch_done", lambda self, run: (saved(self, run), counted.append(1)))
    capsys.readouterr()
    assert main([*common, "--output", str(stopped), "--checkpoint", str(checkpoint), "--resume"]) == 0
    assert "after 0 units and 3 batches" in capsys.readouterr().err and len(counted) == 3
    first, second = json.loads(whole.read_text()), json.loads(stopped.read_text())
    for block in ("baseline", "conditions", "state", "input"):
        assert first[block] == second[block], block
    assert not checkpoint.exists()
