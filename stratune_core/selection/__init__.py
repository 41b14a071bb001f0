"""Strategy selectors: their records and registry, the bandits, the strategy floors, and the
narrow views of a run they read. (The rules that override them: `round/operator_choice.py`.)
"""

__all__ = ["bandits", "outcomes", "selectors", "strategy_floors"]
