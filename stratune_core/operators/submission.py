"""A candidate submitted to candidate evaluation: what screening and validation need to know
about where it came from (`round/candidate_eval.py`), and what the state keeps of a candidate whose
screening waits for the next round (`round/readiness.py`)."""

from __future__ import annotations

from attrs import frozen

from stratune_core.records.enums import Form, Strategy


@frozen(kw_only=True)
class Submission:
    candidate_id: str
    strategy: Strategy
    form: Form | None
    theme: str
    exclude: frozenset[str]  # the batch, samples shown to the optimizer, the ranking subset
    # donor salvage, after the rounds, may spend the reserve as the released code does
    use_reserve: bool = False
    # a second attempt after a screening set that was not ready (released code)
    retry: bool = False
