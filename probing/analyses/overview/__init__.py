"""What ``probing report`` writes: surface, heads, gradients and the probe of one pass, in one folder with a summary.

- :mod:`.folder`: which analyses run on an input (the probe needs single treebank sentences; the gradients a
  trained LM head and raw weights), their results from one pass, and the folder's files;
- :mod:`.summary`: the folder's README.md, the figures with the main numbers.

It registers no analysis of its own: its result files are those of the analyses it runs.
"""
