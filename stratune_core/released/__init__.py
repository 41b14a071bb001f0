"""Mechanisms of the released code that the paper does not describe (profile
`released`).
"""
