"""Every optimizer prompt, built to a token budget.
"""
