"""Fitting the optimizer's prompts to a model's context window.

A local model (llama.cpp's `n_ctx`, vLLM's `max_model_len`) counts the prompt and the reply
against one window. The core builds every optimizer prompt to `Config.prompt_tokens`
(estimated tokens, on the safe side: `stratune_core/prompts/budget.py`); this lowers that budget
so that prompt, reply and chat template fit the window together. It runs before the manifest
is written, so the lowered budget is recorded in the run's config and a replay rebuilds the
same prompts without asking any backend.
"""

from __future__ import annotations

from stratune_core.config.knobs import Config
from stratune_core.records.errors import ConfigError

CHAT_MARGIN = 64  # chat-template tokens around the messages (role markers, BOS, turn ends)
MIN_OUTPUT = 256  # the least room a reply keeps when max_tokens is larger than the window allows
MIN_PROMPT = 1_000  # Config.prompt_tokens' lowest value: the fixed parts of the prompts


def output_reserve(config: Config, context_tokens: int) -> int:
    """The reply's share of the window: `optimizer_max_tokens` when it leaves room (the backend
    lowers a larger request to what is left), else a third of the window."""
    return min(config.optimizer_max_tokens, max(context_tokens // 3, MIN_OUTPUT))


def prompt_budget_for(config: Config, context_tokens: int) -> int:
    return context_tokens - output_reserve(config, context_tokens) - CHAT_MARGIN


def fit_to_context(config: Config, context_tokens: int | None, *, where: str = "optimizer") -> Config:
    """`config` with `prompt_tokens` lowered to what a context window of `context_tokens` leaves
    for the prompt; unchanged when the backend reports no window (None) or a larger one. A
    window too small for StraTune's prompts is a one-line ConfigError naming the size needed."""
    if context_tokens is None:
        return config
    budget = prompt_budget_for(config, context_tokens)
    if budget < MIN_PROMPT:
        needed = next(c for c in range(context_tokens, 1 << 24, 256)
                      if prompt_budget_for(config, c) >= MIN_PROMPT)
        raise ConfigError(
            f"{where}: a context window of {context_tokens:,} tokens leaves {max(budget, 0):,} "
            f"for prompts after {output_reserve(config, context_tokens):,} reply tokens; "
            f"StraTune's prompts need {MIN_PROMPT:,}: use a window of at least {needed:,} "
            "tokens (n_ctx) or lower optimizer_max_tokens", field="prompt_tokens")
    if budget >= config.prompt_tokens:
        return config
    return config.replace(prompt_tokens=budget)
