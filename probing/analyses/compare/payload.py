"""What a ``compare`` result holds beyond the common blocks: each head's mean row cosine between two checkpoints.

Its types say all there is to check (the grid has the model's shape). No torch.

>>> from probing.results.schema.specs import Shape
>>> PAYLOAD["similarity"].spec.check([[0.5, 0.25]], "similarity", Shape(num_layers=2, num_heads=2))
Traceback (most recent call last):
probing.results.schema.specs.Invalid: similarity: expected 2 layers, found 1
"""

from __future__ import annotations

from probing.results.schema.blocks import STATE
from probing.results.schema.specs import NUMBER, Field, Grid

PAYLOAD = {"similarity": Field(Grid(NUMBER), "[layer][head] mean row cosine"), "state": STATE}

SECTIONS = ()
"""No block of its own in docs/results.md."""
