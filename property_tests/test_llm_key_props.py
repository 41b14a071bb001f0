"""Key properties: every output-affecting field changes the key; labels and transport don't."""

from __future__ import annotations

import json

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_cache.backends.anthropic_backend import build_params
from llm_cache.key import KEY_FIELDS, canonical_request, key_document, request_key
from llm_cache.records import (
    CallKind,
    ImageBlock,
    Message,
    Request,
    Role,
    TextBlock,
    ToolSpec,
)

text = st.text(max_size=40)
blocks = st.one_of(
    text.map(lambda t: TextBlock(text=t)),
    st.builds(
        ImageBlock,
        media_type=st.sampled_from(["image/png", "image/jpeg"]),
        data=st.text(alphabet="ABCDEFGHabcdefgh0123456789+/", min_size=4, max_size=16),
    ),
)
messages = st.lists(
    st.builds(
        Message,
        role=st.sampled_from(["user", "assistant"]),
        content=st.lists(blocks, min_size=1, max_size=3).map(tuple),
    ),
    min_size=1,
    max_size=3,
).map(tuple)
tool_specs = st.builds(
    ToolSpec,
    name=st.text(min_size=1, max_size=10),
    description=text,
    schema=st.sampled_from(['{"type": "object"}', '{"properties": {}, "type": "object"}']),
)
requests = st.builds(
    Request,
    role=st.sampled_from(list(Role)),
    model=st.text(min_size=1, max_size=20),
    system=text,
    messages=messages,
    max_tokens=st.integers(1, 10_000),
    temperature=st.one_of(st.none(), st.floats(0, 2, allow_nan=False)),
    stop=st.lists(st.text(min_size=1, max_size=5), max_size=3).map(tuple),
    draw=st.integers(0, 50),
    tools=st.lists(tool_specs, max_size=2).map(tuple),
    kind=st.sampled_from(list(CallKind)),
)


def _changed(request: Request, name: str, data: st.DataObject) -> Request:
    """A copy of `request` whose field `name` has a different value."""
    current = getattr(request, name)
    if name == "role":
        value = Role.OPTIMIZER if current is Role.TARGET else Role.TARGET
    elif name == "model":
        value = current + "x"
    elif name == "system":
        value = current + data.draw(st.text(min_size=1, max_size=5))
    elif name == "messages":
        value = (*current, Message.user(data.draw(text)))
    elif name == "max_tokens":
        value = current + data.draw(st.integers(1, 100))
    elif name == "temperature":
        value = 0.5 if current is None else data.draw(st.sampled_from([None, current + 0.25]))
    elif name == "stop":
        value = (*current, data.draw(st.text(min_size=1, max_size=5)))
    elif name == "tools":
        value = (*current, data.draw(tool_specs))
    else:
        value = current + data.draw(st.integers(1, 5))
    return attrs.evolve(request, **{name: value})


@settings(max_examples=60, deadline=None)
@given(requests, st.sampled_from(KEY_FIELDS), st.data())
def test_every_output_affecting_field_changes_the_key(request, name, data):
    assert request_key(_changed(request, name, data)) != request_key(request)


@settings(max_examples=60, deadline=None)
@given(requests, st.sampled_from(list(CallKind)))
def test_the_call_kind_does_not_change_the_key(request, kind):
    assert request_key(attrs.evolve(request, kind=kind)) == request_key(request)


@settings(max_examples=60, deadline=None)
@given(requests)
def test_the_key_document_holds_exactly_the_key_fields(request):
    # `tools` is left out when none are offered, so that every tool-less key stays as it was.
    expected = {"v", *KEY_FIELDS} - (set() if request.tools else {"tools"})
    assert set(key_document(request)) == expected
    assert json.loads(canonical_request(request)) == key_document(request)


@settings(max_examples=60, deadline=None)
@given(requests, st.integers(0, 10_000), st.integers(0, 10_000))
def test_cache_control_and_the_sent_model_name_only_touch_the_wire(request, min_a, min_b):
    # The prompt-cache marker and the provider's model spelling depend on backend settings;
    # the key is a function of the request alone, so differently configured backends (other
    # credentials, base_url, provider) share every entry. The end-to-end version of this runs
    # against the fake server in tests/test_llm_anthropic.py (Bedrock record, API replay).
    a = build_params(request, send_model="alias-a", cache_min_tokens=min_a)
    b = build_params(request, send_model="bedrock.id-b", cache_min_tokens=min_b)
    for params in (a, b):
        for block in params.get("system", []):
            block.pop("cache_control", None)
        params.pop("model")
    assert a == b
    assert "cache_control" not in canonical_request(request)
