"""Minimal pairs (BLiMP): a causal LM's sentence log-probabilities and its accuracy per paradigm, field and overall."""
