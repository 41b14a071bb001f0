"""StraTune's pure core: records, rules, strategies and the round function `step`.

Nothing in this package performs I/O, reads the clock or the environment, or keeps global
mutable state. Models are reached only through the `llm` argument of `step` / `run`.
"""
