"""The one `Config` with every knob, its checks, its layering, the run's shape derived from it,
and the converter for core records (`serde.py`).
"""
