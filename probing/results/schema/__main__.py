"""``python -m probing.results.schema``: every field of a result file as Markdown (docs/results.md)."""

from probing.results.schema.documentation import markdown

print(markdown())
