"""The model layer: loading a checkpoint and its tokenizer, where its attention is, and what changes a running model.
"""
