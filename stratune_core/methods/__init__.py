"""The paper's baselines, one module each with its entry (`methods/entry.py`), each driving its own
steps over the shared task, model cache, budget ledger and trace format. StraTune's rounds and
the entry point for every method (`round/registry.iterate_method`) are in the layer above.

`__all__` names the modules the methods share; each method's own modules (`<method>*.py`) are
reached through its entry in `baselines.py`, so that a method is named only in its own files and
the registry's (tests/test_design_axes.py)."""

__all__ = ["baselines", "entry", "event_view", "executions", "finish", "opening", "proposal",
           "replies", "splits", "state", "trajectories"]
