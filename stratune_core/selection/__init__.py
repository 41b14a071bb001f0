"""Choosing a round's revision operator: the selectors and the rules that override
them.
"""
