"""Analyses of attention beyond the dependency probe: what heads look at, pattern types,
disabling heads, and comparing checkpoints (each module is one analysis)."""
