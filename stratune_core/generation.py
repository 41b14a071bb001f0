"""Candidate-generation calls: prompts in, raw candidates out, with one repair call for a reply
that holds no candidate block at all."""

from __future__ import annotations

from collections.abc import Sequence

from llm_cache.records import CallKind, Message, Request
from stratune_core.context import Env
from stratune_core.optimizer import ask, optimizer_request
from stratune_core.patches import RawCandidate, parse_candidates
from stratune_core.prompts import repair_prompt

CANDIDATE_SHAPE = "the <candidate> ... </candidate> block(s) in the format given above"


def _repair(first: Request, reply: str) -> Request:
    return Request(
        role=first.role,
        model=first.model,
        system=first.system,
        messages=(
            *first.messages,
            Message(role="assistant", content=reply or "(empty)"),
            Message.user(repair_prompt(reply, CANDIDATE_SHAPE)),
        ),
        max_tokens=first.max_tokens,
        draw=first.draw,
        kind=CallKind.CANDIDATE_GENERATION,
    )


def generate(env: Env, prompts: Sequence[tuple[str, int]]) -> tuple[tuple[RawCandidate, ...], ...]:
    """One generation call per (prompt, draw), all sent together; replies without any candidate
    block get one repair call (also sent together)."""
    requests = [
        optimizer_request(env, p, kind=CallKind.CANDIDATE_GENERATION, draw=d) for p, d in prompts
    ]
    replies = ask(env, requests)
    parsed = [parse_candidates(r) for r in replies]
    todo = [i for i, p in enumerate(parsed) if not p]
    if todo:
        repaired = ask(env, [_repair(requests[i], replies[i]) for i in todo])
        for i, text in zip(todo, repaired, strict=True):
            parsed[i] = parse_candidates(text)
    return tuple(tuple(p) for p in parsed)
