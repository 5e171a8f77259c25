"""Files of an older schema version read as the current one (:data:`probing.results.schema.READABLE_VERSIONS`):
the common blocks here, each analysis's payload by the ``upgrade`` its registry record names."""

from __future__ import annotations

from probing.results.schema import SCHEMA_VERSION


def upgrade(result: dict) -> dict:
    """A result of any readable version, read as the current one: a version-1 probe result gains ``analysis``,
    ``input`` and the fingerprint; then the analysis's own ``upgrade`` (its registry record) reads its payload
    as this version's. A current result comes back as it is.

    >>> upgrade({"schema_version": SCHEMA_VERSION, "analysis": "toy"})["schema_version"] == SCHEMA_VERSION
    True
    """
    version = result.get("schema_version")
    if version == SCHEMA_VERSION:
        return result
    if version == "1":
        result = _from_version_1(result)
    analysis = result.get("analysis")
    from probing.plugins import analyses

    registry = analyses()
    if isinstance(analysis, str) and analysis in registry.names() and registry[analysis].upgrade is not None:
        result = registry[analysis].load("upgrade")(result, version)
    return {**result, "schema_version": SCHEMA_VERSION}


def _from_version_1(result: dict) -> dict:
    """A version-1 probe result with the blocks version 2 added (``analysis``, ``input``, the fingerprint)."""
    treebank = result.get("treebank") or {}
    model = dict(result.get("model") or {})
    model.setdefault("fingerprint", model.get("commit") or f"path:{model.get('name_or_path')}")
    upgraded = {
        **result,
        "analysis": "probe",
        "model": model,
        "input": {
            "path": treebank.get("path", ""),
            "sha256": treebank.get("sha256", ""),
            "kind": "treebank",
            "units_total": treebank.get("sentences_total", 0),
            "units_used": treebank.get("sentences_scored", 0),
            "skipped": treebank.get("skipped", {}),
        },
    }
    upgraded.setdefault("environment", {"python": "", "platform": "", "packages": {}})
    return upgraded
