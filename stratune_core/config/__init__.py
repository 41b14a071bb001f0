"""The one `Config` with every knob, its checks, its layering, the run's shape derived from it,
and the converter for core records (`serde.py`).
"""

__all__ = ["checks", "flat", "knobs", "layers", "mechanisms", "operators", "profile_rows",
           "profiles", "serde", "shape"]
