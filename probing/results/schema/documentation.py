"""docs/results.md: every field of a result file as Markdown tables, from the blocks and each analysis's payload
(``python -m probing.results.schema`` prints it; a test checks the committed file is this text)."""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping

from probing.results.schema import READABLE_VERSIONS, SCHEMA_VERSION
from probing.results.schema.arrays import ARRAY_ENCODING, MAX_ARRAY_AXES, MAX_ARRAY_NUMBERS, PLANES_ENCODING
from probing.results.schema.blocks import COMMON, CONFIG, ENVIRONMENT, INPUT, MODEL, TIMING, TOOL
from probing.results.schema.bounds import MAX_DEPTH, MAX_RESULT_BYTES
from probing.results.schema.specs import Field, Section
from probing.results.schema.validation import REFERENCE


def markdown() -> str:
    """The fields above as Markdown tables (docs/results.md is this text)."""
    lines = [
        "# Result files",
        "",
        "Made by `python -m probing.results.schema` from `probing/results/schema/blocks.py` (the common blocks) and each "
        "analysis's `payload.py` (its payload), the definition every writer and reader uses.",
        f"Schema version {SCHEMA_VERSION}. Every file has the common blocks, then the payload of its `analysis`.",
        f"Files of versions {', '.join(v for v in READABLE_VERSIONS if v != SCHEMA_VERSION)} are read as this one: "
        "version-1 probe results gain the blocks version 2 added, and version-2 probe results, which kept",
        "their replicate sums in `bootstrap.arrays`, have their counts and those sums moved into `state`.",
        "Layers and heads are indexed from 0 in files (tables and plots count from 1). Unlisted fields may be",
        "added by later versions; listed ones keep their names and meanings until the version changes.",
        "",
        "## Common blocks",
        "",
    ]
    lines += _table(COMMON)
    for name, block in (("tool", TOOL), ("model", MODEL), ("input", INPUT), ("config (shared part)", CONFIG),
                        ("environment", ENVIRONMENT), ("timing", TIMING)):
        lines += ["", f"### `{name}`", ""] + _table(block.fields)
    for analysis, fields, sections in _payloads_of_packages():
        lines += ["", f"## Payload of `{analysis}`", ""] + _table(fields)
        for section in sections:
            lines += ["", section.heading(analysis), ""] + _table(section.block.fields)
    lines += ["", "## Reference files (`leaderboard --reference`)", ""] + _table(REFERENCE.fields["reference"].spec.fields)
    lines += ["", f"Arrays are stored as `{PLANES_ENCODING}` with their `shape`, `dtype` and `layout: byte-planes`: "
                  "every number's first byte, then every second byte, and so on (small counts in 8 bytes leave long "
                  "runs of zero bytes that zlib packs at once). Files written before byte planes have no `layout` "
                  f"and hold `{ARRAY_ENCODING}`.", ""]
    lines += [
        "## What is validated",
        "",
        "Every result is checked when it is written and whenever any command reads it (leaderboard, plot, merge,",
        "transfer, explore, `heads --probe`, `score`/`trees`/`coref --select-on`), and reference files the same way,",
        "before a number is used, an array inflated or a table built. A file that fails is one line naming the file",
        "and the field, exit status 2. Beyond the tables above:",
        "",
        "- the JSON itself: no `NaN` or `Infinity`, no integer of more than 4300 digits or beyond int64, nesting at",
        f"  most {MAX_DEPTH} levels, at most {MAX_RESULT_BYTES >> 30} GiB;",
        "- accuracies and shares between 0 and 1 (they are shares in files; tables show percentages), differences",
        "  between -1 and 1, coverage levels strictly between 0 and 1;",
        "- intervals are `[low, high]` with low <= high, within those bounds (whether an interval holds its estimate",
        "  is not checked: a percentile bootstrap interval of few replicates may leave it out);",
        "- layer and head indices of chosen heads (in-sample and held-out) exist in the model the result records",
        "  (rollout results: one head per layer); [layer][head] grids have the model's shape;",
        "- counts are integers >= 0 and at most their totals; a held-out block has the result's relations (coref:",
        "  its mention types) and their pair counts;",
        f"- encoded arrays: at most {MAX_ARRAY_AXES} axes and {MAX_ARRAY_NUMBERS} numbers by their declared shape,",
        "  the shape an analysis expects (bootstrap replicates, coref state) checked before any byte is inflated, and",
        "  inflated no further than the shape needs.",
        "",
    ]
    return "\n".join(lines)


def _payloads_of_packages() -> list[tuple[str, Mapping[str, Field], tuple["Section", ...]]]:
    """Each built-in analysis's name, payload and sections (its payload module's ``SECTIONS``), in the order
    ``probing --help`` lists their commands (an analysis without a command last); plug-ins document themselves."""
    from probing.plugins import analyses

    registry = analyses()
    built_in = [registry[name] for name in registry.names() if registry[name].payload.startswith("probing.analyses.")]
    built_in.sort(key=lambda record: (min((command.order for command in record.commands), default=math.inf),
                                      record.name))
    return [(record.name, record.load("payload"),
             getattr(importlib.import_module(record.payload.partition(":")[0]), "SECTIONS", ()))
            for record in built_in]


def _table(fields: Mapping[str, Field]) -> list[str]:
    rows = ["| field | type | holds |", "| --- | --- | --- |"]
    for name, declared in fields.items():
        optional = "" if declared.required else " (optional)"
        rows.append(f"| `{name}` | {declared.spec.describe}{optional} | {declared.doc} |")
    return rows
