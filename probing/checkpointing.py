"""Long runs survive faults: counts saved atomically every few minutes, ``--resume`` goes on.

After every chunk of ``batch_size * CHUNK_BATCHES`` sentences of the
selected stream, when ``every`` seconds have passed since the last save, the
counts of the run so far (summed over all processes under torchrun) are
written with the number of sentences of the stream they cover and the
statistics of the run. A temporary file is written, flushed to disk and then
renamed over the old one, so a kill at any moment leaves either the previous
checkpoint or the new one, never half of one.

Chunks start at fixed multiples of the chunk size in the stream, so a resumed
run skips whole chunks and then makes exactly the batches the uninterrupted
run would have made: its counts are identical, not merely close. A checkpoint
records what decides the counts (model and commit, treebank sha256, every
option) and refuses to resume a different run. One file may hold several runs
of one command, by their order in it (the DEV and TEST runs of a held-out
score); a run finished before the kill is kept as complete, and resuming
skips it entirely.

>>> describe_difference({"config": {"limit": 5}}, {"config": {"limit": 6}})
'config.limit is 5 in the checkpoint but 6 in this run'
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import torch

from . import __version__
from .atomic import atomic_path
from .distributed import SUMMED_COUNTERS, Ranks
from .errors import ProbingError
from .pipeline import ProbeRun, RunHooks
from .results import model_block

FORMAT = "probing-checkpoint"
VERSION = 1
DEFAULT_EVERY_SECONDS = 300.0


def default_path(output: str | Path) -> Path:
    """Where ``--output FILE`` keeps its checkpoint: ``FILE.checkpoint`` beside it."""
    output = Path(output)
    return output.with_name(output.name + ".checkpoint")


def run_identity(run: ProbeRun) -> dict:
    """Everything that decides a run's counts (not the device, whose only effect is float rounding)."""
    # the result file's model block, less the device (it moves counts only by float rounding)
    model = {key: value for key, value in model_block(run.model).items() if key != "device"}
    return {
        "tool": {"version": __version__},
        "model": {**model, "stack": getattr(run.model, "stack", None)},
        "treebank": {"sha256": run.treebank_sha256, "sentences_total": run.stats.sentences_total},
        "config": _plain({**run.config.as_result_dict(), "max_length": run.max_length}),
    }


def describe_difference(saved: dict, current: dict, where: str = "") -> str | None:
    """The first field in which two identities differ, in words; None when equal."""
    for key in list(saved) + [key for key in current if key not in saved]:
        mine, theirs = saved.get(key), current.get(key)
        name = f"{where}.{key}" if where else key
        if isinstance(mine, dict) and isinstance(theirs, dict):
            found = describe_difference(mine, theirs, name)
            if found:
                return found
        elif mine != theirs:
            return f"{name} is {mine!r} in the checkpoint but {theirs!r} in this run"
    return None


