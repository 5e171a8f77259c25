"""The JSON of a result within the bounds every reader needs before it looks inside: no NaN or Infinity, integers
within int64, nesting at most :data:`MAX_DEPTH` levels, files at most :data:`MAX_RESULT_BYTES`."""

from __future__ import annotations

import json
import math

from probing.errors import ProbingError
from probing.results.schema.specs import Invalid, is_int, shown

MAX_DEPTH = 64
"""Deepest nesting of objects and lists a result may have (the schema's deepest is about 10)."""

MAX_INTEGER = 2**63 - 1
"""Largest magnitude of an integer in a result (counts, seeds, shapes): an int64."""

MAX_RESULT_BYTES = 4 << 30
"""Largest result file read."""



class _NotANumber(ValueError):
    pass


def _refuse_constant(name: str):
    raise _NotANumber(name)


def parse_json(text: str, *, source: str) -> object:
    """JSON text as Python values, with the bounds every reader needs before it looks inside: no ``NaN`` or
    ``Infinity`` (not JSON, and no count or accuracy is one), no integer of more digits than Python reads, no
    nesting deeper than Python's parser survives. What :func:`validate` checks comes next.

    >>> parse_json('{"accuracy": NaN}', source="r.json")
    Traceback (most recent call last):
    probing.errors.ProbingError: r.json: not a JSON result file (it holds NaN, which is not a number a result may hold)
    """
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except _NotANumber as error:
        problem = f"it holds {error}, which is not a number a result may hold"
    except json.JSONDecodeError as error:
        problem = f"line {error.lineno}: {error.msg}"
    except RecursionError:
        problem = f"nested deeper than a result can be (at most {MAX_DEPTH} levels)"
    except ValueError as error:  # Python's limit on the digits of an integer (4300)
        problem = f"a number is too long to read ({str(error).split(';')[0]})"
    raise ProbingError(f"not a JSON result file ({problem})", source=source) from None


def check_bounds(value: object) -> None:
    """Every value of a result within bounds, whatever block it is in (declared or not): nesting at most
    :data:`MAX_DEPTH`, integers within int64, floats finite. Iterative, so a deep file cannot exhaust the stack."""
    pending = [(value, "", 0)]
    while pending:
        item, path, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise Invalid(path or "(top level)", f"nested deeper than a result can be (at most {MAX_DEPTH} levels)")
        if isinstance(item, dict):
            pending += [(child, f"{path}.{key}" if path else str(key), depth + 1) for key, child in item.items()]
        elif isinstance(item, list):
            pending += [(child, f"{path}[{index}]", depth + 1) for index, child in enumerate(item)]
        elif isinstance(item, float) and not math.isfinite(item):
            raise Invalid(path, f"{item} is not a number a result may hold")
        elif is_int(item) and abs(item) > MAX_INTEGER:
            raise Invalid(path, f"{shown(item)} is larger than any number a result holds")
