"""The engine: units -> padded batches -> the one attention pass -> accumulators.
"""
