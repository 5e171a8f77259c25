"""The data layer: treebanks (CoNLL-U -> Sentence), relations, named treebanks, inputs, coreference documents.

No torch: tables and leaderboards import it without loading a model framework.
"""
