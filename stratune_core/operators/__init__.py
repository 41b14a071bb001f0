"""Revision operators: the search strategies, the forms, patches, and the optimizer
calls that turn them into candidates.
"""
