"""StraTune's pure core: records, rules, strategies and the round function `step`.

Nothing in this package performs I/O, reads the clock or the environment, or keeps global
mutable state. Models are reached only through the `llm` argument of `step` / `run`.

Sub-packages, one job each, in layers (docs/design.md, "Layers"; tests/test_layers.py): each
imports only sub-packages of a lower layer. Bottom first: `records` (leaf records and
protocols); `budget`, `operators` (the forms, patches, p_t), `tasks`; `feedback` (E_t),
`selection` (selectors); `config`; `evaluation` (the rules); `released` (its mechanisms'
events); `state` (Omega_t, H_t, the `Event` union, `Env`); `prompts` (and the optimizer call);
`methods` (the baselines); `round` (the parts run on the state: `step`, `run`, and the entry
point for every method). No module imports one that imports it back
(tests/test_import_graph.py).
"""

__all__ = ["budget", "config", "evaluation", "feedback", "methods", "operators", "prompts",
           "records", "released", "round", "selection", "state", "tasks"]
