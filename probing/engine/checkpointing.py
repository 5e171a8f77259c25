"""Long runs survive faults: every accumulator saved atomically now and then, ``--resume`` goes on.

After every chunk of ``batch_size * CHUNK_BATCHES`` units of the selected
stream, when ``every`` seconds have passed since the last save, the state of
every accumulator of the pass (merged over all processes under torchrun) is
written with the number of units it covers and the pass's statistics. In one
process it is also written after any batch once ``every`` seconds have passed:
a batch can take minutes (an ablation runs it once per condition), and a
chunk of 512 units can be a whole run. A temporary file is written, flushed
and renamed over the old one, so a kill at any moment leaves either the
previous checkpoint or the new one.

Chunks start at fixed multiples of the chunk size, so a resumed pass skips
whole chunks and then makes exactly the batches the uninterrupted pass would
have made (a save between batches also records how many batches of the next
chunk were counted, and the resumed pass makes that chunk again and skips
them): integer counts come out identical, not merely close. A checkpoint
records what decides the numbers (the model's fingerprint, the input's
sha256, every option and every accumulator's options) and refuses to resume
anything else. One file holds the passes of one command by their order (the
DEV and TEST passes of a held-out score); a pass finished before the kill is
kept, and resuming skips it.

>>> describe_difference({"options": {"limit": 5}}, {"options": {"limit": 6}})
'options.limit is 5 in the checkpoint but 6 in this run'
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

import torch

from probing.atomic import atomic_path, check_output_path
from probing.engine.distributed import Ranks
from probing.engine.passes import Pass, PassHooks
from probing.errors import ProbingError
from probing.results.pass_statistics import PassStats

FORMAT = "probing-checkpoint"
VERSION = 3
READABLE_VERSIONS = (2, VERSION)
"""Version 3 added the batches of a chunk counted before a save between batches; a version 2 file has none."""
DEFAULT_EVERY_SECONDS = 300.0


def default_path(output: str | Path) -> Path:
    """Where ``--output FILE`` keeps its checkpoint: ``FILE.checkpoint`` beside it."""
    output = Path(output)
    return output.with_name(output.name + ".checkpoint")


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


class Checkpointer(PassHooks):
    """Pass hooks that save and resume; batches are split by ``ranks`` as usual.

    ``every`` is in seconds; 0 saves after every chunk. Only rank 0 reads and writes the file.
    """

    def __init__(self, path: str | Path, *, every: float = DEFAULT_EVERY_SECONDS, resume: bool = False,
                 ranks: Ranks | None = None):
        self.path, self.every, self.resume = Path(path), every, resume
        self.ranks = ranks or Ranks()
        if every < 0:
            raise ProbingError(f"must be 0 (every chunk) or a number of seconds, got {every}", source="--checkpoint-every")
        self.saved: dict = {"format": FORMAT, "version": VERSION, "passes": {}}
        self.wrote = False  # this command has written the file (so it is ours to update)
        self.passes_started = 0  # the n-th pass of this command is pass n of the file
        self.command: dict | None = None
        """The command's options that can change a number (probing.commands.common.recorded_options), DEV's
        fingerprint among them: part of every pass's identity, so a resumed run is refused when one of them
        changed, even one no accumulator sees (``ablate --chosen``'s DEV, ``--random``, ``--k``)."""
        if self.ranks.is_main:
            self._open()
        self.resume = self.ranks.share(self.resume)

    def _open(self) -> None:
        check_output_path(self.path, option="--checkpoint")
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
            self.saved["version"] = VERSION  # what this run writes into it from now on

    # -- pass hooks --------------------------------------------------------------------------

    def start(self, run: Pass) -> int:
        self._identity = run.identity()
        if self.command is not None:  # first: a change there is named by the option that made it
            self._identity = {"command": self.command, **self._identity}
        self._key = str(self.passes_started)
        self.passes_started += 1
        self._started = time.perf_counter()
        self._last_save = time.monotonic()
        state = self._find() if self.ranks.is_main else None
        progress = self.ranks.share(None if state is None else {"consumed": state["consumed"], "stats": state["stats"],
                                                                "batches": state.get("batches", 0)})
        self._previous = PassStats()
        self._batches_into_chunk = 0  # batches of the current chunk counted (and so saved by a save between them)
        if progress is None:
            self._consumed = 0
            return 0
        if self.ranks.is_main:  # the other processes start from zero; finish merges them
            for accumulator, saved in zip(run.accumulators, state["accumulators"]):
                accumulator.load_state(saved)
        self._previous = PassStats(**progress["stats"])
        self._consumed, self._batches_into_chunk = progress["consumed"], progress["batches"]
        if self.ranks.is_main:
            more = f" and {self._batches_into_chunk} batches" if self._batches_into_chunk else ""
            print(f"probing: resuming from {self.path} after {self._consumed} units{more}", file=sys.stderr)
        return self._consumed

    def skipped_batches(self) -> int:
        return self._batches_into_chunk

    def owns(self, number: int) -> bool:
        return self.ranks.owns(number)

    def batch_done(self, run: Pass) -> None:
        """Save between batches in one process once ``every`` seconds have passed (under torchrun the processes
        would have to agree after every batch: they save at chunk ends only)."""
        self._batches_into_chunk += 1
        if self.ranks.active or self.every == 0 or time.monotonic() - self._last_save < self.every:
            return
        self._save(run, [accumulator.state() for accumulator in run.accumulators], complete=False)
        self._last_save = time.monotonic()

    def chunk_done(self, run: Pass, chunk) -> None:
        self._consumed += len(chunk)
        self._batches_into_chunk = 0
        due = self.every == 0 or time.monotonic() - self._last_save >= self.every
        if not self.ranks.agree(due):
            return
        states = self.ranks.merged_states(run.accumulators)
        stats = self.ranks.merged_stats(run.stats)  # every process's batches, as the merged states count them
        if self.ranks.is_main:
            self._save(run, states, complete=False, stats=stats)
        self._last_save = time.monotonic()

    def finish(self, run: Pass) -> None:
        self.ranks.finish(run)
        run.stats.add(self._previous)
        # A finished pass is worth keeping only if this command already keeps a file (a
        # later pass may yet be killed); short runs never touch the disk.
        if self.ranks.is_main and (self.wrote or self.every == 0):
            self._save(run, [accumulator.state() for accumulator in run.accumulators], complete=True)

    def resume_hint(self) -> str:
        """After a pass stopped through no fault of the input: --resume continues from the file, with the counts
        an uninterrupted run ends with, or starts over where nothing was saved yet."""
        if self.wrote:
            return (f"run the same command again with --resume: it continues from the checkpoint {self.path}, and the "
                    "counts end those of an uninterrupted run")
        return (f"no checkpoint was saved yet (one is saved every {self.every:g} s, --checkpoint-every): run the "
                f"same command again")

    def discard(self) -> None:
        """Remove the checkpoint once the result it led to is safely written."""
        if self.ranks.is_main:
            self.path.unlink(missing_ok=True)

    # -- the file ------------------------------------------------------------------------

    def _find(self) -> dict | None:
        """The saved state of this pass, None if it never reached a checkpoint; refuses another run's."""
        state = self.saved["passes"].get(self._key) if self.resume else None
        if state is None:
            return None
        saved, current = state["identity"], self._identity
        if "command" not in saved or "command" not in current:  # a run of the Python API records no command line
            saved, current = ({key: value for key, value in identity.items() if key != "command"}
                              for identity in (saved, current))
        difference = describe_difference(saved, current)
        if difference:
            raise ProbingError(
                f"the checkpoint is of another run ({difference}); "
                "delete it to start over, or resume with the options and model it was made with",
                source=str(self.path),
            )
        return state

    def _save(self, run: Pass, states: list[dict], *, complete: bool, stats: PassStats | None = None) -> None:
        """Write the pass's ``states`` with its statistics (``stats``, default this process's ``run.stats``)."""
        stats = PassStats(**dataclasses.asdict(stats or run.stats))
        if not complete:
            stats.add(run.batching_counted)  # batching may be ahead of the model: only finished chunks count
            stats.seconds_total += time.perf_counter() - self._started
            stats.add(self._previous)
        self.saved["passes"][self._key] = {
            "identity": self._identity,
            "complete": complete,
            "consumed": self._consumed,
            "batches": self._batches_into_chunk,  # of the chunk after the consumed units (0 at a chunk's end)
            "stats": dataclasses.asdict(stats),
            "accumulators": states,
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
        raise ProbingError(f"not a readable probing checkpoint ({type(error).__name__})", source=str(path)) from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise ProbingError("not a probing checkpoint", source=str(path))
    if state.get("version") not in READABLE_VERSIONS:
        raise ProbingError(f"checkpoint version {state.get('version')} is not {VERSION}; start over", source=str(path))
    return state


def progress(path: str | Path) -> str:
    """How far the run saved at ``path`` got, in words: each pass's units counted of its total and its seconds.

    A grid's plan quotes it for a piece that will resume (leaderboards/make.sh, ``PLAN=1``).
    """
    described = []
    for key, saved in sorted(load(Path(path))["passes"].items(), key=lambda item: int(item[0])):
        stats = saved["stats"]
        # a treebank's pass learns its total at the end; a list of pairs knows it from the start
        of_total = f" of {stats['units_total']:,}" if stats["units_total"] else ""
        done = "complete" if saved["complete"] else f"{stats['units_used']:,}{of_total} units"
        described.append(f"pass {int(key) + 1}: {done} in {stats['seconds_total']:,.0f} s")
    return "; ".join(described) or "no pass saved yet"


def from_options(ranks: Ranks, *, output: str | None, checkpoint: str | None, every: float,
                 resume: bool) -> Checkpointer | None:
    """The checkpointer of a command: on whenever its result is kept (``--output``) or a file is named."""
    if checkpoint and output and _same_path(checkpoint, output):
        raise ProbingError("is the --output file; the checkpoint is deleted once the result is written, so the "
                           "result would be lost", source=f"--checkpoint {checkpoint}")
    path = checkpoint or (default_path(output) if output else None)
    if path is None:
        if resume:
            raise ProbingError("needs --checkpoint FILE or --output FILE (whose checkpoint is FILE.checkpoint)",
                               source="--resume")
        return None
    return Checkpointer(path, every=every, resume=resume, ranks=ranks)


def _same_path(first: str | Path, second: str | Path) -> bool:
    """Whether two paths name one file, whether or not it exists yet (links and ``..`` resolved)."""
    return Path(first).expanduser().resolve() == Path(second).expanduser().resolve()
