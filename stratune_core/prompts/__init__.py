"""Every optimizer prompt, built to a token budget, and the optimizer call that sends one
(`optimizer.py`).
"""

__all__ = ["budget", "extras", "feedback", "history", "optimizer", "prep_prompt", "templates",
           "tools"]
