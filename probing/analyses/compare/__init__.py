"""Comparing two checkpoints' attention, head by head (Kovaleva et al. 2019).
"""
