"""The one pass over minimal pairs: batches of encoded pairs handed to accumulators, as a treebank's pass hands its
batches (probing.engine.passes).

``probing pairs`` (its log-probabilities, probing.analyses.pairs.accumulator) and ``probing ablate --metric
minimal-pairs`` (every condition's right-or-wrong bits) both run on it, through
:meth:`probing.engine.run.EngineRun.run_pairs`: the same batches, progress, timing and checkpoints. A batch is a
group of pairs, grouped by the length of their rows (``by_length``: the engine's length groups, so batches carry
little padding) or consecutive in reading order; either way the groups are fixed before the pass, so a resumed pass
skips the pairs counted before it stopped and makes exactly the batches an uninterrupted one makes.

>>> batches = list(pair_batches([([1, 7, 8], [1, 7]), ([1, 5], [1, 6, 6, 6])], pairs_per_batch=1, by_length=True))
>>> [batch.rows for batch in batches], batches[0].input_ids.tolist()
([[0], [1]], [[1, 7, 8], [1, 7, 0]])
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import torch

from probing.engine.accumulator import BatchView
from probing.engine.batching import length_groups
from probing.engine.passes import PassHooks, plain_identity
from probing.engine.progress import progress_bar
from probing.model.padding import padded_rows
from probing.model.pair_rows import Pair, row_length
from probing.results.pass_statistics import BatchStats, PassStats


@dataclass
class PairBatch:
    """Pairs of one batch: ``pairs`` their (good, bad) ids, ``rows`` their numbers in the pass. ``input_ids`` and
    ``attention_mask`` [sentence, token] hold their sentences (good, bad, good, ...) right-padded, made on first
    use (a batch scored with shared prefixes never reads them)."""

    pairs: list[Pair]
    rows: list[int]

    @cached_property
    def _padded(self) -> tuple[torch.Tensor, torch.Tensor]:
        return padded_rows([sentence for pair in self.pairs for sentence in pair])

    @property
    def input_ids(self) -> torch.Tensor:
        return self._padded[0]

    @property
    def attention_mask(self) -> torch.Tensor:
        return self._padded[1]

    def __len__(self) -> int:
        """Sentences in the batch."""
        return 2 * len(self.pairs)


def pair_groups(pairs: Sequence[Pair], pairs_per_batch: int, by_length: bool) -> list[list[int]]:
    """The pass's batches as lists of pair numbers: by the length of their rows (shortest first), or consecutive.

    >>> pair_groups([([1, 2, 3], [1, 2]), ([1], [1, 5])], 1, by_length=True), pair_groups([([1], [2])] * 3, 2, False)
    ([[1], [0]], [[0, 1], [2]])
    """
    if by_length:
        return list(length_groups([row_length(pair) for pair in pairs], pairs_per_batch))
    return [list(range(start, min(start + pairs_per_batch, len(pairs)))) for start in range(0, len(pairs), pairs_per_batch)]


def pair_batches(pairs: Sequence[Pair], *, pairs_per_batch: int, by_length: bool, done: int = 0) -> Iterator[PairBatch]:
    """The batches of :func:`pair_groups`, but the first ones that hold the ``done`` pairs counted before a resume."""
    for group in pair_groups(pairs, pairs_per_batch, by_length):
        if done > 0:
            done -= len(group)
            continue
        yield PairBatch([pairs[index] for index in group], group)


@dataclass
class PairsPass:
    """A pass over pairs in progress, as the checkpoint hooks see a pass (probing.engine.passes.Pass): its
    accumulators, statistics and identity. ``batching_counted`` stays empty: the pass counts its pairs itself."""

    loaded: object
    pairs: Sequence[Pair]
    accumulators: list
    options: dict
    stats: PassStats
    batching_counted: BatchStats = field(default_factory=BatchStats)

    def identity(self) -> dict:
        """Everything that decides the numbers: the tool, the model, the pairs' ids, the batches they form and the
        accumulators' options."""
        import hashlib

        from probing.results.io import model_identity
        from probing.version import __version__

        digest = hashlib.sha256()
        for good, bad in self.pairs:
            digest.update(f"{list(good)}\t{list(bad)}\n".encode())
        return plain_identity({"tool": __version__, "model": model_identity(self.loaded),
                               "input": {"sha256": digest.hexdigest(), "kind": "minimal-pairs", "pairs": len(self.pairs)},
                               "options": self.options,
                               "accumulators": {f"{index}.{accumulator.analysis}": accumulator.identity()
                                                for index, accumulator in enumerate(self.accumulators)}})


def run_pair_pass(loaded, pairs: Sequence[Pair], accumulators: Sequence, *, pairs_per_batch: int, by_length: bool,
                  hooks: PassHooks | None = None, progress: bool = False, description: str = "scoring") -> PassStats:
    """Every batch of ``pairs`` (encoded, probing.model.token_scores.encode) handed to each of ``accumulators``
    (``update(BatchView)``, the view's batch a :class:`PairBatch`); the pass's statistics, its units the pairs.

    ``hooks`` (probing.engine.checkpointing.Checkpointer, or None) save the accumulators after a batch now and then
    and, resuming, skip the pairs already counted; ``progress`` shows the pairs scored (probing.engine.progress).
    """
    started = time.perf_counter()
    hooks = hooks or PassHooks()
    # the longest sentence of all the pairs, resumed or not (a resumed part's own longest would differ)
    stats = PassStats(units_total=len(pairs), max_length=max((len(sentence) for pair in pairs for sentence in pair),
                                                             default=0))
    run = PairsPass(loaded, pairs, list(accumulators), {"batch_size": pairs_per_batch, "by_length": by_length}, stats)
    done = hooks.start(run)  # pairs counted before a resumed run stopped
    with torch.inference_mode(), progress_bar(total=len(pairs), initial=done, description=description,
                                              enabled=progress) as bar:
        for batch in pair_batches(pairs, pairs_per_batch=pairs_per_batch, by_length=by_length, done=done):
            begun = time.perf_counter()
            view = BatchView(batch, None, loaded)
            for accumulator in run.accumulators:
                accumulator.update(view)
            run.stats.seconds_model += time.perf_counter() - begun  # so that a save between batches has it
            run.stats.batches += 1
            run.stats.units_in_part += len(batch.rows)
            run.stats.units_used += len(batch.rows)
            hooks.chunk_done(run, batch.rows)
            bar.update(len(batch.rows))
    run.stats.seconds_total = time.perf_counter() - started
    hooks.finish(run)  # adds the statistics of the part before a resume
    return run.stats
