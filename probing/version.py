"""The package's version, in a module of its own: library code reads it without importing the package's
top level (which offers the Python API and would otherwise sit in every import cycle)."""

__version__ = "0.1.0"
