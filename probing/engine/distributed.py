"""Several processes on one run: ``torchrun --nproc_per_node N -m probing COMMAND ...``.

Every process reads the same input and makes the same length-sorted batches
(they depend only on the options), then counts only the batches whose number
is its rank modulo the number of processes. At the end of each pass every
process's accumulators are gathered and merged in rank order, so every
process holds exactly what one process would have counted (integer counts
are identical; float sums agree to rounding). Rank 0 prints and writes. The
backend is NCCL when the run is on CUDA (each process takes the GPU of its
``LOCAL_RANK``) and gloo on CPU.

Without torchrun's environment (``WORLD_SIZE`` unset or 1) nothing here
starts a process group and :class:`Ranks` is the one-process no-op.

>>> Ranks().owns(5), Ranks(rank=0, world_size=2).owns(5), Ranks(rank=1, world_size=2).owns(5)
(True, False, True)
"""

from __future__ import annotations

import atexit
import datetime as _dt
import os
from collections.abc import Sequence

import torch

from probing.engine.accumulator import Accumulator
from probing.engine.passes import Pass, PassHooks
from probing.errors import ProbingError
from probing.results.pass_statistics import PassStats, across_processes


class Ranks(PassHooks):
    """This process's share of a run: batch ``n`` belongs to rank ``n % world_size``."""

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

    def finish(self, run: Pass) -> None:
        """Every process ends with the merge of all processes' accumulators and counters."""
        if not self.active:
            return
        merged = self.merged_states(run.accumulators)
        for accumulator, state in zip(run.accumulators, merged):
            accumulator.load_state(state)
        run.stats = self.merged_stats(run.stats)

    def merged_stats(self, stats: PassStats) -> PassStats:
        """The pass statistics of all processes together (each field by its ``processes`` rule), in every
        process; ``stats`` itself in one process."""
        if not self.active:
            return stats
        return across_processes(self._gather(stats))

    def merged_states(self, accumulators: Sequence[Accumulator]) -> list[dict]:
        """The state of each accumulator merged over all processes, in rank order (the same in every process)."""
        if not self.active:
            return [accumulator.state() for accumulator in accumulators]
        gathered = self._gather([accumulator.state() for accumulator in accumulators])
        merged = []
        for position, accumulator in enumerate(accumulators):
            total = accumulator.fresh()
            for part in gathered:
                total.merge(accumulator.fresh().load_state(part[position]))
            merged.append(total.state())
        return merged

    def _gather(self, value) -> list:
        boxes = [None] * self.world_size
        torch.distributed.all_gather_object(boxes, value)
        return boxes

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
        """Wait for every process to finish the command. The group itself lives until the process
        ends, so that several commands run in one process (a script under torchrun) share it."""
        if self.active and torch.distributed.is_initialized():
            torch.distributed.barrier()

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
        atexit.register(_destroy)
    return Ranks(rank=rank, world_size=world_size, device=device)


def _destroy() -> None:
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        raise ProbingError(f"expected an integer, found {text!r}", source=f"environment variable {name}") from None
