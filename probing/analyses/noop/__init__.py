"""The no-op test: do heads park attention on [SEP] when their relation is absent (Clark et al. 2019, section 3).
"""
