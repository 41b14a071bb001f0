"""Every core record survives unstructure -> JSON -> structure unchanged."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_cache.records import Message, Request, Response
from property_tests import strategies as S
from stratune_core.budget.admission import Admission, Budget
from stratune_core.budget.ledger import Ledger
from stratune_core.config.knobs import Config
from stratune_core.config.serde import structure, unstructure
from stratune_core.evaluation import Check, Outcome, PairedStats
from stratune_core.records.base import Execution, Sample, Score, TaskInfo

CASES = [
    (Sample, S.samples),
    (Score, S.scores),
    (Execution, S.executions),
    (TaskInfo, S.task_infos),
    (Config, S.configs()),
    (PairedStats, S.stats),
    (Check, S.checks),
    (Outcome, S.outcomes()),
    (Budget, S.budgets()),
    (Admission, S.admissions),
    (Ledger, S.ledgers()),
    (Message, S.messages),
    (Request, S.requests),
    (Response, S.responses),
]


@pytest.mark.parametrize(("cls", "strategy"), CASES, ids=[c.__name__ for c, _ in CASES])
@settings(max_examples=50)
@given(data=st.data())
def test_round_trip_through_json(cls: type, strategy, data: st.DataObject) -> None:
    """structure(json(unstructure(x))) == x for every record type."""
    obj = data.draw(strategy)
    text = json.dumps(unstructure(obj), sort_keys=True)
    back = structure(json.loads(text), cls)
    assert back == obj
    assert json.dumps(unstructure(back), sort_keys=True) == text
