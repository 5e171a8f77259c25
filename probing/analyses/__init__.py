"""One package per analysis; each registers itself with :mod:`probing.plugins` in its ``__init__``.

Every analysis is an accumulator of the one attention pass (:mod:`probing.engine.passes`); its package
holds that accumulator, its payload schema, its tables and figures, and its command. docs/architecture.md
shows how to add one.
"""
