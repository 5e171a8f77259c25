"""The one exception type the command line turns into a clean message.

Every error a user can cause (a malformed treebank line, an unknown relation,
a model that returns no attentions) is raised as :class:`ProbingError` with
what went wrong and where. ``cli.main`` prints it on one line and exits 2;
nothing else is caught there, so a bug still shows its traceback.

>>> str(ProbingError("HEAD is not an integer: 'x'", source="a.conllu", line=7))
"a.conllu:7: HEAD is not an integer: 'x'"
"""

from __future__ import annotations


class ProbingError(ValueError):
    """A user-facing error with an optional location (file, line or option)."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        self.message = message
        self.source = source
        self.line = line
        super().__init__(self._format())

    def __reduce__(self):
        """Pickled whole (message, source, line, any subclass's fields), so that an error raised in a worker
        process is the same error in the process that reports it.

        >>> import pickle
        >>> pickle.loads(pickle.dumps(ProbingError("bad", source="a.conllu", line=3))).line
        3
        """
        return _rebuilt, (type(self), self.args, self.__dict__)

    def _format(self) -> str:
        if self.source is None:
            return self.message
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        return f"{where}: {self.message}"


def _rebuilt(cls: type, args: tuple, state: dict) -> ProbingError:
    """A pickled :class:`ProbingError` (or subclass) again, without calling its ``__init__``."""
    error = Exception.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error
