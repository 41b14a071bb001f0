"""Candidate-generation calls: prompts in, raw candidates out, with one repair call for a reply
that holds no usable candidate block: none at all, or only blocks that cannot be read as a
patch (an edit without its <old> text, say). The repair turn says what was wrong with the
first of them, which is what a weak optimizer needs to fix the form of a sound change."""

from __future__ import annotations

from collections.abc import Sequence

from llm_cache.records import CallKind
from stratune_core.operators.patches import RawCandidate, parse_candidates
from stratune_core.prompts.budget import turn_budget
from stratune_core.prompts.optimizer import ask, optimizer_request, repair_request
from stratune_core.prompts.templates import OPTIMIZER_SYSTEM
from stratune_core.state.context import Env

CANDIDATE_SHAPE = "the <candidate> ... </candidate> block(s) in the format given above"


def generation_budget(env: Env) -> int:
    """The tokens a generation prompt may use (the system prompt and a repair turn aside)."""
    return turn_budget(env.config.prompt_tokens, OPTIMIZER_SYSTEM)


def _usable(raws: Sequence[RawCandidate]) -> bool:
    return any(r.patch is not None for r in raws)


def _why(raws: Sequence[RawCandidate]) -> str:
    """What made a reply unusable: its first block's error, or that it had no block."""
    return next((r.error for r in raws if r.error), "") if raws else "no <candidate> block"


def pick(raws: Sequence[RawCandidate], n: int) -> tuple[RawCandidate, ...]:
    """The first `n` blocks a reply offers, readable ones first: a malformed block beside a
    sound one is a slip of the pen, not the candidate the optimizer meant."""
    return (tuple(r for r in raws if r.patch is not None) + tuple(r for r in raws if r.patch is None))[:n]


def generate(env: Env, prompts: Sequence[tuple[str, int]]) -> tuple[tuple[RawCandidate, ...], ...]:
    """One generation call per (prompt, draw), all sent together; replies without a usable
    candidate block get one repair call (also sent together). A repair that is no better keeps
    the first reply's blocks, so the events name the first error."""
    requests = [
        optimizer_request(env, p, kind=CallKind.CANDIDATE_GENERATION, draw=d) for p, d in prompts
    ]
    replies = ask(env, requests)
    parsed = [parse_candidates(r) for r in replies]
    todo = [i for i, p in enumerate(parsed) if not _usable(p)]
    if todo:
        budget = env.config.prompt_tokens
        repaired = ask(env, [repair_request(requests[i], replies[i], CANDIDATE_SHAPE, budget=budget,
                                            why=_why(parsed[i]))
                             for i in todo])
        for i, text in zip(todo, repaired, strict=True):
            again = parse_candidates(text)
            if _usable(again) or not parsed[i]:
                parsed[i] = again
    return tuple(tuple(p) for p in parsed)
