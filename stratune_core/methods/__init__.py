"""Training methods over the shared task, model cache, budget ledger and trace format: StraTune
and the paper's baselines. `registry.iterate_method` runs the one a `MethodSpec` names.

Kept free of imports: `stratune_core.records.events` imports the baselines' events from here."""
