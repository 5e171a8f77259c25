"""What a result file holds, field by field: the one definition every writer and reader uses.

A result file is one JSON object. Every analysis writes the same provenance
blocks (``schema_version``, ``analysis``, ``tool``, ``model``, ``input``,
``config``, ``environment``, ``timing``, ``created``) and then its own payload.
The common blocks are declared as data, each field with one line that says
what it holds; each analysis declares its payload and the checks its types
cannot express in its own package (``probing/analyses/NAME/payload.py``, named
by its registry record). A damaged or hand-edited file is one clear line
naming the file and the field, never a traceback deep in a merge or a
leaderboard. The package, one concern a module:

- :mod:`~probing.results.schema.specs`: the type language every block is declared in (``Field``, ``Obj``,
  ``COUNT``, ``Grid``, ``Array`` ...);
- :mod:`~probing.results.schema.arrays`: the codec of encoded arrays (``encode_array``, ``decode_array``);
- :mod:`~probing.results.schema.blocks`: the common blocks, and what several payloads share;
- :mod:`~probing.results.schema.upgrade`: a file of an older version read as this one;
- :mod:`~probing.results.schema.bounds`: the JSON itself within bounds (``parse_json``, ``check_bounds``);
- :mod:`~probing.results.schema.validation`: ``validate`` (types, [layer][head] shapes, counts between 0 and
  their total, replicate array shapes) before a result is written and whenever one is read;
- :mod:`~probing.results.schema.documentation`: all of it as Markdown; ``python -m probing.results.schema``
  prints it (docs/results.md is made by it).

Here: the version every result is written with and the versions read. No torch in the package: leaderboards,
plots and pages read result files without it.
"""

SCHEMA_VERSION = "3"
"""Written into every result; raised whenever a field of the schema changes meaning or name."""

READABLE_VERSIONS = ("1", "2", "3")
"""Versions this release reads, each read as the current one (probing.results.schema.upgrade). Version 1 files (probe
results of probing 0.1) lack ``analysis`` and ``model.fingerprint``; they are read as probe results. Version 2
probe files keep their replicate counts in ``bootstrap.arrays`` rather than in ``state``, where every
analysis keeps what its numbers are derived from."""
