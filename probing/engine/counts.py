"""Counts that add up: the one home of ``state``, ``load_state`` and ``merge`` for everything a pass counts.

Everything an analysis keeps over a pass is a sum over units, so shards, processes and resumed runs combine by
addition. A count class names its counts (:meth:`Counts.counted`: tensors, whole numbers, or dicts of whole numbers
by a fixed set of keys), the options two parts must share (:meth:`Counts.count_options`) and the count objects it holds
under a key prefix (:meth:`Counts.count_parts`); :class:`Counts` gives, once for all of them:

- ``state()``: every count as a tensor, by name (checkpoints, torchrun, a result's ``state`` block);
- ``load_state(state)``: every name and shape checked before anything is copied, one clear error otherwise;
- ``merge(other)``: elementwise sums, after the same checks (options, then names and shapes).

>>> import torch
>>> class Tally(Counts):
...     def __init__(self):
...         self.hits, self.units, self.skipped = torch.zeros(2, dtype=torch.long), 0, {"empty": 0}
...     def counted(self):
...         return ("hits", "units", "skipped")
>>> first, second = Tally(), Tally()
>>> first.hits += torch.tensor([1, 2]); first.units = 3
>>> second.hits += 1; second.units = 1; second.skipped["empty"] = 2
>>> merged = first.merge(second)
>>> merged.hits.tolist(), merged.units, merged.skipped
([2, 3], 4, {'empty': 2})
>>> {name: value.tolist() for name, value in Tally().load_state(merged.state()).state().items()}
{'hits': [2, 3], 'units': 4, 'skipped': [2]}
>>> Tally().load_state({"hits": torch.zeros(3, dtype=torch.long), "units": torch.tensor(0)})
Traceback (most recent call last):
probing.errors.ProbingError: the saved counts' hits has shape (3,), this run's (2,)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from probing.errors import ProbingError
from probing.results.identity import difference

Count = torch.Tensor | int | dict
"""A count: a tensor (added elementwise, in place), a whole number, or whole numbers by a fixed set of keys."""


class Counts:
    """Named counts that add up across parts; see the module docstring.

    Tensors are always changed in place (``add_``, ``copy_``), never replaced, so a count that is a view of
    another store (a bootstrap's replicate sums) stays that store's.
    """

    counts_name = "counts"
    """How errors name these counts (``the saved probe counts ...``)."""

    def counted(self) -> Sequence[str]:
        """The names of this object's own counts (attributes), in the order of :meth:`state`."""
        return ()

    def count_options(self):
        """What two parts must share to be added up (their names and shapes are checked besides)."""
        return None

    def count_parts(self) -> dict[str, Counts]:
        """Count objects held inside this one, by the prefix of their names in :meth:`state` (``"single."``)."""
        return {}

    def count_values(self) -> dict[str, Count]:
        """This object's own counts by name (default: the attributes :meth:`counted` names)."""
        return {name: getattr(self, name) for name in self.counted()}

    def set_count(self, name: str, value: Count) -> None:
        """Replace a whole-number count (tensors are changed in place instead)."""
        setattr(self, name, value)

    def tensor_names(self) -> list[str]:
        """The names of this object's own counts that are tensors."""
        return [name for name, value in self.count_values().items() if isinstance(value, torch.Tensor)]

    # -- state -------------------------------------------------------------------------------

    def state(self, prefix: str = "") -> dict[str, torch.Tensor]:
        """Every count as a CPU tensor of its own, by ``prefix`` + name: own counts first, then each part's."""
        state = {prefix + name: _as_tensor(value) for name, value in self.count_values().items()}
        for part_prefix, part in self.count_parts().items():
            state.update(part.state(prefix + part_prefix))
        return state

    def load_state(self, state: Mapping[str, torch.Tensor], prefix: str = "") -> Counts:
        """Take every count from ``state`` (as :meth:`state` wrote it); refuses, changing nothing, a state that
        lacks a count or holds one of another shape."""
        self._check_counts_state(state, prefix)
        self._load_counts(state, prefix)
        return self

    def _check_counts_state(self, state: Mapping[str, torch.Tensor], prefix: str) -> None:
        for name, value in self.count_values().items():
            key, expected = prefix + name, _shape(value)
            if key not in state:
                raise ProbingError(f"the saved {self.counts_name} lack {key!r} (shape {expected})")
            found = tuple(torch.as_tensor(state[key]).shape)
            if found != expected:
                raise ProbingError(f"the saved {self.counts_name}' {key} has shape {found}, this run's {expected}")
        for part_prefix, part in self.count_parts().items():
            part._check_counts_state(state, prefix + part_prefix)

    def _load_counts(self, state: Mapping[str, torch.Tensor], prefix: str) -> None:
        for name, value in self.count_values().items():
            saved = torch.as_tensor(state[prefix + name])
            if isinstance(value, torch.Tensor):
                value.copy_(saved)
            elif isinstance(value, dict):
                self.set_count(name, dict(zip(value, (int(count) for count in saved.tolist()))))
            else:
                self.set_count(name, int(saved))
        for part_prefix, part in self.count_parts().items():
            part._load_counts(state, prefix + part_prefix)

    # -- merging -----------------------------------------------------------------------------

    def merge(self, other: Counts) -> Counts:
        """Add another part's counts into these (same type, options, names and shapes); returns self."""
        self._check_counts_mergeable(other)
        self._add_counts(other)
        return self

    def _check_counts_mergeable(self, other: Counts) -> None:
        if type(other) is not type(self):
            raise ProbingError(f"cannot merge {self.counts_name} with {other.counts_name}")
        found = difference(self.count_options(), other.count_options(), "options",
                           labels=("this part", "the other part"))  # the first option that differs, not the block
        if found:
            raise ProbingError(f"cannot merge {self.counts_name} made with other options: {found}")
        mine, theirs = self.count_values(), other.count_values()
        for name, value in mine.items():
            if name not in theirs or _shape(theirs[name]) != _shape(value):
                found = "nothing" if name not in theirs else f"shape {_shape(theirs[name])}"
                raise ProbingError(f"cannot merge {self.counts_name} of different shapes: {name} has shape "
                                   f"{_shape(value)} here, {found} in the other part")
        my_parts, their_parts = self.count_parts(), other.count_parts()
        if list(my_parts) != list(their_parts):
            raise ProbingError(f"cannot merge {self.counts_name} of different parts ({list(my_parts)} vs "
                               f"{list(their_parts)})")
        for part_prefix, part in my_parts.items():
            part._check_counts_mergeable(their_parts[part_prefix])

    def _add_counts(self, other: Counts) -> None:
        theirs = other.count_values()
        for name, value in self.count_values().items():
            if isinstance(value, torch.Tensor):
                value.add_(theirs[name].to(value.device))
            elif isinstance(value, dict):
                self.set_count(name, {key: count + theirs[name][key] for key, count in value.items()})
            else:
                self.set_count(name, value + theirs[name])
        their_parts = other.count_parts()
        for part_prefix, part in self.count_parts().items():
            part._add_counts(their_parts[part_prefix])


def _as_tensor(value: Count) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, dict):
        return torch.tensor([int(count) for count in value.values()])
    return torch.tensor(int(value))


def _shape(value: Count) -> tuple[int, ...]:
    if isinstance(value, torch.Tensor):
        return tuple(value.shape)
    if isinstance(value, dict):
        return (len(value),)
    return ()
