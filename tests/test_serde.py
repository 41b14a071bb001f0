"""Unit tests of the core's cattrs converter (JSON shape, tags, strictness)."""

from __future__ import annotations

import json

import attrs
import cattrs
import pytest

from llm_cache.records import ImageBlock, Message, Request, Role, TextBlock
from stratune_core.budget.ledger import Ledger
from stratune_core.config.knobs import Config
from stratune_core.config.profiles import released
from stratune_core.config.serde import make_converter, structure, unstructure
from stratune_core.evaluation import Outcome, screen
from stratune_core.records.base import Execution, Sample
from stratune_core.records.enums import Reason


def _json_round_trip(obj: object, cls: type) -> object:
    return structure(json.loads(json.dumps(unstructure(obj))), cls)


def test_outcome_is_plain_json_with_enum_values_and_sorted_sets() -> None:
    """Enums become their values, tuples lists, frozensets sorted lists."""
    out = screen([1, 1, 0, 1], [0, 1, 1, 0], config=Config(), eps0=0.0025, success_threshold=1.0)
    data = unstructure(out)
    assert data["stage"] == "screening"
    assert data["failed"] == [r.value for r in out.failed] and Reason.GAIN_BELOW_THRESHOLD in out.failed
    assert data["stats"]["counts"]["lost"] == [0, 3]
    assert json.loads(json.dumps(data)) == data
    assert _json_round_trip(out, Outcome) == out


def test_blocks_are_tagged() -> None:
    """TextBlock | ImageBlock carries a "_type" tag with the class name and reads back."""
    msg = Message.user((TextBlock(text="hi"), ImageBlock(media_type="image/png", data="AAAA")))
    req = Request(role=Role.TARGET, model="m", system="", messages=(msg,), max_tokens=5)
    data = unstructure(req)
    assert [b["_type"] for b in data["messages"][0]["content"]] == ["TextBlock", "ImageBlock"]
    assert _json_round_trip(req, Request) == req


def test_any_payload_passes_through() -> None:
    """A JSON-like payload is stored as is."""
    s = Sample(id="x", stratum="m1", payload={"q": "why", "opts": ["a", "b"], "n": 3, "z": None})
    assert unstructure(s)["payload"] == s.payload
    assert _json_round_trip(s, Sample) == s


def test_ledger_is_a_list_of_executions() -> None:
    """The ledger serializes as its executions in insertion order."""
    led = Ledger.of([Execution(skill_id="s", sample_id=f"x{i}", score=0.5, solved=False) for i in range(3)])
    data = unstructure(led)
    assert [d["sample_id"] for d in data] == ["x0", "x1", "x2"]
    assert _json_round_trip(led, Ledger) == led


def test_released_config_round_trip() -> None:
    """Config with optional fields set and unset survives JSON."""
    assert _json_round_trip(released(), Config) == released()
    assert _json_round_trip(Config(), Config) == Config()


def test_misspelt_key_is_an_error() -> None:
    """forbid_extra_keys: an unknown key is refused, naming it."""
    data = unstructure(Config())
    data["eps_vv"] = 0.02
    with pytest.raises(cattrs.ClassValidationError) as info:
        structure(data, Config)
    assert "eps_vv" in str(cattrs.transform_error(info.value))


def test_tagged_union_named_at_construction() -> None:
    """A union named when the converter is built (like the Event union) round-trips through
    its tag, and the default converter is left as it was."""

    @attrs.frozen(kw_only=True)
    class Ping:
        n: int

    @attrs.frozen(kw_only=True)
    class Pong:
        n: int
        why: str

    union = Ping | Pong
    conv = make_converter(tagged_unions=(union,))
    assert conv.unstructure(Pong(n=1, why="x")) == {"n": 1, "why": "x"}  # concrete type: no tag
    data = conv.unstructure(Pong(n=1, why="x"), union)
    assert data["_type"] == "Pong"
    assert conv.structure(data, union) == Pong(n=1, why="x")
    assert "_type" not in unstructure(Pong(n=1, why="x"), union)  # nothing leaked elsewhere
