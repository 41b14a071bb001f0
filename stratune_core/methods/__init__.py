"""The paper's baselines, one module each with its entry (`methods/entry.py`), each driving its own
steps over the shared task, model cache, budget ledger and trace format. StraTune's rounds and
the entry point for every method (`round/registry.iterate_method`) are in the layer above."""
