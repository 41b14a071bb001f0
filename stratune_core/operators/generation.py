"""Candidate-generation calls: prompts in, raw candidates out, with one repair call for a reply
that holds no candidate block at all."""

from __future__ import annotations

from collections.abc import Sequence

from llm_cache.records import CallKind
from stratune_core.operators.optimizer import ask, optimizer_request, repair_request
from stratune_core.operators.patches import RawCandidate, parse_candidates
from stratune_core.prompts.budget import turn_budget
from stratune_core.prompts.templates import OPTIMIZER_SYSTEM
from stratune_core.round.context import Env

CANDIDATE_SHAPE = "the <candidate> ... </candidate> block(s) in the format given above"


def generation_budget(env: Env) -> int:
    """The tokens a generation prompt may use (the system prompt and a repair turn aside)."""
    return turn_budget(env.config.prompt_tokens, OPTIMIZER_SYSTEM)


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
        budget = env.config.prompt_tokens
        repaired = ask(env, [repair_request(requests[i], replies[i], CANDIDATE_SHAPE, budget=budget)
                             for i in todo])
        for i, text in zip(todo, repaired, strict=True):
            parsed[i] = parse_candidates(text)
    return tuple(tuple(p) for p in parsed)
