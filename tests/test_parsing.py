"""Reading the optimizer's JSON selection replies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratune_core.operators.parsing import WHY_LIMIT, extract_json_object, parse_selection
from stratune_core.records.enums import Form, Strategy

ALL_S = tuple(Strategy)
ALL_F = tuple(Form)


def test_plain_object():
    assert extract_json_object('{"strategy": "I2"}') == {"strategy": "I2"}


def test_object_inside_json_fence_with_prose_around():
    text = 'I think so.\n```json\n{"strategy": "I3", "form": "F3"}\n```\nDone.'
    assert extract_json_object(text) == {"strategy": "I3", "form": "F3"}


def test_two_objects_gives_the_last():
    text = 'First idea {"strategy": "I1"} but on reflection {"strategy": "I2", "form": "F1"}'
    assert extract_json_object(text) == {"strategy": "I2", "form": "F1"}


def test_braces_and_quotes_inside_strings_do_not_confuse_the_scanner():
    text = 'x {"why": "use {x} and \\"}\\" here", "n": {"a": [1, 2]}} trailing }'
    assert extract_json_object(text) == {"why": 'use {x} and "}" here', "n": {"a": [1, 2]}}


def test_nested_object_is_not_returned_on_its_own():
    # the inner object is part of the outer one, which is the last top-level object
    assert extract_json_object('{"a": {"strategy": "I1"}}') == {"a": {"strategy": "I1"}}


def test_valid_object_after_malformed_braces_in_prose():
    text = 'Reasoning {not json} and {"strategy": "I1", "why": "ok"}'
    assert extract_json_object(text) == {"strategy": "I1", "why": "ok"}


def test_valid_object_inside_malformed_outer_text_is_found():
    text = '{ oops {"strategy": "I3"} }'
    assert extract_json_object(text) == {"strategy": "I3"}


def test_trailing_comma_forgiven():
    assert extract_json_object('{"strategy": "I1", "form": null,}') == {
        "strategy": "I1",
        "form": None,
    }


@pytest.mark.parametrize("text", ["", "no json here", "{", '{"a": }', "[1, 2]", '{"a": 1'])
def test_nothing_parses_gives_none(text):
    assert extract_json_object(text) is None


def test_parse_selection_full_reply():
    reply = parse_selection(
        'Thinking...\n{"strategy": "I2", "form": "F3", "why": "failures share a process"}',
        allowed=ALL_S,
        forms=ALL_F,
    )
    assert reply is not None
    assert (reply.strategy, reply.form, reply.why) == (
        Strategy.I2,
        Form.F3,
        "failures share a process",
    )


def test_labels_are_case_and_space_tolerant_only():
    reply = parse_selection('{"strategy": " i3 ", "form": "f2"}', allowed=ALL_S, forms=ALL_F)
    assert reply is not None and (reply.strategy, reply.form) == (Strategy.I3, Form.F2)
    assert parse_selection('{"strategy": "2"}', allowed=ALL_S, forms=ALL_F) is None
    assert parse_selection('{"strategy": "I2 (refine)"}', allowed=ALL_S, forms=ALL_F) is None


def test_keys_are_case_insensitive():
    reply = parse_selection('{"Strategy": "I1", "Why": "w"}', allowed=ALL_S, forms=ALL_F)
    assert reply is not None and reply.strategy is Strategy.I1 and reply.why == "w"


def test_unknown_or_disallowed_strategy_is_unusable():
    assert parse_selection('{"strategy": "I4"}', allowed=ALL_S, forms=ALL_F) is None
    assert parse_selection('{"strategy": "I3"}', allowed=(Strategy.I1,), forms=ALL_F) is None
    assert parse_selection('{"form": "F1"}', allowed=ALL_S, forms=ALL_F) is None
    assert parse_selection("I choose I2.", allowed=ALL_S, forms=ALL_F) is None


@pytest.mark.parametrize("form", ['"F9"', "null", '"null"', '""', "3", '"rewrite"'])
def test_unknown_or_absent_form_becomes_none(form):
    reply = parse_selection(f'{{"strategy": "I3", "form": {form}}}', allowed=ALL_S, forms=ALL_F)
    assert reply is not None and reply.strategy is Strategy.I3 and reply.form is None


def test_form_not_offered_becomes_none():
    reply = parse_selection('{"strategy": "I2", "form": "F2"}', allowed=ALL_S, forms=(Form.F4,))
    assert reply is not None and reply.form is None


def test_why_truncated_and_missing_why_is_empty():
    reply = parse_selection(
        '{"strategy": "I1", "why": "' + "x" * 1000 + '"}', allowed=ALL_S, forms=ALL_F
    )
    assert reply is not None and reply.why == "x" * WHY_LIMIT
    reply = parse_selection('{"strategy": "I1"}', allowed=ALL_S, forms=ALL_F)
    assert reply is not None and reply.why == ""


def test_raw_newline_in_string_and_single_quotes_forgiven():
    assert extract_json_object('{"why": "two\nlines"}') == {"why": "two\nlines"}
    assert extract_json_object("{'strategy': 'I2', 'form': None}") == {
        "strategy": "I2",
        "form": None,
    }
    assert extract_json_object("{'strategy': __import__('os')}") is None


def test_match_braces_records_inner_objects_and_unclosed_ones():
    from stratune_core.operators.parsing import _match_braces

    assert _match_braces('{a{b}c"{"', 0) == {0: None, 2: 5}
    assert _match_braces("{x{y}}{z}", 0) == {0: 6, 2: 5}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}"\\ a', max_size=40))
def test_cached_brace_ends_equal_a_fresh_scan(text):
    """The cache in `_objects` relies on this: a `{` seen outside a string by one scan gets the
    same answer from a scan of its own."""
    from stratune_core.operators.parsing import _match_braces

    for start in (i for i, ch in enumerate(text) if ch == "{"):
        for j, end in _match_braces(text, start).items():
            assert _match_braces(text, j)[j] == end
