"""Strategy selectors: who picks a round's search strategy (paper §3.2 and the ablations of §4.1).

`base.Selector` says what a selector is, `registry.SELECTORS` lists them all; the rules that
override any selector (first round, strategy floors, a fixed operator) live in
`stratune_core/round/operator_choice.py`. See docs/design.md, "Adding a selector".
"""

__all__ = ["adaptive", "base", "registry", "scripted"]
