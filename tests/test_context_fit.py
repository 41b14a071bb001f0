"""Fitting max_tokens into a context window: the rule, and where a lowered value shows up
(the stored response, `stratune cache explain`, usage.json, the viewer's cost table)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from llm_cache.accounting import Ledger
from llm_cache.backends.context import (
    MARGIN,
    MIN_REPLY,
    REPAIR_REPLY,
    REPAIR_WORDS,
    ContextOverflowError,
    fit_max_tokens,
    needed_context,
)
from llm_cache.backends.function import FunctionBackend
from llm_cache.client import CachedLLM
from llm_cache.key import request_key
from llm_cache.records import CallKind, Message, Request, Response, Role, Usage
from llm_cache.store import StoredEntry, decode_entry, encode_entry
from replay.cli import main
from replay.viewer.costs import cost_table

FIRST_CALL_RESERVE = MARGIN + REPAIR_WORDS + REPAIR_REPLY + MARGIN


def req(role: Role = Role.TARGET, max_tokens: int = 1000, repair: bool = False) -> Request:
    messages = [Message.user("q")]
    if repair:
        messages += [Message(role="assistant", content="junk"), Message.user("again")]
    kind = CallKind.CANDIDATE_GENERATION if role is Role.OPTIMIZER else CallKind.TARGET_EXECUTION
    return Request(role=role, model="gguf:m@reset", system="s", messages=tuple(messages),
                   max_tokens=max_tokens, kind=kind)


def fit(request: Request, prompt: int, context: int, trained: int | None = None) -> int | None:
    return fit_max_tokens(request, prompt, context, where="m (kind)", setting="n_ctx",
                          trained=trained)


def test_a_target_reply_takes_what_the_prompt_leaves():
    assert fit(req(max_tokens=96), 500, 2048) is None  # fits: sent as asked
    assert fit(req(max_tokens=4000), 500, 2048) == 2048 - 500 - MARGIN
    assert fit(req(max_tokens=2048 - 500 - MARGIN), 500, 2048) is None


def test_a_first_optimizer_reply_leaves_room_for_its_repair_and_the_repair_gets_the_rest():
    first = fit(req(Role.OPTIMIZER, 16384), 987, 4096)
    assert first == (4096 - 987 - FIRST_CALL_RESERVE) // 2
    # the repair holds the reply twice plus its own words; what is left is at least REPAIR_REPLY
    repair_prompt = 987 + 2 * first + REPAIR_WORDS
    repair = fit(req(Role.OPTIMIZER, 16384, repair=True), repair_prompt, 4096)
    assert repair is not None and repair >= REPAIR_REPLY


def test_a_prompt_that_leaves_no_reply_is_one_line_naming_the_window():
    with pytest.raises(ContextOverflowError) as err:
        fit(req(Role.OPTIMIZER, 16384), 5265, 4096, trained=8192)
    message = str(err.value)
    assert "\n" not in message
    assert message == ("m (kind): the prompt is 5,265 tokens, which leaves no room for a reply in "
                       "a context of 4,096; it needs at least 6,144: raise n_ctx")
    assert err.value.needed == needed_context(5265, req(Role.OPTIMIZER)) == 6144
    # the needed window really leaves a minimal reply
    assert fit(req(Role.OPTIMIZER, 16384), 5265, 6144) >= MIN_REPLY
    with pytest.raises(ContextOverflowError, match="trained on 2,048, so shorten the prompt"):
        fit(req(max_tokens=100), 2040, 2048, trained=2048)


def test_small_requests_below_the_minimal_reply_still_fit_exactly():
    assert fit(req(max_tokens=8), 2048 - MARGIN - 8, 2048) is None
    with pytest.raises(ContextOverflowError):
        fit(req(max_tokens=8), 2048 - MARGIN - 7, 2048)


def clamped(text: str, limit: int | None) -> Response:
    return Response(text=text, model="gguf:m@reset", usage=Usage(input_tokens=5, output_tokens=3),
                    clamped_max_tokens=limit)


def test_the_store_keeps_the_lowered_value_and_leaves_other_entries_as_they_were():
    for limit in (None, 1222):
        entry = StoredEntry(canonical="{}", response=clamped("a", limit))
        encoded = encode_entry(entry)
        assert ("clamped_max_tokens" in encoded) is (limit is not None)
        assert decode_entry("k", encoded).response.clamped_max_tokens == limit


def test_usage_rows_count_lowered_calls_and_the_smallest_value():
    ledger = Ledger()
    r = req(Role.OPTIMIZER, 16384)
    ledger.paid(r, clamped("a", 1400), 0)
    ledger.hit(r, clamped("b", 1222))
    ledger.paid(req(), clamped("c", None), 0)
    rows = {row["kind"]: row for row in ledger.snapshot().to_dict()["rows"]}
    assert rows["candidate_generation"]["clamped_calls"] == 2
    assert rows["candidate_generation"]["clamped_min"] == 1222
    assert "clamped_calls" not in rows["target_execution"]  # usage.json unchanged otherwise
    total = ledger.snapshot().total()
    assert (total.clamped_calls, total.clamped_min) == (2, 1222)


def test_the_viewer_cost_table_says_which_calls_were_lowered():
    ledger = Ledger()
    r = req(Role.OPTIMIZER, 16384)
    ledger.paid(r, clamped("a", 1400), 0)
    ledger.paid(r, clamped("b", 1222), 0)
    buffer = io.StringIO()
    Console(file=buffer, width=80).print(cost_table(ledger.snapshot().to_dict()))
    text = " ".join(buffer.getvalue().split())
    assert "max_tokens lowered to fit the model's context: candidate_generation 2 of 2 calls " \
           "(down to 1,222)" in text
    plain = Ledger()
    plain.paid(req(), clamped("c", None), 0)
    buffer = io.StringIO()
    Console(file=buffer, width=80).print(cost_table(plain.snapshot().to_dict()))
    assert "lowered" not in buffer.getvalue()


def test_cache_explain_shows_the_lowered_value(tmp_path, capsys):
    ask = req(Role.OPTIMIZER, 16384)
    backend = FunctionBackend(lambda r: clamped("reply", 1222))
    with CachedLLM.open(tmp_path / "c", backends={Role.OPTIMIZER: backend}) as llm:
        llm.complete([ask])
    assert main(["cache", "--cache-dir", str(tmp_path / "c"), "explain", request_key(ask)]) == 0
    out = capsys.readouterr().out
    assert "max_tokens 1222 sent (asked 16384)" in out
