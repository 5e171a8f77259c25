"""Word attention + pairs -> running integer counts (update / merge / result).

``predictions`` turns word attention into each head's predicted heads,
``pairs`` flattens a batch's (query, head) pairs, ``counts`` keeps the running
counts, ``bootstrap`` derives the per-sentence replicate weights.
"""
