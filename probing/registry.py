"""One small registry class for everything users can add to.

Relations, pooling modes, attention readings, ablation metrics, analyses and
output formats are each a :class:`Registry`: a name maps to one function or
class, a second registration under the same name is a programming error, and
looking up an unknown name is a user error that lists the known ones (the
lm-evaluation-harness way).

>>> formats = Registry("format", option="--format")
>>> @formats.register("md")
... def markdown(text):
...     return text
>>> formats["md"]("x"), formats.names()
('x', ['md'])
>>> formats["rst"]
Traceback (most recent call last):
probing.errors.ProbingError: --format: unknown format 'rst'; use one of: md
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from probing.errors import ProbingError

T = TypeVar("T")


class Registry(Generic[T]):
    """Names -> entries, in registration order; ``option`` names the command-line option in errors."""

    def __init__(self, kind: str, *, option: str | None = None):
        self.kind = kind
        self.option = option
        self._entries: dict[str, T] = {}

    def register(self, name: str, entry: T | None = None) -> Callable[[T], T] | T:
        """``@registry.register("name")`` as a decorator, or ``registry.register("name", entry)``."""

        def add(value: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._entries[name] = value
            return value

        return add if entry is None else add(entry)

    def __getitem__(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            raise ProbingError(
                f"unknown {self.kind} {name!r}; use one of: {', '.join(self.names())}", source=self.option
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        return list(self._entries)

    def items(self):
        return self._entries.items()
