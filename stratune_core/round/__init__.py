"""The round: `step`, the driver loop `run`, and what a round needs (context, batches,
target executions).
"""
