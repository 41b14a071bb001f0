"""Repair calls: one helper builds them for strategy selection and candidate generation, and a
blank optimizer reply is never sent back as the assistant turn (the Messages API answers a
whitespace-only text block with HTTP 400)."""

from __future__ import annotations

import json

import pytest

from llm_cache.backends.anthropic_backend import AnthropicBackend
from llm_cache.client import CachedLLM
from llm_cache.records import CallKind, Message, Request, Response, Role, Usage
from llm_cache.testing.fake_server import FakeAnthropicServer
from stratune_core.config.knobs import Config
from stratune_core.prompts.optimizer import BLANK_REPLY, repair_request
from stratune_core.prompts.templates import OPTIMIZER_SYSTEM
from stratune_core.round.run import run
from stratune_core.state.events import RunFinished
from tests.support import toy

BLANKS = ["", " ", "\n\n", " \t\r\n "]


class _Blank:
    """The toy optimizer, answering `kind` calls with a blank reply unless it is a repair."""

    def __init__(self, kind: CallKind, reply: str) -> None:
        self.base, self.kind, self.reply = toy.ToyOptimizer(style="good"), kind, reply

    def __call__(self, request: Request) -> Response:
        if request.kind is self.kind and len(request.messages) == 1:
            return Response(text=self.reply, usage=Usage(input_tokens=1, output_tokens=1))
        return self.base(request)


def _repairs(kind: CallKind, reply: str) -> list[Request]:
    llm = toy.InProcessLLM(optimizer=_Blank(kind, reply))
    run(Config(seed=1, max_rounds=4), toy.ToyTask(), llm)
    return [r for r in llm.calls if r.kind is kind and len(r.messages) > 1]


@pytest.mark.parametrize("kind", [CallKind.STRATEGY_SELECTION, CallKind.CANDIDATE_GENERATION])
@pytest.mark.parametrize("reply", BLANKS)
def test_a_blank_reply_is_repaired_with_a_non_blank_assistant_turn(kind, reply):
    repairs = _repairs(kind, reply)
    assert repairs, "the blank reply must be repaired"
    for request in repairs:
        assistant = request.messages[1]
        assert assistant.role == "assistant" and assistant.text() == BLANK_REPLY
        assert all(m.text().strip() for m in request.messages)


def test_the_repair_keeps_the_first_request_and_a_real_reply():
    first = Request(role=Role.OPTIMIZER, model="m", system="sys", messages=(Message.user("q"),),
                    max_tokens=9, draw=2, kind=CallKind.CANDIDATE_GENERATION)
    repair = repair_request(first, "  not a candidate \n", "the <candidate> block")
    assert (repair.role, repair.model, repair.system, repair.max_tokens, repair.draw,
            repair.kind) == (first.role, "m", "sys", 9, 2, CallKind.CANDIDATE_GENERATION)
    assert repair.messages[0] == first.messages[0]
    assert repair.messages[1].text() == "  not a candidate \n"  # a usable text is sent as it was
    assert repair.messages[2].role == "user" and "the <candidate> block" in repair.messages[2].text()


def test_a_blank_reply_over_the_real_sdk_is_repaired_not_refused(tmp_path):
    """Through the Anthropic SDK and the fake Messages API (which answers a whitespace-only text
    block with 400, as the real one does): every first generation reply is blank, and the run
    still finishes, each blank answered by a repair turn the API accepts."""
    respond_as_toy = toy.toy_responder()

    def respond(body):
        system = body.get("system", "")
        if isinstance(system, list):  # blocks, when the backend marks them for caching
            system = "".join(block.get("text", "") for block in system)
        first_generation = (body["model"] == toy.OPTIMIZER_MODEL and len(body["messages"]) == 1
                            and system == OPTIMIZER_SYSTEM)
        return " \n " if first_generation else respond_as_toy(body)

    config = Config(seed=5, target_model=toy.TARGET_MODEL, optimizer_model=toy.OPTIMIZER_MODEL,
                    max_rounds=3)
    with FakeAnthropicServer(responder=respond) as server:
        backends = {role: AnthropicBackend(model, api_key="test", base_url=server.url)
                    for role, model in ((Role.TARGET, toy.TARGET_MODEL),
                                        (Role.OPTIMIZER, toy.OPTIMIZER_MODEL))}
        with CachedLLM.open(tmp_path / "cache", backends=backends, mode="live") as llm:
            result = run(config, toy.ToyTask(n_train=48), llm)
        repairs = [r.body for r in server.requests if len(r.body["messages"]) == 3]
    assert isinstance(result.events[-1], RunFinished)
    assert repairs
    for body in repairs:
        assert body["messages"][1]["role"] == "assistant"
        assert json.dumps(body["messages"][1]["content"]).count(BLANK_REPLY) == 1
