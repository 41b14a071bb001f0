"""The one `Config` with every knob, its checks, its layering, and the run's shape
derived from it.
"""
