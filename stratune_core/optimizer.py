"""Requests to the optimizer LLM. Every call is a `Request` answered through `env.llm`."""

from __future__ import annotations

from collections.abc import Sequence

from llm_cache.records import CallKind, Message, Request, Role
from stratune_core.context import Env
from stratune_core.prompts import OPTIMIZER_SYSTEM


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


def ask(env: Env, requests: Sequence[Request]) -> tuple[str, ...]:
    """Send optimizer requests together (the shell runs them concurrently); texts in order."""
    return tuple(r.text for r in env.llm.complete(list(requests)))
