"""Requests to the optimizer LLM. Every call is a `Request` answered through `env.llm`."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from llm_cache.records import CallKind, Message, Request, Role
from stratune_core.prompts.budget import clip_to_tokens, estimate_tokens
from stratune_core.prompts.templates import OPTIMIZER_SYSTEM, repair_prompt
from stratune_core.state.context import Env

BLANK_REPLY = "(empty)"  # stands in for a blank reply in a repair turn


def optimizer_request(
    env: Env, prompt: str, *, kind: CallKind, draw: int = 0, system: str = OPTIMIZER_SYSTEM
) -> Request:
    return Request(
        role=Role.OPTIMIZER,
        model=env.config.optimizer_model,
        system=system,
        messages=(Message.user(prompt),),
        max_tokens=env.config.optimizer_max_tokens,
        draw=draw,
        kind=kind,
    )


def repair_request(first: Request, reply: str, shape: str, *, budget: int | None = None,
                   why: str = "") -> Request:
    """`first` continued by its unusable `reply` and a request to answer again as `shape`.

    Everything else (model, system, draw, kind) is `first`'s. A blank or whitespace-only reply
    is sent as "(empty)": the Messages API refuses a whitespace-only text block with HTTP 400.
    With a prompt `budget` (`Config.prompt_tokens`), the reply is clipped so that the whole
    request fits it: first prompts leave `prompt_budget.repair_room` for this.
    """
    said = reply if reply.strip() else BLANK_REPLY
    again = Message.user(repair_prompt(shape, why))
    if budget is not None:
        used = estimate_tokens(first.system) + estimate_tokens(again.text()) + sum(
            estimate_tokens(m.text()) for m in first.messages)
        said = clip_to_tokens(said, max(budget - used, MIN_REPLY_TOKENS))
    messages = (*first.messages, Message(role="assistant", content=said), again)
    return attrs.evolve(first, messages=messages)


MIN_REPLY_TOKENS = 32  # a repair turn always shows the start of what went wrong


def ask(env: Env, requests: Sequence[Request]) -> tuple[str, ...]:
    """Send optimizer requests together (the shell runs them concurrently); texts in order."""
    return tuple(r.text for r in env.llm.complete(list(requests)))
