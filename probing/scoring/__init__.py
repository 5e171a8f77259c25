"""Predictions + relation pairs -> running integer counts, shared by every analysis that scores against a treebank.

``pairs`` flattens a batch's (query, head) pairs, ``counts`` keeps the running counts, ``bootstrap`` derives the
per-sentence replicate weights and keeps their sums.
"""
