"""Execution feedback E_t: the record and how it is built from a batch's executions. (Its
preparation by the optimizer runs in the round layer: `round/prep.py`.)
"""

__all__ = ["execution"]
