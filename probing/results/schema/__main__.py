"""``python -m probing.results.schema``: every field of a result file as Markdown (docs/results.md)."""

from probing.results.schema.specs import markdown

print(markdown())