class Checkpointer(RunHooks):
    """Run hooks that save and resume the counts; batches are split by ``ranks`` as usual.

    ``every`` is in seconds; 0 saves after every chunk (for tests and very
    flaky machines). Only rank 0 reads and writes the file.
    """

    def __init__(self, path: str | Path, *, every: float = DEFAULT_EVERY_SECONDS, resume: bool = False,
                 ranks: Ranks | None = None):
        self.path, self.every, self.resume = Path(path), every, resume
        self.ranks = ranks or Ranks()
        if every < 0:
            raise ProbingError(f"must be 0 (every chunk) or a number of seconds, got {every}", source="--checkpoint-every")
        self.saved: dict = {"format": FORMAT, "version": VERSION, "runs": {}}
        self.wrote = False  # this command has written the file (so it is ours to update)
        self.runs_started = 0  # the n-th run of this command is run n of the file
        if self.ranks.is_main:
            self._open()
        self.resume = self.ranks.share(self.resume)

    def _open(self) -> None:
        if self.path.is_dir():
            raise ProbingError("is a folder; give a file name for the checkpoint", source=str(self.path))
        exists = self.path.is_file()
        if exists and not self.resume:
            raise ProbingError(
                "a checkpoint of an unfinished run is here; pass --resume to continue it, or delete it to start over",
                source=str(self.path),
            )
        if self.resume and not exists:
            print(f"probing: no checkpoint at {self.path}; starting from the beginning", file=sys.stderr)
            self.resume = False
            return
        if self.resume:
            self.saved = load(self.path)

    # -- run hooks -------------------------------------------------------------------------

    def start(self, run: ProbeRun) -> int:
        self._identity = run_identity(run)
        self._key = str(self.runs_started)
        self.runs_started += 1
        self._started = time.perf_counter()
        self._last_save = time.monotonic()
        state = self._find() if self.ranks.is_main else None
        progress = self.ranks.share(None if state is None else _progress_of(state))
        if progress is None:
            self._consumed, self._previous_seconds = 0, 0.0
            return 0
        if self.ranks.is_main:
            _restore_counts(run, state["counts"])  # the other processes start from zero; finish sums them
        for name, value in progress["stats"].items():
            if hasattr(run.stats, name) and name not in ("sentences_total", "seconds_total"):
                setattr(run.stats, name, value)
        self._consumed, self._previous_seconds = progress["consumed"], progress["stats"].get("seconds_total", 0.0)
        if self.ranks.is_main:
            print(f"probing: resuming from {self.path} after {self._consumed} sentences", file=sys.stderr)
        return self._consumed

    def owns(self, number: int) -> bool:
        return self.ranks.owns(number)

    def chunk_done(self, run: ProbeRun, chunk) -> None:
        self._consumed += len(chunk)
        due = self.every == 0 or time.monotonic() - self._last_save >= self.every
        if not self.ranks.agree(due):
            return
        counts = self.ranks.summed_copy(run.counts)
        if self.ranks.is_main:
            self._save_run(run, counts, complete=False, last_index=chunk[-1].index)
        self._last_save = time.monotonic()

    def finish(self, run: ProbeRun) -> None:
        self.ranks.finish(run)
        run.stats.seconds_total += self._previous_seconds
        # A finished run is worth keeping only if this command already keeps a file (a
        # later run of it may yet be killed); short runs never touch the disk.
        if self.ranks.is_main and (self.wrote or self.every == 0):
            self._save_run(run, run.counts, complete=True, last_index=None, seconds=run.stats.seconds_total)

    def discard(self) -> None:
        """Remove the checkpoint once the result it led to is safely written."""
        if self.ranks.is_main:
            self.path.unlink(missing_ok=True)

    # -- the file ------------------------------------------------------------------------

    def _find(self) -> dict | None:
        """The saved state of this run, None if it never reached a checkpoint; refuses another run's."""
        state = self.saved["runs"].get(self._key) if self.resume else None
        if state is None:
            return None
        difference = describe_difference(state["identity"], self._identity)
        if difference:
            raise ProbingError(
                f"the checkpoint is of another run ({difference}); "
                "delete it to start over, or resume with the options it was made with",
                source=str(self.path),
            )
        return state

    def _save_run(self, run: ProbeRun, counts, *, complete: bool, last_index, seconds: float | None = None) -> None:
        stats = dataclasses.asdict(run.stats)
        stats["seconds_total"] = (
            seconds if seconds is not None else self._previous_seconds + time.perf_counter() - self._started
        )
        self.saved["runs"][self._key] = {
            "identity": self._identity,
            "complete": complete,
            "consumed": self._consumed,
            "last_index": last_index,
            "stats": stats,
            "counts": {
                **{name: getattr(counts, name).detach().cpu().clone() for name in counts.tensor_names()},
                **{name: int(getattr(counts, name)) for name in SUMMED_COUNTERS},
            },
        }
        save(self.saved, self.path)
        self.wrote = True


def save(state: dict, path: Path) -> None:
    """Write atomically: a complete new file replaces the old one, or nothing changes."""
    with atomic_path(path) as temporary:
        with open(temporary, "wb") as stream:
            torch.save(state, stream)
            stream.flush()
            os.fsync(stream.fileno())


def load(path: Path) -> dict:
    """Read a checkpoint file (tensors and plain values only: nothing in it can run code)."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # a truncated or foreign file: say so, whatever the unpickler raised
        raise ProbingError(f"not a readable probing checkpoint ({type(error).__name__}: {error})", source=str(path)) from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise ProbingError("not a probing checkpoint", source=str(path))
    if state.get("version") != VERSION:
        raise ProbingError(f"checkpoint version {state.get('version')} is not {VERSION}", source=str(path))
    return state


def _progress_of(state: dict) -> dict:
    """What every process needs to resume (the counts themselves stay on rank 0)."""
    return {"consumed": state["consumed"], "stats": state["stats"]}


def _restore_counts(run: ProbeRun, saved: dict) -> None:
    counts = run.counts
    missing = [name for name in counts.tensor_names() if name not in saved]
    if missing:
        raise ProbingError(f"the checkpoint lacks the counts {missing}", source="--resume")
    for name in counts.tensor_names():
        tensor = getattr(counts, name)
        if tuple(saved[name].shape) != tuple(tensor.shape):
            raise ProbingError(f"the checkpoint's {name} has shape {tuple(saved[name].shape)}, "
                               f"this run's {tuple(tensor.shape)}", source="--resume")
        tensor.copy_(saved[name])
    for name in SUMMED_COUNTERS:
        setattr(counts, name, int(saved[name]))


def _plain(value):
    """JSON-like copy (tuples become lists), so identities compare equal after a round trip."""
    return json.loads(json.dumps(value))


def from_options(
    ranks: Ranks, *, output: str | None, checkpoint: str | None, every: float, resume: bool
) -> Checkpointer | None:
    """The checkpointer of ``probing score``: on whenever the result is kept (``--output``)."""
    path = checkpoint or (default_path(output) if output else None)
    if path is None:
        if resume:
            raise ProbingError("needs --checkpoint FILE or --output FILE (whose checkpoint is FILE.checkpoint)",
                               source="--resume")
        return None
    return Checkpointer(path, every=every, resume=resume, ranks=ranks)
