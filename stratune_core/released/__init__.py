"""The events of the released code's mechanisms that the paper does not describe (profile
`released`); the mechanisms run in the round layer (`round/warmup.py`, `round/i2_window.py`,
`round/salvage.py`).
"""

__all__ = ["events"]
