"""The disk store: JSON values with checksums, no eviction, corruption, concurrent writers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from llm_cache.errors import CacheCorruptError
from llm_cache.key import canonical_request, key_of_canonical
from llm_cache.records import Message, Request, Response, Role, Usage
from llm_cache.store import CacheStore, StoredEntry, decode_entry, encode_entry

ROOT = Path(__file__).resolve().parents[1]


def entry_for(question: str, answer: str = "4") -> tuple[str, StoredEntry]:
    request = Request(role=Role.TARGET, model="m", system="s",
                      messages=(Message.user(question),), max_tokens=8)
    canonical = canonical_request(request)
    response = Response(text=answer, stop_reason="end_turn", model="m-served",
                        usage=Usage(input_tokens=3, output_tokens=1, cache_write_tokens=2,
                                    cache_read_tokens=5))
    return key_of_canonical(canonical), StoredEntry(canonical=canonical, response=response,
                                                    backend="scripted", created_at=1.5)


@pytest.fixture
def store(tmp_path):
    s = CacheStore(tmp_path / "cache")
    yield s
    s.close()


def test_round_trip_keeps_every_response_field(store):
    key, entry = entry_for("q")
    store.put(key, entry)
    got = store.get(key)
    assert got == entry
    assert got.response.from_cache is True
    assert got.response.usage == entry.response.usage


def test_values_are_json_text_not_pickles(store):
    key, entry = entry_for("q")
    store.put(key, entry)
    raw = store.raw.get(key)
    assert isinstance(raw, str) and '"canonical"' in raw


def test_store_never_evicts(store):
    assert store.raw.eviction_policy == "none"


def test_a_missing_key_is_none(store):
    assert store.get("0" * 32) is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda v: v.replace('"4"', '"5"'),  # body edited, checksum stale
        lambda v: v[: len(v) // 2],  # torn write
        lambda v: "not a record",
        lambda v: "0000000000000000\n{}",
    ],
)
def test_damaged_values_are_detected(store, damage):
    key, entry = entry_for("q")
    store.raw.set(key, damage(encode_entry(entry)))
    with pytest.raises(CacheCorruptError, match=key):
        store.get(key)


def test_a_valid_value_with_good_checksum_but_missing_fields_is_corrupt():
    import xxhash

    body = '{"canonical": "x"}'
    value = f"{xxhash.xxh3_64_hexdigest(body.encode())}\n{body}"
    with pytest.raises(CacheCorruptError):
        decode_entry("k", value)


def test_entries_reports_corrupt_and_misplaced_entries_without_raising(store):
    key, entry = entry_for("a")
    other_key, other = entry_for("b")
    store.put(key, entry)
    store.put("f" * 32, other)  # stored under the wrong key
    store.raw.set(other_key, "garbage")
    seen = dict(store.entries())
    assert seen[key] == entry
    assert isinstance(seen["f" * 32], CacheCorruptError)
    assert isinstance(seen[other_key], CacheCorruptError)


def test_nearest_prefers_fewest_differing_fields(store):
    for q in ("What is 2+2?", "Name a colour."):
        store.put(*entry_for(q))
    request = Request(role=Role.TARGET, model="m", system="s",
                      messages=(Message.user("What is 2+3?"),), max_tokens=8)
    from llm_cache.key import key_document

    key, fields = store.nearest(key_document(request))
    assert fields == ("messages",)
    assert key == entry_for("What is 2+2?")[0]


WRITER = """
import sys
from tests.test_llm_store import entry_for
from llm_cache.store import CacheStore
store = CacheStore(sys.argv[1])
for i in range(int(sys.argv[3])):
    store.put(*entry_for(f"{sys.argv[2]}-{i}", answer=sys.argv[2]))
    store.put(*entry_for("shared", answer="same"))
store.close()
"""


def test_concurrent_writers_from_several_processes(tmp_path):
    directory = tmp_path / "shared-cache"
    CacheStore(directory).close()
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(directory), f"w{n}", "40"], cwd=ROOT)
        for n in range(4)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    store = CacheStore(directory)
    try:
        entries = dict(store.entries())
        assert len(entries) == 4 * 40 + 1
        assert not any(isinstance(e, CacheCorruptError) for e in entries.values())
        for n in range(4):
            key, expected = entry_for(f"w{n}-39", answer=f"w{n}")
            assert entries[key].response == expected.response
    finally:
        store.close()
