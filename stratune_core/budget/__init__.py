"""The execution budget B and its admission control, and the ledger that makes executions
count once. (The reserve for final selection reads the pool: `round/reserve.py`.)
"""

__all__ = ["admission", "ledger"]
