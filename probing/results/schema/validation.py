"""A result checked against the schema, before it is written and whenever one is read: its bounds, its version
(upgraded), the common blocks and its analysis's payload, the analysis's own checks, and last its arrays decoded.

>>> validate({"schema_version": "2"}, source="r.json")
Traceback (most recent call last):
probing.errors.ProbingError: r.json: analysis: missing (which analysis made this file)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from probing.errors import ProbingError
from probing.results.schema import READABLE_VERSIONS, SCHEMA_VERSION
from probing.results.schema.blocks import COMMON
from probing.results.schema.bounds import check_bounds
from probing.results.schema.specs import (
    COUNT,
    DIRECTION,
    INT,
    SHARE,
    STR,
    Field,
    Invalid,
    MapOf,
    Obj,
    OneOf,
    Shape,
    decoded,
    is_int,
    shown,
)
from probing.results.schema.upgrade import upgrade


def validate(result: object, *, source: str | None = None) -> dict:
    """Check a result object against this schema; return it (version-1 files upgraded).

    Raises ProbingError naming ``source`` and the first offending field.
    """
    try:
        if not isinstance(result, dict):
            raise Invalid("(top level)", f"expected a JSON object, found {type(result).__name__}")
        check_bounds(result)
        version = result.get("schema_version")
        if version not in READABLE_VERSIONS:
            if isinstance(version, str) and version.isdigit() and int(version) > int(SCHEMA_VERSION):
                raise Invalid("schema_version", f"{version} was written by a newer probing (this one reads "
                                                f"{', '.join(READABLE_VERSIONS)}): upgrade probing to read it")
            raise Invalid("schema_version", f"expected one of {', '.join(READABLE_VERSIONS)}, found {shown(version)}")
        result = upgrade(result)
        analysis = result.get("analysis")
        if "analysis" not in result:
            raise Invalid("analysis", f"missing ({COMMON['analysis'].doc.split(' (')[0]})")
        payload, checks = _payload_of(analysis)
        shape = Shape()
        model = result.get("model")
        if isinstance(model, dict) and is_int(model.get("num_layers")) and is_int(model.get("num_heads")):
            shape = Shape(model["num_layers"], heads_per_layer(result))
        Obj({**COMMON, **payload}).check(result, "", shape)
        for check in checks:  # the shapes an analysis expects, before any array is inflated
            check(result)
        for path, encoded in shape.arrays:
            decoded(encoded, path)
    except Invalid as error:
        raise ProbingError(str(error), source=source) from None
    return result


def heads_per_layer(result: dict) -> int:
    """The heads of each layer a result's [layer][head] grids hold: the model's, or one under rollout (one map
    per layer).

    >>> heads_per_layer({"model": {"num_heads": 12}, "config": {"attention": "rollout"}})
    1
    """
    config = result.get("config")
    rollout = isinstance(config, dict) and config.get("attention") == "rollout"
    return 1 if rollout else result["model"]["num_heads"]


def _payload_of(analysis) -> tuple[Mapping[str, Field], list[Callable[[dict], None]]]:
    """The payload schema and consistency checks of a registered analysis (a plug-in's too, from its record)."""
    from probing.plugins import analyses

    registry = analyses()
    if not isinstance(analysis, str) or analysis not in registry.names():
        raise Invalid("analysis", f"expected one of {', '.join(registry.names())}, found {shown(analysis)}")
    record = registry[analysis]
    return record.load("payload"), record.load_checks()


REFERENCE = Obj({
    "reference": Field(Obj({
        "model": Field(STR, "the model the paper measured"),
        "short_citation": Field(STR, "what the table's rows say: Clark et al. 2019, Table 1"),
        "citation": Field(STR, "the full citation, in the table's notes"),
        "treebank": Field(STR, "the data the figures are on"),
        "selection": Field(STR, "in-sample or held-out", required=False),
        "note": Field(STR, "what differs from this tool's numbers", required=False),
        "analysis": Field(OneOf(("probe",)), "the table the figures join (only probe's take references)",
                          required=False),
        "relations": Field(MapOf(Obj({
            "layer": Field(COUNT, "from 0", required=False),
            "head": Field(COUNT, "from 0", required=False),
            "direction": Field(DIRECTION, "dep_to_head or head_to_dep", required=False),
            "accuracy": Field(SHARE, "as a share (0.868), not a percentage"),
            "baseline": Field(Obj({"offset": Field(INT, "signed"), "accuracy": Field(SHARE, "as a share")}),
                              "the best offset's figure", required=False),
        }), "relation"), "per relation, the figures quoted"),
    }), "figures quoted from a paper (leaderboard --reference)"),
})
"""A reference file of quoted figures: ``leaderboard --reference FILE`` validates it like a result."""


def validate_reference(data: object, *, source: str | None = None) -> dict:
    """Check a reference file's figures; return them.

    >>> validate_reference({"reference": {"model": "BERT"}}, source="ref.json")
    Traceback (most recent call last):
    probing.errors.ProbingError: ref.json: reference.short_citation: missing (what the table's rows say: Clark et al. 2019, Table 1)
    """
    try:
        if not isinstance(data, dict):
            raise Invalid("(top level)", f"expected a JSON object, found {type(data).__name__}")
        check_bounds(data)
        REFERENCE.check(data, "", Shape())
    except Invalid as error:
        raise ProbingError(str(error), source=source) from None
    return data
