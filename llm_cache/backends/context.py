"""Fitting a request into a model's context window: prompt tokens + output tokens <= window.

Local models count the reply against the same window as the prompt, so a request asking for
more output than the window has left fails before anything is generated. Backends that know the
window and the prompt's length lower `max_tokens` to what fits (recorded in
`Response.clamped_max_tokens`, never in the request, so cache keys do not move); a prompt that
does not fit at all is one line naming the window it needs, never a silent truncation.

`context_tokens(backend)` is the shell's question to any backend: how many tokens its model
reads and writes in one call, or None when the backend does not know (hosted Claude models).
"""

from __future__ import annotations

import math

from llm_cache.backends.base import BackendBase
from llm_cache.errors import LLMFatalError
from llm_cache.records import Request, Role

# Tokens kept free beside prompt + reply: the chat template's end markers and the rounding of
# a count taken from another rendering of the same messages.
MARGIN = 16
# A reply shorter than this is no answer; below it the prompt counts as not fitting.
MIN_REPLY = 32
# An optimizer reply the core cannot use is sent back in one repair turn: the reply as the
# assistant's message, then a user message quoting (a prefix of) it again. So a first optimizer
# call leaves room for that turn: twice its reply, the repair's own words, and a reply to the
# repair of at least REPAIR_REPLY tokens. A request that already holds an assistant turn is
# that repair; nothing follows it, so it gets all the room (so does every target call).
REPAIR_WORDS = 128
REPAIR_REPLY = 512
_ROUND = 256


def _share(request: Request) -> tuple[int, int]:
    """(tokens reserved beside prompt and reply, how many times the reply must fit)."""
    follow_up = request.role is Role.OPTIMIZER and all(
        m.role != "assistant" for m in request.messages)
    if follow_up:
        return MARGIN + REPAIR_WORDS + REPAIR_REPLY + MARGIN, 2
    return MARGIN, 1


class ContextOverflowError(LLMFatalError):
    """The prompt leaves no room for a reply in the model's context; nothing was generated."""

    def __init__(self, message: str, *, prompt_tokens: int | None = None,
                 context: int | None = None, needed: int | None = None) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.context = context
        self.needed = needed


def needed_context(prompt_tokens: int, request: Request) -> int:
    """The smallest window (rounded up to 256) that holds the prompt and a minimal reply."""
    reserved, times = _share(request)
    return math.ceil((prompt_tokens + reserved + times * MIN_REPLY) / _ROUND) * _ROUND


def fit_max_tokens(request: Request, prompt_tokens: int, context: int, *, where: str,
                   setting: str, trained: int | None = None) -> int | None:
    """The max_tokens to send: None if the request's own value fits, else the lowered value.

    Raise ContextOverflowError when the prompt leaves less than a minimal reply. `where` names
    the call (backend, model, call kind); `setting` says how the user raises the window, e.g.
    "n_ctx in the model spec (?n_ctx=N)". `trained` is the model's training context, if known.
    """
    reserved, times = _share(request)
    room = (context - prompt_tokens - reserved) // times
    if room >= request.max_tokens:
        return None
    if room >= min(request.max_tokens, MIN_REPLY):
        return room
    raise too_long(where, prompt_tokens, context, request, setting=setting, trained=trained)


def too_long(where: str, prompt_tokens: int, context: int, request: Request, *, setting: str,
             trained: int | None = None) -> ContextOverflowError:
    needed = needed_context(prompt_tokens, request)
    beyond = (f"; the model was trained on {trained:,}, so shorten the prompt instead"
              if trained and needed > trained else "")
    return ContextOverflowError(
        f"{where}: the prompt is {prompt_tokens:,} tokens, which leaves no room for a reply in "
        f"a context of {context:,}; it needs at least {needed:,}: raise {setting}{beyond}",
        prompt_tokens=prompt_tokens, context=context, needed=needed,
    )


def context_tokens(backend: object) -> int | None:
    """The backend's context window in tokens, or None when it does not say (Claude through
    the API or Bedrock, scripted functions: `BackendBase.context_tokens`)."""
    if not isinstance(backend, BackendBase):
        return None
    value = backend.context_tokens()
    return int(value) if value is not None else None
