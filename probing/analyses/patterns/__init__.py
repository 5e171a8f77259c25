"""Kovaleva et al.'s (2019) pattern type of every head.
"""
