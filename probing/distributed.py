"""Several processes on one run: ``torchrun --nproc_per_node N -m probing score ...``.

Every process reads the same treebank and makes the same length-sorted
batches (they depend only on the options), then counts only the batches
whose number is its rank modulo the number of processes. At the end the
integer count tensors are summed with ``all_reduce``, so every process holds
the counts of one single-process run, exactly: each batch is counted once,
by one process, with the same padding as in one run. Rank 0 prints and
writes the result. The backend is NCCL when the run is on CUDA (each process
takes the GPU of its ``LOCAL_RANK``) and gloo on CPU.

Without torchrun's environment (``WORLD_SIZE`` unset or 1) nothing here
starts a process group and :class:`Ranks` is the one-process no-op.

>>> Ranks().owns(5), Ranks(rank=0, world_size=2).owns(5), Ranks(rank=1, world_size=2).owns(5)
(True, False, True)
"""

from __future__ import annotations

import copy as _copy
import datetime as _dt
import os

import torch

from .errors import ProbingError
from .pipeline import ProbeRun, RunHooks
from .scoring.counts import ProbeCounts

SUMMED_COUNTERS = ("sentences", "words")
"""Integer attributes of ProbeCounts that are summed across processes with the tensors."""


class Ranks(RunHooks):
    """This process's share of a run: batch ``n`` belongs to rank ``n % world_size``.

    Statistics made while batching (sentences in the part, too long, unknown
    words) are the same in every process, since every process batches the
    whole stream; only what ``count_batch`` adds differs and is summed.
    """

    def __init__(self, rank: int = 0, world_size: int = 1, device: str = "cpu"):
        self.rank, self.world_size, self.device = rank, world_size, device

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.world_size > 1

    def owns(self, number: int) -> bool:
        return number % self.world_size == self.rank

    def finish(self, run: ProbeRun) -> None:
        """Sum every process's counts into every process; the model time is the slowest process's."""
        if not self.active:
            return
        self.all_reduce_counts(run.counts)
        run.stats.seconds_model = self._reduce_float(run.stats.seconds_model, torch.distributed.ReduceOp.MAX)

    def all_reduce_counts(self, counts: ProbeCounts) -> None:
        """Replace each process's counts by the sum over processes (in place)."""
        for name in counts.tensor_names():
            tensor = getattr(counts, name)
            summed = self._on_device(tensor)
            torch.distributed.all_reduce(summed, op=torch.distributed.ReduceOp.SUM)
            tensor.copy_(summed.to(tensor.device))
        counters = self._on_device(torch.tensor([getattr(counts, name) for name in SUMMED_COUNTERS], dtype=torch.long))
        torch.distributed.all_reduce(counters, op=torch.distributed.ReduceOp.SUM)
        for name, value in zip(SUMMED_COUNTERS, counters.tolist()):
            setattr(counts, name, int(value))

    def summed_copy(self, counts: ProbeCounts) -> ProbeCounts | None:
        """The sum of all processes' counts on rank 0 (None elsewhere); the counts are left as they are."""
        if not self.active:
            return counts
        copy = _copy.copy(counts)  # same relations, shapes and options; tensors replaced below
        for name in counts.tensor_names():
            setattr(copy, name, getattr(counts, name).clone())
        self.all_reduce_counts(copy)
        return copy if self.is_main else None

    def agree(self, flag: bool) -> bool:
        """Rank 0's ``flag``, in every process (so all take a collective step together)."""
        if not self.active:
            return flag
        value = self._on_device(torch.tensor([int(flag)], dtype=torch.long))
        torch.distributed.broadcast(value, src=0)
        return bool(value.item())

    def share(self, value):
        """Rank 0's picklable ``value``, in every process."""
        if not self.active:
            return value
        box = [value if self.is_main else None]
        torch.distributed.broadcast_object_list(box, src=0, device=self._device())
        return box[0]

    def close(self) -> None:
        if self.active and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()

    def _reduce_float(self, value: float, op) -> float:
        tensor = self._on_device(torch.tensor([value], dtype=torch.float64))
        torch.distributed.all_reduce(tensor, op=op)
        return float(tensor.item())

    def _device(self) -> torch.device:
        return torch.device(self.device) if self.device.startswith("cuda") else torch.device("cpu")

    def _on_device(self, tensor: torch.Tensor) -> torch.Tensor:
        """NCCL sums only GPU tensors; gloo only CPU ones. Always a fresh tensor."""
        return tensor.to(self._device(), copy=True)


def from_environment(device: str = "cpu") -> Ranks:
    """The :class:`Ranks` of this process, starting the process group under torchrun.

    ``device`` is the run's ``--device``; under torchrun a bare ``cuda``
    becomes ``cuda:LOCAL_RANK`` (read it back from ``Ranks.device``).
    """
    world_size = _env_int("WORLD_SIZE", 1)
    if world_size <= 1:
        return Ranks(device=device)
    rank, local_rank = _env_int("RANK", 0), _env_int("LOCAL_RANK", 0)
    if device == "cuda":
        device = f"cuda:{local_rank}"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ProbingError("CUDA was asked for but no GPU is visible", source="--device")
        torch.cuda.set_device(torch.device(device))
    backend = "nccl" if device.startswith("cuda") else "gloo"
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(backend, timeout=_dt.timedelta(minutes=30))
    return Ranks(rank=rank, world_size=world_size, device=device)


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        raise ProbingError(f"expected an integer, found {text!r}", source=f"environment variable {name}") from None
