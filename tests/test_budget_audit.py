"""The budget audit benchmark's pass/fail half: every ablation, no duplicate execution and no
overshoot, and every charged execution is a real target request (no timings here)."""

from __future__ import annotations

import pytest

from benchmarks.budget_audit import ablations, audit_one

CASES = list(ablations(seed=1))


@pytest.mark.parametrize(("name", "config"), CASES, ids=[c[0] for c in CASES])
def test_ablation_never_repeats_or_overspends(name, config):
    audit = audit_one(config)
    assert audit["duplicates"] == 0, name
    assert audit["overshoot"] == 0, name
    assert audit["charged_matches_requests"], name
    assert audit["spent"] > 0
