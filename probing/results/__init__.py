"""Result files: the schema, validated reading and atomic writing, identities, merging.

No torch.
"""
