"""Execution feedback E_t and its preparation before candidates are written.
"""
