"""What a pass saw and how long it took (a result's ``input`` and ``timing`` blocks), and the one rule by which
parts of it add up.

Every field says, in its metadata, how it combines in two situations:

- ``parts``: parts of one run that saw different units: the chunks of a pass, a resumed pass's earlier parts,
  the ``--shard`` parts a merge adds up. Counts and seconds are summed; what describes the whole input
  (``units_total``) or the model (``max_length``) is the ``same`` in every part.
- ``processes``: the processes of one ``torchrun`` pass, which all batch every unit of the part but each count
  only the batches they own. Batching's counts are the ``same`` in each; the pass's own counts are summed; its
  seconds are the slowest process's (``max``), as the processes run side by side.

Adding a field is one line here; the pass, its batching, checkpoints, torchrun and ``probing merge`` all combine
it by :func:`combine` and its metadata.

>>> total = PassStats(units_total=10, units_used=3, seconds_total=1.5)
>>> total.add(PassStats(units_total=10, units_used=4, seconds_total=2.0))
>>> total.units_total, total.units_used, total.seconds_total
(10, 7, 3.5)
>>> both = across_processes([PassStats(units_in_part=5, units_used=2, seconds_model=1.0),
...                          PassStats(units_in_part=5, units_used=3, seconds_model=2.0)])
>>> both.units_in_part, both.units_used, both.seconds_model
(5, 5, 2.0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

SUM, SAME, MAX = "sum", "same", "max"
"""The rules: add the values up; every value is the same (the first is kept); the largest."""


def statistic(default=0, *, parts: str = SUM, processes: str = SUM):
    """A field of the pass statistics with its rule across ``parts`` and across ``processes`` (module docstring)."""
    return dataclasses.field(default=default, metadata={"parts": parts, "processes": processes})


def combine(values: Sequence, rule: str):
    """The values of one field combined by ``rule``.

    >>> combine([1, 2, 3], SUM), combine([1.0, 2.5], MAX), combine([7, 7], SAME)
    (6, 2.5, 7)
    """
    if rule == SUM:
        return sum(values[1:], values[0])
    if rule == MAX:
        return max(values)
    if rule == SAME:
        return values[0]
    raise ValueError(f"no such rule: {rule!r}")


@dataclass
class BatchStats:
    """What batching saw of the units of this part: all of them, those skipped as too long, words replaced by
    UNK, words of running text tokenized apart. Every process of a torchrun pass batches every unit: the same
    counts in each."""

    units_in_part: int = statistic(processes=SAME)
    too_long: int = statistic(processes=SAME)
    unk_substituted_words: int = statistic(processes=SAME)
    tokenized_apart_words: int = statistic(processes=SAME)

    def add(self, part: BatchStats) -> None:
        """Add another part's statistics into these, each of ``part``'s fields by its ``parts`` rule (a pass's
        statistics take over what its batching counted this way)."""
        for field in dataclasses.fields(part):
            setattr(self, field.name, combine([getattr(self, field.name), getattr(part, field.name)],
                                              field.metadata["parts"]))


@dataclass
class PassStats(BatchStats):
    """What a pass saw and how long it took; batching's counts (:class:`BatchStats`) are taken over from the
    batching when the pass ends (``stats.add(batching)``), ``units_used``, ``words`` and ``batches`` count the
    batches this process gave the model (batching may run ahead of it)."""

    units_total: int = statistic(parts=SAME, processes=SAME)
    """Units in the file: the whole input's, in every part."""
    units_used: int = statistic()
    words: int = statistic()
    batches: int = statistic()
    max_length: int = statistic(parts=SAME, processes=SAME)
    seconds_total: float = statistic(0.0, processes=MAX)
    seconds_model: float = statistic(0.0, processes=MAX)
    seconds_waiting_for_input: float = statistic(0.0, processes=MAX)
    """Wall time this process spent waiting for its next batch: the input side's reading, tokenising and batching
    that ran ahead of the model too slowly to hide (the first batch's included; all of it without a batching
    thread). Near zero means the input side kept the model fed."""


def across_processes(stats: Sequence[PassStats]) -> PassStats:
    """The statistics of one pass from those of its processes (``stats`` in rank order), each field by its
    ``processes`` rule."""
    return PassStats(**{field.name: combine([getattr(one, field.name) for one in stats], field.metadata["processes"])
                        for field in dataclasses.fields(PassStats)})


def merged_timing(blocks: Sequence[dict]) -> dict:
    """The ``timing`` block of parts of one run added up: each of the pass's seconds that every part records,
    by its ``parts`` rule (rounded to the millisecond, as a result keeps them).

    >>> merged_timing([{"seconds_total": 1.0, "seconds_model": 0.5}, {"seconds_total": 2.0, "seconds_model": 1.0,
    ...                                                                 "seconds_waiting_for_input": 0.1}])
    {'seconds_total': 3.0, 'seconds_model': 1.5}
    """
    merged = {}
    for field in dataclasses.fields(PassStats):
        if field.name.startswith("seconds_") and all(field.name in block for block in blocks):
            merged[field.name] = round(combine([block[field.name] for block in blocks], field.metadata["parts"]), 3)
    return merged
