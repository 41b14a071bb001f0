"""Every optimizer prompt, built to a token budget, and the optimizer call that sends one
(`optimizer.py`).
"""
