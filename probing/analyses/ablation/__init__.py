"""Disabling heads: what a metric loses when chosen heads attend uniformly (Michel et al. 2019; Kovaleva et al. 2019).
"""
