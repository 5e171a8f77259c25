"""What every benchmark shares: paired timings, the engine's batches, where checkpoints and treebanks are, the machine.

>>> timings = Timings()
>>> for over, under in ((2.0, 1.0), (3.3, 3.0), (1.0, 1.0)):
...     timings.add("over", over); timings.add("under", under)
>>> timings.ratio("over", "under"), timings.spread("under")
(1.1, '1.00-3.00 s')
"""

from __future__ import annotations

import contextlib
import os
import platform
import statistics
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import torch

FOLDERS = {"minilm": "all-MiniLM-L6-v2", "mpnet": "all-mpnet-base-v2", "smollm2": "SmolLM2-135M-Instruct",
           "gemma3": "gemma-3-270m"}
"""Short names of the checkpoints the benchmarks read from ``$PROBING_MODELS``, and their folders there."""


@dataclass
class Timings:
    """Seconds per repeat, by measurement name."""

    runs: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, seconds: float) -> None:
        self.runs.setdefault(name, []).append(seconds)

    def median(self, name: str) -> float:
        return statistics.median(self.runs[name])

    def ratio(self, over: str, under: str) -> float:
        """Median of the per-repeat ratios (paired: the same repeat's two runs)."""
        return statistics.median(a / b for a, b in zip(self.runs[over], self.runs[under]))

    def spread(self, name: str) -> str:
        values = self.runs[name]
        return f"{min(values):.2f}-{max(values):.2f} s"


class Clock:
    """Wall and CPU seconds of a block (the process's CPU time, every thread's: on a machine others share,
    the work done, which their load does not lengthen as it lengthens the wall time).

    >>> with Clock() as clock:
    ...     _ = sum(range(1000))
    >>> 0 <= clock.cpu and 0 <= clock.wall
    True
    """

    def __init__(self, device: str = "cpu"):
        self.device, self.wall, self.cpu = device, 0.0, 0.0

    def __enter__(self) -> "Clock":
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        if self.device.startswith("cuda"):
            torch.cuda.synchronize()
        self.wall, self.cpu = time.perf_counter() - self._wall, time.process_time() - self._cpu


@contextlib.contextmanager
def one_thread(device: str = "cpu"):
    """torch on one thread within the block, on a CPU: what is compared then shares no core with the other's
    threads, so CPU seconds count the work and not threads waiting on a loaded machine."""
    before = torch.get_num_threads()
    if device == "cpu":
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def the_batches(loaded, source, batch_size: int = 32) -> list:
    """The batches of a run: the same chunks, sort and padding the engine makes."""
    from probing.engine.batching import CHUNK_BATCHES, batches_of_chunk
    from probing.results.pass_statistics import BatchStats

    units = list(source.units())
    batches, stats = [], BatchStats()
    size = batch_size * CHUNK_BATCHES
    for start in range(0, len(units), size):
        batches += list(batches_of_chunk(units[start : start + size], loaded.tokenizer, batch_size=batch_size,
                                         max_length=loaded.max_length(), stats=stats,
                                         prepend=loaded.prepend_token_id, first_number=len(batches)))
    return batches


def model_folder(short: str) -> str | None:
    """``$PROBING_MODELS/<folder>`` of a checkpoint of :data:`FOLDERS`, when it is there."""
    root = os.environ.get("PROBING_MODELS")
    if root and (Path(root) / FOLDERS[short] / "config.json").is_file():
        return str(Path(root) / FOLDERS[short])
    return None


def treebank_split(spec: str) -> str | None:
    """The file of a treebank spec (``en_ewt:dev``) when it is at hand without a download, else None."""
    try:
        from probing.data.datasets.resolution import resolve_treebank

        return str(resolve_treebank(spec, download=False))
    except Exception:  # not available offline: the caller says what it measured instead
        return None


def ewt_dev() -> str | None:
    return treebank_split("en_ewt:dev")


def machine() -> dict:
    """The processor, cores, threads, GPU and versions a report names."""
    cpu = "unknown"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    return {"cpu": cpu, "cores": os.cpu_count(), "threads": torch.get_num_threads(), "gpu": gpu,
            "python": platform.python_version(), "torch": torch.__version__, "transformers": version("transformers"),
            "load": os.getloadavg()}


def machine_line(info: dict) -> str:
    """The machine in one sentence, as a report's heading names it.

    >>> machine_line({"cpu": "Xeon", "cores": 2, "threads": 2, "gpu": "none", "python": "3.11.7", "torch": "2.13.0",
    ...               "transformers": "5.25.0"})
    'Xeon, 2 cores, torch threads 2, GPU none; Python 3.11.7, torch 2.13.0, transformers 5.25.0'
    """
    return (f"{info['cpu']}, {info['cores']} cores, torch threads {info['threads']}, GPU {info['gpu']}; Python "
            f"{info['python']}, torch {info['torch']}, transformers {info['transformers']}")


def version(name: str) -> str:
    """An installed distribution's version, or ``-``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


def verdict(value: float, target: float, *, at_most: bool = True) -> str:
    """``**met**`` or ``**not met**``, with the target.

    >>> verdict(1.2, 1.15)
    '**not met** (target at most 1.15)'
    """
    met = value <= target if at_most else value >= target
    return f"**{'met' if met else 'not met'}** (target {'at most' if at_most else 'at least'} {target:g})"
