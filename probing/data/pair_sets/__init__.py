"""Minimal pairs in every language: the pair sets by name (catalogue), where their files come from (folders,
pinned), their readers (clams, rublimp; BLiMP's in probing.data.minimal_pairs), the agreement pairs a treebank
gives (agreement, from_treebank) and pairs written out as JSON lines (written). No torch."""
