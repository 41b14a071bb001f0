"""The execution budget B, the ledger that makes executions count once, and the reserve
for final skill selection.
"""
