"""Sentence views of one head's attention, for the explore page.
"""
