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


def difference(mine: dict, theirs: dict, where: str = "", labels: tuple[str, str] = ("one", "the other")) -> str | None:
    """The first field in which two identities differ, in words; None when they are equal."""
    for key in list(mine) + [key for key in theirs if key not in mine]:
        a, b = mine.get(key), theirs.get(key)
        name = f"{where}.{key}" if where else key
        if isinstance(a, dict) and isinstance(b, dict):
            found = difference(a, b, name, labels)
            if found:
                return found
        elif a != b:
            return f"{name} is {a!r} in {labels[0]} but {b!r} in {labels[1]}"
    return None
