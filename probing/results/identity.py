"""What makes two results parts of one run, or a selection and a report of the same model.

One definition, used by ``probing merge`` (parts of one run), ``--resume``
(a checkpoint of this very run) and held-out selection (a DEV result for this
TEST run). Models are compared by the fingerprint of their weights, never by
their path: two folders both called ``model`` are not the same model, and
one folder whose weights were replaced is not the model it was.

No torch here; it works on result files.

>>> a = {"model": {"fingerprint": "sha256:aa", "architecture": "BertModel"}}
>>> difference(model_identity(a["model"]), model_identity({**a["model"], "fingerprint": "sha256:bb"}), "model")
"model.fingerprint is 'sha256:aa' in one but 'sha256:bb' in the other"
"""

from __future__ import annotations

MODEL_IDENTITY = ("fingerprint", "architecture", "num_layers", "num_heads", "dtype", "is_causal", "random_init", "stack")
"""Model fields every part of a run shares; ``device`` may differ (it moves counts only through float
rounding at near-ties), and so may the path the weights were read from."""

RUN_ONLY = ("shard", "batch_size")
"""Config fields that may differ between the parts of one run."""


def model_identity(model: dict) -> dict:
    """The fields of a result's ``model`` block that identify the weights and how they ran."""
    return {key: model.get(key) for key in MODEL_IDENTITY}


def run_identity(result: dict) -> dict:
    """Everything that must be equal in the parts of one run: tool version, analysis, model, input
    bytes, and every option but the shard."""
    return {
        "tool": {"name": result["tool"]["name"], "version": result["tool"]["version"]},
        "analysis": result["analysis"],
        "model": model_identity(result["model"]),
        "input": {key: result["input"].get(key) for key in ("sha256", "kind", "pairs")},
        "config": {key: value for key, value in result["config"].items() if key not in RUN_ONLY},
    }


def selection_identity(result: dict) -> dict:
    """What a selection (DEV) result must share with the result it is reported on (TEST): the model
    and the options that decide which head is best, not the input or the bootstrap (nor the command's whole
    record, ``options``: DEV's own run had its own --bootstrap, --limit and no DEV)."""
    config = {key: value for key, value in result["config"].items()
              if key not in RUN_ONLY + ("bootstrap", "limit", "max_length", "options")}
    return {"analysis": result["analysis"], "model": model_identity(result["model"]), "config": config}


def difference(mine, theirs, where: str = "", labels: tuple[str, str] = ("one", "the other"), *,
               tolerance: float = 0.0) -> str | None:
    """The first field in which two identities differ, in words (one line, each value shortened to
    :data:`SHOWN` characters); None when they are equal. Dicts are compared key by key and lists item by item, so
    the field named is the innermost one that differs (``conditions[3]``), never a whole list; numbers within
    ``tolerance`` of each other are equal (a block derived again from counts, to rounding).

    >>> difference({"heads": [[0, 1], [1, 2]]}, {"heads": [[0, 1], [1, 3]]}, labels=("a.json", "b.json"))
    'heads[1][1] is 2 in a.json but 3 in b.json'
    >>> difference({"draws": [0, 1]}, {"draws": [0, 1, 2]})
    'draws has 2 entries in one but 3 in the other'
    >>> difference({"p": 0.25}, {"p": 0.25 + 1e-12}, tolerance=1e-9) is None
    True
    """
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in list(mine) + [key for key in theirs if key not in mine]:
            found = difference(mine.get(key), theirs.get(key), f"{where}.{key}" if where else str(key), labels,
                               tolerance=tolerance)
            if found:
                return found
        return None
    if isinstance(mine, (list, tuple)) and isinstance(theirs, (list, tuple)):
        for index, (a, b) in enumerate(zip(mine, theirs)):
            found = difference(a, b, f"{where}[{index}]", labels, tolerance=tolerance)
            if found:
                return found
        if len(mine) == len(theirs):
            return None
        return f"{where or 'the value'} has {len(mine)} entries in {labels[0]} but {len(theirs)} in {labels[1]}"
    if _number(mine) and _number(theirs) and abs(mine - theirs) <= tolerance:
        return None
    if mine == theirs:
        return None
    return f"{where or 'the value'} is {shown(mine)} in {labels[0]} but {shown(theirs)} in {labels[1]}"


SHOWN = 60
"""The most characters of a value an error shows: a line names the field, never a whole block."""


def shown(value) -> str:
    """``repr(value)``, cut to :data:`SHOWN` characters.

    >>> shown("x" * 100)[-6:]
    'xxx...'
    """
    text = repr(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
