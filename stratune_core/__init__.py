"""StraTune's pure core: records, rules, strategies and the round function `step`.

Nothing in this package performs I/O, reads the clock or the environment, or keeps global
mutable state. Models are reached only through the `llm` argument of `step` / `run`.

Sub-packages, one job each (docs/design.md, "Packages"): `records` (data, state, events),
`config`, `budget`, `prompts`, `feedback`, `operators`, `selection`, `evaluation`, `released`
(mechanisms only the released code has), `round` (`step`, `run`), `methods` (training methods
that drive rounds over the shared task, cache, ledger and events) and `tasks` (the benchmarks'
pure parts). No module imports one that imports it back (tests/test_import_graph.py).
"""
